// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tmpfs.current and .peak: what is charged, to whom, and until when
 * (the series' Documentation/admin-guide/cgroup-v2.rst,
 * memory.tmpfs.current). Every case checks exact byte values after each
 * step, the invariants (tmpfs within memory + swap, a parent is the sum of
 * its children and its own), and ends with memory.tmpfs.current back at 0.
 */
#include "tmpfs_util.h"

#include <linux/falloc.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#define LEN (1 * MiB + 1)

struct ctx {
	const char *path;
	const char *path2;
};

static int body_write_unlink(const char *cgroup, void *arg)
{
	const struct ctx *c = arg;

	STEP(write_file(c->path, LEN), pages_of(LEN));
	if (expect_peak(cgroup, pages_of(LEN), -1, "peak"))
		return -1;
	STEP(unlink(c->path), 0);
	return 0;
}

static int body_unlinked_open(const char *cgroup, void *arg)
{
	const struct ctx *c = arg;
	int fd;

	STEP(write_file(c->path, LEN), pages_of(LEN));
	fd = open(c->path, O_RDONLY);
	if (fd < 0)
		return -1;
	STEP(unlink(c->path), pages_of(LEN));	/* still open: kept */
	STEP(close(fd), 0);
	return 0;
}

static int body_hardlink_rename(const char *cgroup, void *arg)
{
	const struct ctx *c = arg;
	char renamed[PATH_MAX];

	snprintf(renamed, sizeof(renamed), "%s.renamed", c->path2);
	STEP(write_file(c->path, LEN), pages_of(LEN));
	STEP(link(c->path, c->path2), pages_of(LEN));
	STEP(unlink(c->path), pages_of(LEN));	/* the other name keeps it */
	STEP(rename(c->path2, renamed), pages_of(LEN));
	STEP(unlink(renamed), 0);
	return 0;
}

static int body_truncate_punch(const char *cgroup, void *arg)
{
	const struct ctx *c = arg;
	int fd;

	STEP(write_file(c->path, 1 * MiB), 1 * MiB);
	fd = open(c->path, O_RDWR);
	if (fd < 0)
		return -1;
	/* shrinking truncate to 768K + 1: 769K stay, page-rounded */
	STEP(ftruncate(fd, 768 * KiB + 1), pages_of(768 * KiB + 1));
	/* punch [256K, 512K) */
	STEP(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       256 * KiB, 256 * KiB), pages_of(768 * KiB + 1) - 256 * KiB);
	/* growing truncate allocates nothing */
	STEP(ftruncate(fd, 4 * MiB), pages_of(768 * KiB + 1) - 256 * KiB);
	STEP(ftruncate(fd, 0), 0);
	close(fd);
	STEP(unlink(c->path), 0);
	return 0;
}

