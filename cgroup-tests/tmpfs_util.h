/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the memory.tmpfs tests: a parent cgroup with the
 * memory controller for its children, file I/O that reports errno, and
 * the invariants of the spec, checked after every step.
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

#include <linux/io_uring.h>

#include "kselftest.h"
#include "cgroup/cgroup_util.h"

#define KiB 1024L
#define MiB (1024L * 1024L)

static long page_size;

static inline long pages_of(long bytes)
{
	return (bytes + page_size - 1) / page_size * page_size;
}

/* The cgroup's memory.tmpfs.current, or -1 when it cannot be read. */
static inline long tmpfs_current(const char *cg)
{
	return cg_read_long(cg, "memory.tmpfs.current");
}

/* Fail (return -1, printing both values) unless FILE of CG reads WANT. */
static inline int expect_long(const char *cg, const char *file, long want,
			      const char *when)
{
	long got = cg_read_long(cg, file);

	if (got == want)
		return 0;
	ksft_print_msg("%s: %s/%s is %ld, expected %ld\n", when, cg, file,
		       got, want);
	return -1;
}

/*
 * memory.tmpfs.peak may count the pages CPUs charged ahead of use: at most
 * 64 a CPU above the data's own peak, and never above a limit set before
 * (spec, "Cost and exactness"). GOT, read from FILE, against the data's
 * peak WANT and LIMIT (-1: none).
 */
#define TMPFS_BATCH_PAGES 64
static inline int expect_peak_value(long got, long want, long limit,
				    const char *file, const char *when)
{
	long hi = want + TMPFS_BATCH_PAGES * sysconf(_SC_NPROCESSORS_ONLN) *
		  page_size;

	if (limit >= 0 && hi > limit)
		hi = limit;
	if (got >= want && got <= hi)
		return 0;
	ksft_print_msg("%s: %s is %ld, expected the data's peak %ld plus at most 64 pages a CPU charged ahead of use, up to %ld\n",
		       when, file, got, want, hi);
	return -1;
}

static inline int expect_peak(const char *cg, long want, long limit,
			      const char *when)
{
	char file[PATH_MAX];

	snprintf(file, sizeof(file), "%s/memory.tmpfs.peak", cg);
	return expect_peak_value(cg_read_long(cg, "memory.tmpfs.peak"), want,
				 limit, file, when);
}

static inline int expect_tmpfs(const char *cg, long want, const char *when)
{
	return expect_long(cg, "memory.tmpfs.current", want, when);
}

/* Invariant 4: tmpfs data is memory or swap of the cgroup. */
static inline int check_within_memory(const char *cg, const char *when)
{
	long tmpfs = tmpfs_current(cg);
	long mem = cg_read_long(cg, "memory.current");
	long swap = cg_read_long(cg, "memory.swap.current");

	if (tmpfs < 0 || mem < 0 || swap < 0 || tmpfs > mem + swap) {
		ksft_print_msg("%s: %s: tmpfs.current %ld > memory.current %ld + swap.current %ld\n",
			       when, cg, tmpfs, mem, swap);
		return -1;
	}
	return 0;
}

/* Invariant 2: a parent holds its children's charges plus its own. */
static inline int check_parent_sum(const char *parent, const char **children,
				   int n, long own, const char *when)
{
	long sum = own;
	int i;

	for (i = 0; i < n; i++)
		sum += tmpfs_current(children[i]);
	return expect_tmpfs(parent, sum, when);
}

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

/*
 * Write LEN bytes of a pattern at OFF; returns the bytes written, or
 * -errno when none could be. A write that stops early leaves errno set.
 */
static inline long write_pattern(int fd, long off, long len)
{
	static char chunk[64 * 1024];
	long done = 0;

	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (char)(i * 7 + 1);
	while (done < len) {
		long n = len - done;
		ssize_t w;

		if (n > (long)sizeof(chunk))
			n = sizeof(chunk);
		w = pwrite(fd, chunk, n, off + done);
		if (w < 0)
			return done ? done : -errno;
		if (w == 0)
			break;
		done += w;
	}
	return done;
}

