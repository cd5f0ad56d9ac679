/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the memory.tmpfs tests: a parent cgroup with the
 * memory controller for its children, file I/O that reports errno, and the
 * invariants of memory.tmpfs (the series'
 * Documentation/admin-guide/cgroup-v2.rst), checked after every step. The
 * definitions are in tmpfs_util.c, linked into every test program.
 */
#ifndef TMPFS_UTIL_H
#define TMPFS_UTIL_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "cgroup/cgroup_util.h"

#define KiB 1024L
#define MiB (1024L * 1024L)
#define HPAGE (2 * MiB)		/* a PMD-sized huge folio */

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE 101
#endif

#define KHUGEPAGED "/sys/kernel/mm/transparent_hugepage/khugepaged/"

/* The swap device of the guest (zram). */
#define SWAP_DEV "/dev/zram0"

/* The pages a CPU may charge to memory.tmpfs ahead of use (MEMCG_CHARGE_BATCH). */
#define TMPFS_BATCH_PAGES 64

/* The system's page size: set by the runner (or by a main() of its own). */
extern long page_size;

/* BYTES rounded up to whole pages. */
long pages_of(long bytes);

/* The cgroup's memory.tmpfs.current, or -1 when it cannot be read. */
long tmpfs_current(const char *cg);

/* Fail (return -1, printing both values) unless FILE of CG reads WANT. */
int expect_long(const char *cg, const char *file, long want, const char *when);

/* Fail unless a peak GOT, read from FILE, is within the spec's bound of WANT (LIMIT: -1, none). */
int expect_peak_value(long got, long want, long limit, const char *file, const char *when);

/* expect_peak_value() of CG's memory.tmpfs.peak. */
int expect_peak(const char *cg, long want, long limit, const char *when);

/* CG's memory.tmpfs.peak opened with FLAGS (and O_CLOEXEC): the fd, or -1. */
int open_peak(const char *cg, int flags);

/* CG's memory.tmpfs.peak opened and reset through that fd: the fd, or -1. */
int reset_peak(const char *cg);

/* Fail unless CG's memory.tmpfs.current reads WANT. */
int expect_tmpfs(const char *cg, long want, const char *when);

/* Fail unless CG's memory.tmpfs.events reads max MAX and fail FAIL. */
int expect_events(const char *cg, long max, long fail, const char *when);

/* expect_events(), and inodes_max IMAX and inodes_fail IFAIL too. */
int expect_inode_events(const char *cg, long max, long fail, long imax, long ifail,
			const char *when);

/* Invariant 4: tmpfs data is memory or swap of the cgroup. */
int check_within_memory(const char *cg, const char *when);

/* Invariant 2: a parent holds its children's charges plus its own. */
int check_parent_sum(const char *parent, const char **children, int n, long own,
		     const char *when);

/*
 * Each step of a body run by cg_run(): run the operation, then require
 * this memory.tmpfs.current of the body's cgroup and invariant 4.
 */