static int body_madv_remove(const char *cgroup, void *arg)
{
	const struct ctx *c = arg;
	char *map;
	int fd;

	fd = open(c->path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0 || ftruncate(fd, 1 * MiB))
		return -1;
	STEP(0, 0);	/* a sized file without data charges nothing */
	map = mmap(NULL, 1 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	memset(map, 0x5a, 1 * MiB);	/* stores through the mapping */
	STEP(0, 1 * MiB);
	STEP(madvise(map, 256 * KiB, MADV_REMOVE), 768 * KiB);
	STEP(munmap(map, 1 * MiB), 768 * KiB);
	close(fd);
	STEP(unlink(c->path), 0);
	return 0;
}

static int run_case(const char *root, const char *name,
		    int (*body)(const char *, void *), struct ctx *c)
{
	int ret = run_setup_case(root, name, "max", body, c, c->path);

	if (c->path2)
		unlink(c->path2);
	return ret;
}

static int test_write_unlink_tmp(const char *root)
{
	struct ctx c = { .path = "/tmp/tmpfs_acct" };

	return run_case(root, "tmpfs_write_unlink_tmp", body_write_unlink, &c);
}

static int test_write_unlink_dev_shm(const char *root)
{
	struct ctx c = { .path = "/dev/shm/tmpfs_acct" };

	return run_case(root, "tmpfs_write_unlink_shm", body_write_unlink, &c);
}

static int test_unlinked_open(const char *root)
{
	struct ctx c = { .path = "/tmp/tmpfs_open" };

	return run_case(root, "tmpfs_unlinked_open", body_unlinked_open, &c);
}

static int test_hardlink_rename(const char *root)
{
	struct ctx c = { .path = "/tmp/tmpfs_link1", .path2 = "/tmp/tmpfs_link2" };

	return run_case(root, "tmpfs_hardlink", body_hardlink_rename, &c);
}

static int test_truncate_punch_hole(const char *root)
{
	struct ctx c = { .path = "/tmp/tmpfs_trunc" };

	return run_case(root, "tmpfs_truncate", body_truncate_punch, &c);
}

static int test_mmap_madv_remove(const char *root)
{
	struct ctx c = { .path = "/tmp/tmpfs_mmap" };

	return run_case(root, "tmpfs_mmap", body_madv_remove, &c);
}

/* One write or truncate by a task in the cgroup. */
struct op {
	const char *path;
	long off, len;		/* write [off, off + len) */
	long size;		/* then truncate to this size, if >= 0 */
};

static int body_op(const char *cgroup, void *arg)
{
	const struct op *op = arg;
	int fd = open(op->path, O_CREAT | O_RDWR, 0644);
	int ret = 0;

	if (fd < 0)
		return -1;
	if (op->len && write_pattern(fd, op->off, op->len) != op->len)
		ret = -1;
	if (op->size >= 0 && ftruncate(fd, op->size))
		ret = -1;
	close(fd);
	return ret;
}

static int do_op(const char *cg, const char *path, long off, long len,
		 long size)
{
	struct op op = { path, off, len, size };

	return cg_run(cg, body_op, &op);
}

static int expect_fd(int fd, long want, const char *when)
{
	return expect_peak_value(cg_read_long_fd(fd), want, -1,
				 "memory.tmpfs.peak fd", when);
}

/*
 * memory.tmpfs.peak: the high watermark; a write to it resets what that
 * open file shows to the current usage, as memory.peak does.
 */
static int test_peak_reset(const char *root)
{
	const char *path = "/tmp/tmpfs_peak";
	int ret = KSFT_FAIL, reset_fd = -1, plain_fd = -1;
	struct setup s = { 0 };
	char *cg;

	if (setup(&s, root, "tmpfs_peak", "max"))
		goto cleanup;
	cg = s.cg;
	if (do_op(cg, path, 0, 2 * MiB, 512 * KiB) ||
	    expect_tmpfs(cg, 512 * KiB, "2M written, truncated to 512K") ||
	    expect_peak(cg, 2 * MiB, -1, "global peak"))
		goto cleanup;

	reset_fd = reset_peak(cg);
	plain_fd = open_peak(cg, O_RDONLY);
	if (reset_fd < 0 || plain_fd < 0)
		goto cleanup;
	if (expect_fd(reset_fd, 512 * KiB, "after reset") ||
	    expect_fd(plain_fd, 2 * MiB, "other fd after reset"))
		goto cleanup;

	if (do_op(cg, path, 512 * KiB, 512 * KiB, -1) ||
	    expect_tmpfs(cg, 1 * MiB, "512K more written") ||
	    expect_fd(reset_fd, 1 * MiB, "reset fd, 1M used") ||
	    expect_fd(plain_fd, 2 * MiB, "other fd, 1M used"))
		goto cleanup;
	if (unlink(path) || expect_tmpfs(cg, 0, "unlinked") ||
	    expect_fd(reset_fd, 1 * MiB, "reset fd, after unlink") ||
	    expect_peak(s.parent, 2 * MiB, -1, "parent peak"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	if (reset_fd >= 0)
		close(reset_fd);
	if (plain_fd >= 0)
		close(plain_fd);
	return teardown(&s, path, ret);
}

/*
 * A parent holds the sum of its children's charges. A removed child's
 * charges stay on the parent until the data is freed.
 */
static int test_hierarchy_rmdir(const char *root)
{
	const char *pa = "/tmp/tmpfs_hier_a", *pb = "/dev/shm/tmpfs_hier_b";
	int ret = KSFT_FAIL;
	char *parent, *a = NULL, *b = NULL;
	const char *children[2];

	parent = make_parent(root, "tmpfs_hier");
	a = parent ? make_child(parent, "a") : NULL;
	b = parent ? make_child(parent, "b") : NULL;
	if (!a || !b)
		goto cleanup;
	children[0] = a;
	children[1] = b;
	if (do_op(a, pa, 0, 1 * MiB, -1) || do_op(b, pb, 0, 3 * MiB + 1, -1))
		goto cleanup;
	if (expect_tmpfs(a, 1 * MiB, "a wrote 1M") ||
	    expect_tmpfs(b, pages_of(3 * MiB + 1), "b wrote 3M+1") ||
	    check_parent_sum(parent, children, 2, 0, "parent = a + b") ||
	    check_within_memory(parent, "parent"))
		goto cleanup;
	if (destroy_cgroup(&b))
		goto cleanup;
	if (expect_tmpfs(parent, 1 * MiB + pages_of(3 * MiB + 1), "b removed, files kept"))
		goto cleanup;
	if (unlink(pb) || expect_tmpfs(parent, 1 * MiB, "b's file freed"))
		goto cleanup;
	if (unlink(pa) || expect_tmpfs(parent, 0, "all freed") ||
	    expect_tmpfs(a, 0, "all freed"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	unlink(pa);
	unlink(pb);
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(parent);
	return ret;
}

/*
 * The writer pays, not the file's creator; charges do not move with a
 * task that moves to another cgroup.
 */
static int test_writer_pays(const char *root)
{
	const char *path = "/tmp/tmpfs_who";
	int ret = KSFT_FAIL;
	char *parent, *a = NULL, *b = NULL;

	parent = make_parent(root, "tmpfs_who");
	a = parent ? make_child(parent, "creator") : NULL;
	b = parent ? make_child(parent, "writer") : NULL;
	if (!a || !b)
		goto cleanup;
	if (do_op(a, path, 0, 0, 0) || expect_tmpfs(a, 0, "a created it empty"))
		goto cleanup;
	if (do_op(b, path, 0, 2 * MiB, -1) ||
	    expect_tmpfs(a, 0, "b wrote: a") || expect_tmpfs(b, 2 * MiB, "b wrote: b"))
		goto cleanup;
	/* a appends: a pays for its pages only */
	if (do_op(a, path, 2 * MiB, 1 * MiB, -1) ||
	    expect_tmpfs(a, 1 * MiB, "a appended: a") ||
	    expect_tmpfs(b, 2 * MiB, "a appended: b"))
		goto cleanup;
	if (unlink(path) || expect_tmpfs(a, 0, "freed: a") ||
	    expect_tmpfs(b, 0, "freed: b"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	unlink(path);
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(parent);
	return ret;
}

static int body_write_then_move(const char *cgroup, void *arg)
{
	const char *to = arg;

	if (write_file("/tmp/tmpfs_moved", 1 * MiB))
		return -1;
	return cg_enter_current(to);
}

static int test_task_moves(const char *root)
{
	int ret = KSFT_FAIL;
	char *parent, *a = NULL, *b = NULL;

	parent = make_parent(root, "tmpfs_move");
	a = parent ? make_child(parent, "a") : NULL;
	b = parent ? make_child(parent, "b") : NULL;
	if (!a || !b)
		goto cleanup;
	if (cg_run(a, body_write_then_move, b) ||
	    expect_tmpfs(a, 1 * MiB, "moved after writing: a keeps it") ||
	    expect_tmpfs(b, 0, "moved after writing: b"))
		goto cleanup;
	if (unlink("/tmp/tmpfs_moved") || expect_tmpfs(a, 0, "freed"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	unlink("/tmp/tmpfs_moved");
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(parent);
	return ret;
}

/*
 * Scope: a tmpfs mounted in a new user namespace is charged;
 * memfd_create(), SysV shm and MAP_SHARED|MAP_ANONYMOUS are not, though
 * memory.current grows as before.
 */
static int body_internal_shmem(const char *cgroup, void *arg)
{
	long before = cg_read_long(cgroup, "memory.current");
	char *anon, *sysv, *memfd_map;
	int memfd, shmid;

	memfd = memfd_create("tmpfs_scope", 0);
	if (memfd < 0 || write_pattern(memfd, 0, 2 * MiB) != 2 * MiB)
		return -1;
	shmid = shmget(IPC_PRIVATE, 2 * MiB, IPC_CREAT | 0600);
	if (shmid < 0)
		return -1;
	sysv = shmat(shmid, NULL, 0);
	shmctl(shmid, IPC_RMID, NULL);
	if (sysv == (void *)-1)
		return -1;
	memset(sysv, 1, 2 * MiB);
	anon = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		return -1;
	memset(anon, 1, 2 * MiB);
	memfd_map = mmap(NULL, 2 * MiB, PROT_READ, MAP_SHARED, memfd, 0);
	if (memfd_map == MAP_FAILED)
		return -1;
	if (expect_tmpfs(cgroup, 0, "memfd, SysV shm, shared anonymous"))
		return -1;
	if (cg_read_long(cgroup, "memory.current") < before + 6 * MiB) {
		ksft_print_msg("memory.current grew by %ld, expected >= 6M\n",
			       cg_read_long(cgroup, "memory.current") - before);
		return -1;
	}
	close(memfd);
	return 0;
}

static int test_scope_internal_shmem(const char *root)
{
	return run_setup_case(root, "tmpfs_scope", "max", body_internal_shmem, NULL, NULL);
}

/*
 * As an unprivileged user, in a new user and mount namespace as a
 * container runtime makes them: mount a tmpfs, write 1M into it.
 */
static int body_userns_tmpfs(const char *cgroup, void *arg)
{
	const char *dir = arg;
	char path[PATH_MAX];

	if (enter_userns_as_nobody())
		return -1;
	if (mount("tmpfs", dir, "tmpfs", 0, "size=16m")) {
		ksft_print_msg("mount tmpfs in a user namespace: %s\n", strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/data", dir);
	if (write_file(path, 1 * MiB))
		return -1;
	/* the mount, and its data, go with the namespace when this task exits */
	return expect_tmpfs(cgroup, 1 * MiB, "tmpfs in a user namespace");
}

static int test_scope_userns_tmpfs(const char *root)
{
	char dir[] = "/tmp/tmpfs_userns.XXXXXX";
	int ret;

	if (!mkdtemp(dir))
		return KSFT_FAIL;
	chmod(dir, 0777);
	/* teardown: the namespace died with the task, the mount and data too */
	ret = run_setup_case(root, "tmpfs_userns", "max", body_userns_tmpfs, dir, NULL);
	rmdir(dir);
	return ret;
}

/*
 * Swap: memory.reclaim pushes tmpfs data to zram; memory.tmpfs.current
 * stays, memory.swap.current grows; the data reads back intact; freeing
 * swapped data gives the tmpfs charge back at once.
 */
static int test_swap_roundtrip(const char *root)
{
	const char *path = "/tmp/tmpfs_swap";
	int ret = KSFT_FAIL, i;
	struct setup s = { 0 };
	long swapped = 0, slack;
	char *cg, *parent;

	if (setup(&s, root, "tmpfs_swap", "max"))
		goto cleanup;
	cg = s.cg;
	parent = s.parent;
	if (do_op(cg, path, 0, 4 * MiB, -1) || expect_tmpfs(cg, 4 * MiB, "written"))
		goto cleanup;
	for (i = 0; i < 10 && swapped < 3 * MiB; i++) {
		cg_write(cg, "memory.reclaim", "8M");	/* EAGAIN is fine */
		swapped = cg_read_long(cg, "memory.swap.current");
	}
	if (swapped < 3 * MiB) {
		ksft_print_msg("memory.reclaim swapped out only %ld bytes\n", swapped);
		goto cleanup;
	}
	if (expect_tmpfs(cg, 4 * MiB, "swapped out") ||
	    check_within_memory(cg, "swapped out") ||
	    expect_tmpfs(parent, 4 * MiB, "swapped out, parent"))
		goto cleanup;
	if (verify_file(path, 4 * MiB) || expect_tmpfs(cg, 4 * MiB, "read back"))
		goto cleanup;
	/*
	 * All of it back to swap (the read left it in RAM): no shmem page,
	 * none in the swap cache, 4M in swap; then the truncation frees
	 * swap entries only.
	 */
	if (push_to_swap(cg, 4 * MiB) || expect_tmpfs(cg, 4 * MiB, "in swap again"))
		goto cleanup;
	if (do_op(cg, path, 0, 0, 0) || expect_tmpfs(cg, 0, "swapped data truncated") ||
	    expect_tmpfs(parent, 0, "swapped data truncated, parent"))
		goto cleanup;
	/*
	 * Freed swap slots may wait in the per-cpu swap slot caches, charged
	 * to memory.swap, until a cache fills up (SWAP_BATCH, 64 slots);
	 * memory.tmpfs does not wait for them.
	 */
	slack = 64 * page_size * sysconf(_SC_NPROCESSORS_ONLN);
	if (cg_read_long(cg, "memory.swap.current") > slack) {
		ksft_print_msg("memory.swap.current %ld after truncation\n",
			       cg_read_long(cg, "memory.swap.current"));
		goto cleanup;
	}
	if (unlink(path) || expect_tmpfs(cg, 0, "unlinked"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	/*
	 * The freed swap slots hold the cgroup's memcg until drained; and
	 * the swap-ins of verify_file() (charged to cg from this task's
	 * cpu) leave a stock of up to 64 pages there (seen: memory.current
	 * 106 pages above the data, 0 after drain_charge_stock()) which
	 * outlived cg's removal in 3 runs of 3.
	 */
	if (drain_swap_slots() || (s.cg && drain_charge_stock(s.cg)))
		ret = KSFT_FAIL;
	return teardown(&s, path, ret);
}

/*
 * Huge pages: huge=always writes whole huge folios; MADV_COLLAPSE turns
 * small folios and holes into one (the holes get charged); truncation
 * splits it. The counter stays exact through each.
 */
static int body_huge(const char *cgroup, void *arg)
{
	const char *dir = arg;
	char path[PATH_MAX], *map;
	int fd, tries;

	snprintf(path, sizeof(path), "%s/huge", dir);
	STEP(write_file(path, 4 * MiB), 4 * MiB);
	if (expect_peak(cgroup, 4 * MiB, -1, "huge peak"))
		return -1;
	STEP(unlink(path), 0);

	/* /tmp is huge=never: 1M of small folios, the rest a hole */
	fd = open("/tmp/tmpfs_collapse", O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0 || ftruncate(fd, HPAGE))
		return -1;
	STEP(write_pattern(fd, 0, 1 * MiB) != 1 * MiB, 1 * MiB);
	map = map_huge_aligned(fd, PROT_READ | PROT_WRITE);
	if (!map)
		return -1;
	/*
	 * A folio still in a per-cpu LRU batch holds an extra reference:
	 * khugepaged then gives up on it (SCAN_PAGE_COUNT, EINVAL; or
	 * EAGAIN). Retry a few times, as that is transient.
	 */
	for (tries = 0; madvise(map, HPAGE, MADV_COLLAPSE); tries++) {
		if (tries == 4 || (errno != EINVAL && errno != EAGAIN)) {
			ksft_print_msg("MADV_COLLAPSE: %s (after %d tries)\n",
				       strerror(errno), tries + 1);
			return -1;
		}
		ksft_print_msg("MADV_COLLAPSE: %s, trying again\n", strerror(errno));
		usleep(200000);
	}
	STEP(0, HPAGE);			/* the hole was filled */
	if (memcg_stat(cgroup, "shmem_thp ") != HPAGE) {
		ksft_print_msg("memory.stat shmem_thp %ld after MADV_COLLAPSE\n",
			       memcg_stat(cgroup, "shmem_thp "));
		return -1;
	}
	munmap(map, HPAGE);
	STEP(ftruncate(fd, 1 * MiB + 1), pages_of(1 * MiB + 1));	/* split */
	close(fd);
	STEP(unlink("/tmp/tmpfs_collapse"), 0);
	return 0;
}

static int test_huge_collapse_split(const char *root)
{
	char dir[] = "/tmp/tmpfs_huge.XXXXXX";
	int ret;

	if (mount_tmpfs_dir(dir, "huge=always"))
		return KSFT_FAIL;
	ret = run_setup_case(root, "tmpfs_huge", "max", body_huge, dir, "/tmp/tmpfs_collapse");
	umount_tmpfs_dir(dir);
	return ret;
}

/*
 * Truncation gives memory.tmpfs back in one uncharge per run of folios of
 * one memcg and per batch of folios, flushed before the syscall returns.
 * A file whose pages alternate owners: a's task writes the even pages of
 * [0, 512), b's the odd ones; then 100 pages of a, then 40 of b. A task
 * of a third sibling c, which holds 3 pages of its own (its CPU's stock
 * caches c), truncates, punches or unlinks and closes the file; right
 * after the syscall returns, in that task, each cgroup's current has
 * dropped by exactly its own pages in the range, c's has not changed,
 * and the parent is the sum.
 */
#define IL_PAIRS 256		/* even pages a, odd pages b: [0, 512) */
#define IL_RUN_A 100		/* then a run of a: [512, 612) */
#define IL_RUN_B 40		/* then a run of b: [612, 652) */
#define IL_PAGES (2 * IL_PAIRS + IL_RUN_A + IL_RUN_B)
#define IL_OWN_C 3		/* c's own pages, in a file of its own */

enum il_op { IL_TRUNCATE, IL_PUNCH, IL_UNLINK };

struct interleaved {
	char *parent, *cg[3];	/* a, b, c */
	const char *path, *cpath;
	enum il_op op;
	long first, last;	/* IL_PUNCH: the pages [first, last) */
	int who;		/* the writer of a body_il_write() */
};

/* 0 (a) or 1 (b): who wrote page I of the interleaved file. */
static int il_owner(long i)
{
	if (i < 2 * IL_PAIRS)
		return i & 1;
	return i < 2 * IL_PAIRS + IL_RUN_A ? 0 : 1;
}

/* WHO's pages among [FIRST, LAST). */
static long il_pages_of(int who, long first, long last)
{
	long n = 0;

	for (long i = first; i < last; i++)
		n += il_owner(i) == who;
	return n;
}

/* In a or b: write one page at each of its own indexes, nothing else. */
static int body_il_write(const char *cgroup, void *arg)
{
	const struct interleaved *il = arg;
	int fd = open(il->path, O_CREAT | O_RDWR, 0644);

	if (fd < 0)
		return -1;
	for (long i = 0; i < IL_PAGES; i++)
		if (il_owner(i) == il->who &&
		    write_pattern(fd, i * page_size, page_size) != page_size) {
			ksft_print_msg("page %ld: %s\n", i, strerror(errno));
			close(fd);
			return -1;
		}
	close(fd);
	return 0;
}

/* a, b and c at A, B and C bytes, the parent their sum. */
static int il_expect(const struct interleaved *il, long a, long b, long c,
		     const char *when)
{
	if (expect_tmpfs(il->cg[0], a, when) || expect_tmpfs(il->cg[1], b, when) ||
	    expect_tmpfs(il->cg[2], c, when) ||
	    expect_tmpfs(il->parent, a + b + c, when) ||
	    check_parent_sum(il->parent, (const char **)il->cg, 3, 0, when))
		return -1;
	return 0;
}

/* In c: its own pages, then the operation, then the values at once. */
static int body_il_free(const char *cgroup, void *arg)
{
	const struct interleaved *il = arg;
	long a = il_pages_of(0, 0, IL_PAGES) * page_size;
	long b = il_pages_of(1, 0, IL_PAGES) * page_size;
	long c = IL_OWN_C * page_size;
	int fd, ret = -1;

	if (write_file(il->cpath, c) || il_expect(il, a, b, c, "c wrote its own"))
		return -1;
	fd = open(il->path, O_RDWR);
	if (fd < 0)
		return -1;
	switch (il->op) {
	case IL_TRUNCATE:
		if (ftruncate(fd, 0))
			ksft_print_msg("ftruncate: %s\n", strerror(errno));
		else
			ret = il_expect(il, 0, 0, c, "ftruncate to 0 by c");
		break;
	case IL_PUNCH:
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      il->first * page_size, (il->last - il->first) * page_size))
			ksft_print_msg("fallocate: %s\n", strerror(errno));
		else
			ret = il_expect(il, a - il_pages_of(0, il->first, il->last) * page_size,
					b - il_pages_of(1, il->first, il->last) * page_size,
					c, "hole punched by c");
		break;
	case IL_UNLINK:
		if (unlink(il->path)) {
			ksft_print_msg("unlink: %s\n", strerror(errno));
			break;
		}
		if (il_expect(il, a, b, c, "unlinked by c, still open"))
			break;
		if (close(fd)) {
			ksft_print_msg("close: %s\n", strerror(errno));
			return -1;
		}
		return il_expect(il, 0, 0, c, "unlinked and closed by c");
	}
	close(fd);
	return ret;
}

static int interleaved_case(const char *root, enum il_op op, long first, long last)
{
	struct interleaved il = { .path = "/tmp/tmpfs_interleaved",
				  .cpath = "/tmp/tmpfs_interleaved.c",
				  .op = op, .first = first, .last = last };
	static const char *const names[] = { "a", "b", "c" };
	long a = il_pages_of(0, 0, IL_PAGES) * page_size;
	long b = il_pages_of(1, 0, IL_PAGES) * page_size;
	int ret = KSFT_FAIL, i;

	il.parent = make_parent(root, "tmpfs_interleaved");
	for (i = 0; i < 3 && il.parent; i++)
		if (!(il.cg[i] = make_child(il.parent, names[i])))
			goto out;
	if (!il.parent)
		goto out;
	for (il.who = 0; il.who < 2; il.who++)
		if (cg_run(il.cg[il.who], body_il_write, &il))
			goto out;
	if (il_expect(&il, a, b, 0, "a and b wrote the interleaved file") ||
	    check_within_memory(il.cg[0], "a wrote") ||
	    check_within_memory(il.cg[1], "b wrote"))
		goto out;
	if (cg_run(il.cg[2], body_il_free, &il))
		goto out;
	if (unlink(il.cpath) || (op != IL_UNLINK && unlink(il.path)) ||
	    il_expect(&il, 0, 0, 0, "all unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	unlink(il.path);
	unlink(il.cpath);
	for (i = 0; i < 3; i++)
		remove_cgroup(il.cg[i]);
	remove_cgroup(il.parent);
	return ret;
}

static int test_interleaved_truncate(const char *root)
{
	return interleaved_case(root, IL_TRUNCATE, 0, 0);
}

/* Pages [101, 630): 205 + 100 (its run) of a's, 206 + 18 of b's. */
static int test_interleaved_punch_hole(const char *root)
{
	return interleaved_case(root, IL_PUNCH, 101, 630);
}

static int test_interleaved_unlink_close(const char *root)
{
	return interleaved_case(root, IL_UNLINK, 0, 0);
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_write_unlink_tmp),
	TMPFS_TEST(test_write_unlink_dev_shm),
	TMPFS_TEST(test_unlinked_open),
	TMPFS_TEST(test_hardlink_rename),
	TMPFS_TEST(test_truncate_punch_hole),
	TMPFS_TEST(test_mmap_madv_remove),
	TMPFS_TEST(test_peak_reset),
	TMPFS_TEST(test_hierarchy_rmdir),
	TMPFS_TEST(test_writer_pays),
	TMPFS_TEST(test_task_moves),
	TMPFS_TEST(test_scope_internal_shmem),
	TMPFS_TEST(test_scope_userns_tmpfs),
	TMPFS_TEST(test_swap_roundtrip),
	TMPFS_TEST_NEEDS(test_huge_collapse_split, NEEDS_THP),
	TMPFS_TEST(test_interleaved_truncate),
	TMPFS_TEST(test_interleaved_punch_hole),
	TMPFS_TEST(test_interleaved_unlink_close),
};

int main(void)
{
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