/* Create PATH and write LEN bytes into it; 0 on success. */
static inline int write_file(const char *path, long len)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	long w;

	if (fd < 0) {
		ksft_print_msg("open %s: %s\n", path, strerror(errno));
		return -1;
	}
	w = write_pattern(fd, 0, len);
	close(fd);
	if (w != len) {
		ksft_print_msg("write %s: %ld of %ld bytes (%s)\n", path,
			       w < 0 ? 0 : w, len, w < 0 ? strerror(-w) : "short");
		return -1;
	}
	return 0;
}

/* Check the pattern of write_pattern() over [0, LEN) of PATH. */
static inline int verify_file(const char *path, long len)
{
	char buf[4096];
	long off = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t r = pread(fd, buf, sizeof(buf), off);

		if (r <= 0) {
			close(fd);
			return -1;
		}
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] != (char)(((off + i) % (64 * 1024)) * 7 + 1)) {
				ksft_print_msg("%s: byte %ld differs\n", path, off + i);
				close(fd);
				return -1;
			}
		}
		off += r;
	}
	close(fd);
	return 0;
}

/*
 * A write by a task in the cgroup (cg_run(cg, write_req_body, &req)):
 * LEN bytes at OFF into PATH (created if needed); exactly WANT of them
 * must be written, and when WANT < LEN the write must stop with EDQUOT.
 */
struct write_req {
	const char *path;
	long off, len, want;
};

static inline int write_req_body(const char *cgroup, void *arg)
{
	const struct write_req *r = arg;
	int fd = open(r->path, O_CREAT | O_WRONLY, 0644);
	long w;

	if (fd < 0) {
		ksft_print_msg("open %s: %s\n", r->path, strerror(errno));
		return -1;
	}
	errno = 0;
	w = write_pattern(fd, r->off, r->len);
	if (w < 0) {
		errno = -w;
		w = 0;
	}
	close(fd);
	if (w != r->want || (w < r->len && errno != EDQUOT)) {
		ksft_print_msg("%s: wrote %ld of %ld bytes (errno %d %s), expected %ld%s\n",
			       r->path, w, r->len, errno, strerror(errno), r->want,
			       r->want < r->len ? " then EDQUOT" : "");
		return -1;
	}
	return 0;
}

static inline int write_as(const char *cg, const char *path, long off,
			   long len, long want)
{
	struct write_req r = { path, off, len, want };

	return cg_run(cg, write_req_body, &r);
}

/* A parent cgroup that enables the memory controller for its children. */
static inline char *make_parent(const char *root, const char *name)
{
	char *cg = cg_name(root, name);

	if (!cg)
		return NULL;
	if (cg_create(cg) || cg_write(cg, "cgroup.subtree_control", "+memory")) {
		cg_destroy(cg);
		free(cg);
		return NULL;
	}
	return cg;
}

static inline char *make_child(const char *parent, const char *name)
{
	char *cg = cg_name(parent, name);

	if (!cg)
		return NULL;
	if (cg_create(cg)) {
		free(cg);
		return NULL;
	}
	return cg;
}

static inline void remove_cgroup(char *cg)
{
	if (cg) {
		cg_destroy(cg);
		free(cg);
	}
}

/* The cgroups of one case: a parent, and a child "writer" that runs it. */
struct setup {
	char *parent, *cg;
};

/* A parent and a child cgroup whose memory.tmpfs.max is MAX. */
static inline int setup(struct setup *s, const char *root, const char *name,
		 const char *max)
{
	s->parent = make_parent(root, name);
	s->cg = s->parent ? make_child(s->parent, "writer") : NULL;
	if (!s->cg)
		return -1;
	return cg_write(s->cg, "memory.tmpfs.max", (char *)max);
}

/*
 * Unlink PATH (if any) and remove the cgroups; a case that passed must
 * leave memory.tmpfs.current at 0 in both.
 */