#define STEP(op, want) do {						\
	if (op) {							\
		ksft_print_msg("%s failed: %s\n", #op, strerror(errno)); \
		return -1;						\
	}								\
	if (expect_tmpfs(cgroup, (want), #op) ||			\
	    check_within_memory(cgroup, #op))				\
		return -1;						\
} while (0)

/* The byte write_pattern() writes at OFF from the start of its write. */
#define PATTERN_BYTE(off) ((char)(((off) % (64 * 1024)) * 7 + 1))

/* Write LEN bytes of the pattern at OFF: the bytes written, or -errno when none could be. */
long write_pattern(int fd, long off, long len);

/* Create PATH and write LEN bytes of the pattern into it; 0 on success. */
int write_file(const char *path, long len);

/* Check the pattern of write_pattern() over [0, LEN) of PATH. */
int verify_file(const char *path, long len);

/*
 * A write by a task in the cgroup (cg_run(cg, write_req_body, &req)):
 * LEN bytes at OFF into PATH (created if needed); exactly WANT of them
 * must be written, and when WANT < LEN the write must stop with EDQUOT.
 */
struct write_req {
	const char *path;
	long off, len, want;
};

/* The body of a struct write_req, run in the cgroup (or by the caller). */
int write_req_body(const char *cgroup, void *arg);

/* A write_req_body() by a task of CG. */
int write_as(const char *cg, const char *path, long off, long len, long want);

/* A parent cgroup that enables the memory controller for its children. */
char *make_parent(const char *root, const char *name);

/* A child cgroup NAME of PARENT, or NULL. */
char *make_child(const char *parent, const char *name);

/* Remove the cgroup CG (if any) and free its name. */
void remove_cgroup(char *cg);

/* Remove the cgroup *CG now (its charges stay with its ancestors), free it, NULL it; 0 or -1. */
int destroy_cgroup(char **cg);

/* The cgroups of one case: a parent, and a child "writer" that runs it. */
struct setup {
	char *parent, *cg;
};

/* A parent and a child cgroup whose memory.tmpfs.max is MAX. */
int setup(struct setup *s, const char *root, const char *name, const char *max);

/* setup(), then BODY(cg, ARG) run by a task of the child: 0 when both succeed. */
int setup_run(struct setup *s, const char *root, const char *name, const char *max,
	      int (*body)(const char *cgroup, void *arg), void *arg);

/* Unlink PATH, remove the cgroups; a passed case must leave them at 0. */
int teardown(struct setup *s, const char *path, int ret);

/* A whole case: setup_run(), then teardown(PATH); KSFT_PASS or KSFT_FAIL. */
int run_setup_case(const char *root, const char *name, const char *max,
		   int (*body)(const char *cgroup, void *arg), void *arg, const char *path);

/* A tmpfs mounted with OPTS on a new directory of TEMPLATE (mkdtemp); 0 or -1. */
int mount_tmpfs_dir(char *template, const char *opts);

/* Unmount and remove a directory of mount_tmpfs_dir(); nothing when DIR is "". */
void umount_tmpfs_dir(char *dir);

/* As uid ID (already), enter a new user and mount namespace, ID root in it, / private. */
int enter_userns(unsigned int id);

/* Become uid 65534, then enter_userns(). */
int enter_userns_as_nobody(void);

/* Write LEN bytes of BUF to FILE of CG in one write(); 0 or errno. */
int raw_write(const char *cg, const char *file, const char *buf, size_t len);

/* One IORING_OP_WRITE through a raw io_uring: bytes written or -errno. */
long uring_write(int fd, const void *buf, unsigned int len, off_t off);

/* Run on CPU only, or on every online CPU when CPU is -1. */
int pin_cpu(int cpu);

/* The number after KEY and SEP at the start of a line of FILE (a /proc file), or -1. */
long proc_key_long(const char *file, const char *key, char sep);

/* A counter of /proc/vmstat, or -1. */
long vmstat(const char *key);

/* The page frame behind ADDR of this process, 0 if none. */
unsigned long pfn_of(void *addr);

/* A HPAGE-aligned shared mapping of [0, HPAGE) of FD with PROT, or NULL. */
char *map_huge_aligned(int fd, int prot);

/* Write VAL to the khugepaged tunable NAME, keeping the old value in OLD (N bytes) unless NULL. */
int khugepaged_set(const char *name, const char *val, char *old, size_t n);

/* cgroup.stat nr_dying_descendants of CG. */
long nr_dying(const char *cg);

/* memory.stat KEY ("shmem ") of CG, the per-cpu updates flushed first. */
long memcg_stat(const char *cg, const char *key);

/* lru_add_drain_all(), through vm.compact_memory. */
void drain_lru_batches(void);

/* Take every CPU's memcg charge stock over with a charge of a scratch cgroup. */
void flush_charge_stocks(void);

/* Wait, up to 5 s, for nr_dying_descendants of CG to come back to BEFORE. */
int wait_dying(const char *cg, long before, const char *when);

/* swapoff and swapon SWAP_DEV: the per-cpu swap slot caches drained. */
int drain_swap_slots(void);

/* Return the charges CG's memcg holds in the per-cpu stocks (memory.high). */
int drain_charge_stock(const char *cg);

/* memory.reclaim on CG until its tmpfs data is in swap, at least BYTES of it. */
int push_to_swap(const char *cg, long bytes);

/* memory.tmpfs.events of a cgroup, watched through inotify and poll(POLLPRI). */
struct events_watch {
	int ino, fd;
};

#define EVENTS_WATCH_INIT { .ino = -1, .fd = -1 }

/* Start watching CG's memory.tmpfs.events; 0 or -1. */
int watch_events(struct events_watch *w, const char *cg);

/* Fail unless both the inotify and the poll(POLLPRI) of W woke (5 s each). */
int expect_events_wakeup(struct events_watch *w);

/* Close what watch_events() opened. */
void unwatch_events(struct events_watch *w);

/* 1 when a cgroup NAME made under ROOT has memory.tmpfs.current, 0 if not, -1 on error. */
int has_memory_tmpfs(const char *root, const char *name);

/* What a case needs of the kernel; without it, the case is skipped, saying why. */
enum {
	NEEDS_THP = 1,		/* transparent huge pages (off on PREEMPT_RT) */
	NEEDS_STOCK = 2,	/* the per-CPU tmpfs stock (not on PREEMPT_RT) */
};

/* A case of a test program: its function (a KSFT_ result), its KTAP name, its needs. */
struct tmpfs_test {
	int (*fn)(const char *root);
	const char *name;
	unsigned int needs;
};

#define TMPFS_TEST(x) { x, #x, 0 }
#define TMPFS_TEST_NEEDS(x, needs) { x, #x, needs }

/* Whether the kernel has transparent huge pages (CONFIG_TRANSPARENT_HUGEPAGE). */
bool kernel_has_thp(void);

/* Whether the kernel is PREEMPT_RT (its uname version says so): no tmpfs stock. */
bool kernel_is_rt(void);

/* main() of a memcg test program: KTAP, and no cgroup may stay dying. */
int run_memcg_tests(struct tmpfs_test *tests, int n);

/* main() of every memory.tmpfs test program: run_memcg_tests() on a kernel with memory.tmpfs. */
int run_tmpfs_tests(struct tmpfs_test *tests, int n);

#endif /* TMPFS_UTIL_H */