static inline int teardown(struct setup *s, const char *path, int ret)
{
	if (path)
		unlink(path);
	if (ret == KSFT_PASS && s->cg &&
	    (expect_tmpfs(s->cg, 0, "end") || expect_tmpfs(s->parent, 0, "end")))
		ret = KSFT_FAIL;
	remove_cgroup(s->cg);
	remove_cgroup(s->parent);
	return ret;
}

/* Map ID outside to 0 inside a new user namespace (uid_map, gid_map). */
static inline int write_id_map(const char *file, unsigned int id)
{
	char buf[64];
	int fd = open(file, O_WRONLY);
	int len = snprintf(buf, sizeof(buf), "0 %u 1\n", id);
	int ret = fd >= 0 && write(fd, buf, len) == len ? 0 : -1;

	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * As uid 65534, enter a new user and mount namespace as a container
 * runtime makes them (setgroups denied, 65534 mapped to 0 inside) and
 * make / private in it, ready for a mount of its own. 0, or -1 with a
 * message.
 */
static inline int enter_userns_as_nobody(void)
{
	int fd;

	/* dropping root clears "dumpable", which owns /proc/self to root */
	if (setgid(65534) || setuid(65534) || prctl(PR_SET_DUMPABLE, 1)) {
		ksft_print_msg("dropping root: %s\n", strerror(errno));
		return -1;
	}
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		ksft_print_msg("unshare: %s\n", strerror(errno));
		return -1;
	}
	fd = open("/proc/self/setgroups", O_WRONLY);
	if (fd < 0 || write(fd, "deny", 4) != 4 ||
	    write_id_map("/proc/self/uid_map", 65534) ||
	    write_id_map("/proc/self/gid_map", 65534)) {
		ksft_print_msg("setting up the user namespace: %s\n", strerror(errno));
		return -1;
	}
	close(fd);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		ksft_print_msg("making / private: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* Write LEN bytes of BUF to FILE of CG in one write(); 0 or errno. */
static inline int raw_write(const char *cg, const char *file, const char *buf,
			    size_t len)
{
	char path[PATH_MAX];
	ssize_t w;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	w = write(fd, buf, len);
	if (w < 0)
		err = errno;
	else if ((size_t)w != len)
		err = -1;	/* a short write: no such case here */
	close(fd);
	return err;
}

/*
 * One IORING_OP_WRITE through a raw io_uring; returns the cqe result:
 * bytes written or -errno.
 */
static inline long uring_write(int fd, const void *buf, unsigned int len, off_t off)
{
	struct io_uring_params par = { 0 };
	struct io_uring_sqe *sqes, *sqe;
	struct io_uring_cqe *cqe;
	unsigned int *sq_tail, *sq_array, *cq_head;
	size_t sq_len, cq_len;
	void *sq, *cq;
	long res;
	int ring;

	ring = syscall(__NR_io_uring_setup, 1, &par);
	if (ring < 0)
		return -1000 - errno;
	sq_len = par.sq_off.array + par.sq_entries * sizeof(unsigned int);
	cq_len = par.cq_off.cqes + par.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		  IORING_OFF_CQ_RING);
	sqes = mmap(NULL, par.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		close(ring);
		return -2000;
	}
	sq_tail = (unsigned int *)((char *)sq + par.sq_off.tail);
	sq_array = (unsigned int *)((char *)sq + par.sq_off.array);
	cq_head = (unsigned int *)((char *)cq + par.cq_off.head);
	sqe = &sqes[0];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = len;
	sqe->off = off;
	sq_array[0] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0) {
		close(ring);
		return -3000 - errno;
	}
	cqe = (struct io_uring_cqe *)((char *)cq + par.cq_off.cqes);
	res = cqe[*cq_head & (par.cq_entries - 1)].res;
	close(ring);
	return res;
}

/* Run on CPU only, or on every online CPU when CPU is -1. */
static inline int pin_cpu(int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	for (long i = 0; i < n; i++)
		if (cpu < 0 || i == cpu)
			CPU_SET(i, &set);
	if (!sched_setaffinity(0, sizeof(set), &set))
		return 0;
	ksft_print_msg("sched_setaffinity to cpu %d: %s\n", cpu, strerror(errno));
	return -1;
}

/* A counter of /proc/vmstat, or -1. */
static inline long vmstat(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long val = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ' ') {
			val = atol(line + n + 1);
			break;
		}
	fclose(f);
	return val;
}

/*
 * cgroup.stat nr_dying_descendants of CG: removed cgroups that something
 * still pins (a charged page, a swap entry, a per-cpu cache).
 */
static inline long nr_dying(const char *cg)
{
	return cg_read_key_long(cg, "cgroup.stat", "nr_dying_descendants ");
}

/*
 * lru_add_drain_all(): a freed folio still in a per-cpu LRU batch (of a
 * cpu that went idle) is not freed, and keeps its memcg charged, until
 * that batch drains. Compaction (vm.compact_memory) drains every cpu's
 * batches first.
 */
static inline void drain_lru_batches(void)
{
	int fd = open("/proc/sys/vm/compact_memory", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			ksft_print_msg("vm.compact_memory: %s\n", strerror(errno));
		close(fd);
	}
}

/*
 * Wait, up to 5 s, for nr_dying_descendants of CG to come back to BEFORE
 * (or below: older ones may go meanwhile). A removed memcg lingers while
 * a page or a swap entry still holds it, and goes (an RCU grace period
 * and a work item later) once the last one is freed: a test that freed
 * its data must see it go. Pages freed into a per-cpu LRU batch are
 * freed when it drains: after 1 s, the batches are drained. 0, or -1
 * with both values printed.
 */
/*
 * memcg's per-cpu charge stock keeps a reference to the last memcg that
 * charged on each cpu, a removed one too, until another memcg charges
 * there (its drain at removal is skipped while another drain runs). A
 * charge from a scratch cgroup on every cpu takes each stock over. The
 * scratch cgroup stays (removed, it would be pinned the same way).
 */
static inline void flush_charge_stocks(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char root[PATH_MAX], *cg;

	if (cg_find_unified_root(root, sizeof(root), NULL))
		return;
	cg = cg_name(root, "tmpfs_stock_flush");
	if (!cg)
		return;
	if (cg_create(cg) && errno != EEXIST) {
		free(cg);
		return;
	}
	for (long cpu = 0; cpu < ncpu; cpu++) {
		int pid = fork(), status;

		if (pid == 0) {
			cpu_set_t set;
			char buf[32];
			char *p;

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			snprintf(buf, sizeof(buf), "%d", getpid());
			if (sched_setaffinity(0, sizeof(set), &set) ||
			    cg_write(cg, "cgroup.procs", buf))
				_exit(1);
			p = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				_exit(1);
			memset(p, 1, 64 * 4096);
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, &status, 0);
	}
	free(cg);
}

static inline int wait_dying(const char *cg, long before, const char *when)
{
	long now = nr_dying(cg);
	int i;

	for (i = 0; i < 100 && now > before; i++) {
		if (i == 20) {
			drain_lru_batches();
			flush_charge_stocks();
		}
		usleep(50000);
		now = nr_dying(cg);
	}
	if (now >= 0 && now <= before)
		return 0;
	ksft_print_msg("%s: %s cgroup.stat nr_dying_descendants is %ld after 5 s, was %ld before\n",
		       when, cg, now, before);
	return -1;
}

#define SWAP_DEV "/dev/zram0"

/*
 * Freed swap slots wait in the per-cpu swap slot caches (SWAP_BATCH, 64
 * slots a cpu) until a cache fills up, and each one holds a reference on
 * the memcg id it was charged to: a removed cgroup whose swapped data
 * was freed stays dying until then. swapoff drains the caches; swapon
 * brings the device back. 0, or -1 with the errno printed.
 */
static inline int drain_swap_slots(void)
{
	if (swapoff(SWAP_DEV)) {
		ksft_print_msg("swapoff %s: %s\n", SWAP_DEV, strerror(errno));
		return -1;
	}
	if (swapon(SWAP_DEV, 0)) {
		ksft_print_msg("swapon %s: %s\n", SWAP_DEV, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Return the charges CG's memcg holds ahead of use in the per-cpu stocks
 * (up to 64 pages a cpu, each stock pinning the memcg): memory.high
 * below the usage makes the kernel drain every cpu's stock of the
 * cgroup (drain_all_stock()); no reclaim is left to do once it is only
 * the stock, and nothing is OOM killed. Offlining a memcg drains its
 * stocks too, but skips them when another drain is in progress, and a
 * stock of a cpu that charges nothing else then pins the removed memcg.
 */
static inline int drain_charge_stock(const char *cg)
{
	if (cg_write(cg, "memory.high", "0") || cg_write(cg, "memory.high", "max")) {
		ksft_print_msg("%s: memory.high: %s\n", cg, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * memory.reclaim on CG until none of its tmpfs pages is left in RAM and
 * memory.swap.current holds at least BYTES: the data is in swap.
 * memory.stat is flushed lazily (it can lag by a batch of updates), so
 * two more reclaims follow once it reads 0.
 */
static inline int push_to_swap(const char *cg, long bytes)
{
	int i;

	for (i = 0; i < 30; i++) {
		if (cg_read_key_long(cg, "memory.stat", "shmem ") == 0 &&
		    cg_read_key_long(cg, "memory.stat", "swapcached ") == 0 &&
		    cg_read_long(cg, "memory.swap.current") >= bytes) {
			cg_write(cg, "memory.reclaim", "16M");
			cg_write(cg, "memory.reclaim", "16M");
			return 0;
		}
		cg_write(cg, "memory.reclaim", "16M");	/* EAGAIN is fine */
	}
	ksft_print_msg("%s: after 30 reclaims shmem %ld, swapcached %ld, swap.current %ld (want %ld)\n",
		       cg, cg_read_key_long(cg, "memory.stat", "shmem "),
		       cg_read_key_long(cg, "memory.stat", "swapcached "),
		       cg_read_long(cg, "memory.swap.current"), bytes);
	return -1;
}

struct tmpfs_test {
	int (*fn)(const char *root);
	const char *name;
};

/* main() of every memory.tmpfs test program. */
static inline int run_tmpfs_tests(struct tmpfs_test *tests, int n)
{
	char root[PATH_MAX];
	char *probe;
	int i;

	page_size = sysconf(_SC_PAGESIZE);
	ksft_print_header();
	ksft_set_plan(n);
	if (cg_find_unified_root(root, sizeof(root), NULL))
		ksft_exit_skip("cgroup v2 isn't mounted\n");
	if (cg_read_strstr(root, "cgroup.subtree_control", "memory"))
		if (cg_write(root, "cgroup.subtree_control", "+memory"))
			ksft_exit_skip("Failed to enable the memory controller\n");
	probe = make_parent(root, "tmpfs_probe");
	if (!probe)
		ksft_exit_fail_msg("cannot create a cgroup\n");
	/* these tests are the series' own: a kernel without it fails them */
	if (access(cg_control(probe, "memory.tmpfs.current"), F_OK)) {
		remove_cgroup(probe);
		ksft_exit_fail_msg("memory.tmpfs.current does not exist: kernel without memory.tmpfs\n");
	}
	remove_cgroup(probe);

	for (i = 0; i < n; i++) {
		long dying = nr_dying(root);
		int ret = tests[i].fn(root);

		/* every case removes its cgroups: none may stay dying */
		if (ret == KSFT_PASS && wait_dying(root, dying, tests[i].name))
			ret = KSFT_FAIL;
		switch (ret) {
		case KSFT_PASS:
			ksft_test_result_pass("%s\n", tests[i].name);
			break;
		case KSFT_SKIP:
			ksft_test_result_skip("%s\n", tests[i].name);
			break;
		default:
			ksft_test_result_fail("%s\n", tests[i].name);
			break;
		}
	}
	ksft_finished();
	return 0;
}

#define TMPFS_TEST(x) { x, #x }

#endif /* TMPFS_UTIL_H */
