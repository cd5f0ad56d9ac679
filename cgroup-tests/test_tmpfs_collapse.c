// SPDX-License-Identifier: GPL-2.0
/*
 * Collapse of tmpfs small folios into a huge one, by MADV_COLLAPSE and by
 * khugepaged, done by a task of another cgroup than the writer's (the
 * series' Documentation/admin-guide/cgroup-v2.rst, memory.tmpfs.current):
 * a collapse never moves a tmpfs charge. The huge folio is charged, memory
 * and tmpfs, to the cgroup that holds the range's pages, holes included;
 * the collapse is skipped when the pages are held by more than one cgroup,
 * or when the holes would take their holder over its limit.
 *
 * Every case checks both cgroups' memory.tmpfs.current exactly, and their
 * memory.stat "shmem" and "shmem_thp" exactly once the stats are flushed
 * (memcg flushes them every 2 seconds; memory.current itself also holds
 * the per-cpu charge stock and slab objects, so it is bounded from below).
 */
#include "tmpfs_util.h"

struct cgs {
	char *parent, *a, *b;
};

static int make_cgs(struct cgs *c, const char *root, const char *name)
{
	c->parent = make_parent(root, name);
	c->a = c->parent ? make_child(c->parent, "a") : NULL;
	c->b = c->a ? make_child(c->parent, "b") : NULL;
	return c->b ? 0 : -1;
}

static int free_cgs(struct cgs *c, const char *path, int ret)
{
	if (path)
		unlink(path);
	if (ret == KSFT_PASS && c->b &&
	    (expect_tmpfs(c->a, 0, "end") || expect_tmpfs(c->b, 0, "end") ||
	     expect_tmpfs(c->parent, 0, "end")))
		ret = KSFT_FAIL;
	remove_cgroup(c->b);
	remove_cgroup(c->a);
	remove_cgroup(c->parent);
	return ret;
}

/*
 * memory.stat KEY of CG must read WANT, within 6 seconds (memcg_stat()
 * flushes the per-cpu updates; the polling is for work still in flight).
 */
static int expect_stat(const char *cg, const char *key, long want)
{
	char k[64];
	long got = -1;
	int i;

	snprintf(k, sizeof(k), "%s ", key);
	for (i = 0; i < 60; i++) {
		got = memcg_stat(cg, k);
		if (got == want)
			return 0;
		usleep(100000);
	}
	ksft_print_msg("%s: memory.stat %s is %ld, expected %ld\n", cg, key, got, want);
	return -1;
}

/* tmpfs.current, memory.stat shmem and shmem_thp of CG; memory.current >= shmem */
static int expect_cg(const char *cg, long tmpfs, long shmem, long thp, const char *when)
{
	long mem;

	if (expect_tmpfs(cg, tmpfs, when) || expect_stat(cg, "shmem", shmem) ||
	    expect_stat(cg, "shmem_thp", thp))
		return -1;
	mem = cg_read_long(cg, "memory.current");
	if (mem < shmem) {
		ksft_print_msg("%s: %s memory.current %ld < shmem %ld\n", when, cg, mem, shmem);
		return -1;
	}
	return 0;
}

/*
 * MADV_COLLAPSE of [0, 2M) of MAP, whose first page holds data (a task of
 * CG). The first page is read first: MADV_COLLAPSE of a file range whose
 * page-table levels do not exist yet (nothing mapped in its 1 GiB) collapses
 * the page cache but fails to map the huge folio, with EINVAL, on every
 * try (collapse_pte_mapped_thp(): SCAN_PMD_NULL). The same on the
 * baseline kernel; this program's rounds, each a little lower in the
 * address space, crossed into such a region about once in 20 runs. A folio
 * still in a per-cpu LRU batch holds an extra reference: the collapse then
 * gives up with EAGAIN, which is transient, so that is retried, 15 tries
 * 200 ms apart, each retry reported. Returns 0 when it collapsed, else the
 * errno of the last try.
 */
static int collapse_retry(const char *cg, char *map, const char *what)
{
	int tries, err;

	(void)*(volatile char *)map;
	for (tries = 1; ; tries++) {
		if (!madvise(map, HPAGE, MADV_COLLAPSE)) {
			if (tries > 1)
				ksft_print_msg("%s: collapsed at try %d\n", what, tries);
			return 0;
		}
		err = errno;
		if (err == EBUSY)
			return err;
		if (tries == 15 || err != EAGAIN) {
			ksft_print_msg("%s: MADV_COLLAPSE: %s (after %d tries); %s shmem_thp %ld\n",
				       what, strerror(err), tries, cg,
				       memcg_stat(cg, "shmem_thp "));
			return err;
		}
		ksft_print_msg("%s: MADV_COLLAPSE: %s at try %d, retrying\n", what,
			       strerror(err), tries);
		usleep(200000);
	}
}

/*
 * MADV_COLLAPSE of [0, 2M) of the file, by a task of the cgroup; exits
 * with 0 when it collapsed, 1 when it was refused with EBUSY (a cgroup
 * charge), 2 on anything else (collapse_retry() retries the transient
 * failures).
 */
static int body_collapse(const char *cgroup, void *arg)
{
	const char *path = arg;
	int fd = open(path, O_RDWR), err;
	char *map;

	if (fd < 0)
		return 2;
	map = map_huge_aligned(fd, PROT_READ | PROT_WRITE);
	if (!map)
		return 2;
	err = collapse_retry(cgroup, map, path);
	return err == 0 ? 0 : err == EBUSY ? 1 : 2;
}

/*
 * MADV_COLLAPSE of PATH by a task of CG (WHO): it must collapse it, or,
 * with REFUSED, be refused with EBUSY.
 */
static int expect_collapse(const char *cg, const char *path, bool refused, const char *who)
{
	int r = cg_run(cg, body_collapse, (void *)path);

	if (r == (refused ? 1 : 0))
		return 0;
	ksft_print_msg("MADV_COLLAPSE by %s: result %d, expected %s\n", who, r,
		       refused ? "1 (EBUSY)" : "a collapse");
	return -1;
}

/* A 2M file whose first LEN bytes the writer cgroup wrote; the rest a hole. */
static int make_file(const char *cg, const char *path, long len)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);

	if (fd < 0 || ftruncate(fd, HPAGE)) {
		ksft_print_msg("create %s: %s\n", path, strerror(errno));
		return -1;
	}
	close(fd);
	return write_as(cg, path, 0, len, len);
}

/*
 * A writes 1M of a 2M file, B collapses it: the huge folio is A's,
 * memory and tmpfs, holes included; B pays nothing.
 */
static int test_collapse_other_cgroup(const char *root)
{
	const char *path = "/tmp/tmpfs_collapse_other";
	struct cgs c = { 0 };
	int ret = KSFT_FAIL;

	if (make_cgs(&c, root, "tmpfs_collapse_other") || make_file(c.a, path, 1 * MiB) ||
	    expect_cg(c.a, 1 * MiB, 1 * MiB, 0, "written") ||
	    expect_cg(c.b, 0, 0, 0, "written") ||
	    expect_collapse(c.b, path, false, "b"))
		goto out;
	if (expect_cg(c.a, HPAGE, HPAGE, HPAGE, "collapsed by b") ||
	    expect_cg(c.b, 0, 0, 0, "collapsed by b") ||
	    expect_tmpfs(c.parent, HPAGE, "collapsed by b") ||
	    verify_file(path, 1 * MiB))
		goto out;
	if (truncate(path, 0) || expect_cg(c.a, 0, 0, 0, "truncated"))
		goto out;
	ret = KSFT_PASS;
out:
	return free_cgs(&c, path, ret);
}

/*
 * The escape: A (memory.tmpfs.max 1M) writes 1M of a 2M file; B
 * collapses it. The holes would take A over its limit: the collapse is
 * refused (EBUSY), A keeps its 1M and its limit (a further write gets
 * EDQUOT at once), B gets nothing. A refused collapse is no event.
 */
static int test_collapse_over_owner_limit(const char *root)
{
	const char *path = "/tmp/tmpfs_collapse_limit";
	struct cgs c = { 0 };
	int ret = KSFT_FAIL;

	if (make_cgs(&c, root, "tmpfs_collapse_limit") ||
	    cg_write(c.a, "memory.tmpfs.max", "1M") || make_file(c.a, path, 1 * MiB) ||
	    expect_cg(c.a, 1 * MiB, 1 * MiB, 0, "written") ||
	    expect_collapse(c.b, path, true, "b over a's limit"))
		goto out;
	if (expect_cg(c.a, 1 * MiB, 1 * MiB, 0, "refused") ||
	    expect_cg(c.b, 0, 0, 0, "refused") ||
	    expect_events(c.a, 0, 0, "refused") || expect_events(c.b, 0, 0, "refused"))
		goto out;
	/* A is at its limit: one more page is refused */
	if (write_as(c.a, path, 1 * MiB, 1 * MiB, 0) ||
	    expect_cg(c.a, 1 * MiB, 1 * MiB, 0, "a writes more") ||
	    expect_events(c.a, 1, 1, "a writes more"))
		goto out;
	/* with room for the holes, the same collapse goes through, to A */
	if (cg_write(c.a, "memory.tmpfs.max", "2M") ||
	    expect_collapse(c.b, path, false, "b within a's limit"))
		goto out;
	if (expect_cg(c.a, HPAGE, HPAGE, HPAGE, "collapsed") ||
	    expect_cg(c.b, 0, 0, 0, "collapsed") || verify_file(path, 1 * MiB))
		goto out;
	if (unlink(path) || expect_cg(c.a, 0, 0, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	return free_cgs(&c, path, ret);
}

/*
 * A writes the first 1M, B the second: two cgroups hold pages of the
 * range, so no collapse, by either, and nothing moves.
 */
static int test_collapse_two_holders(const char *root)
{
	const char *path = "/tmp/tmpfs_collapse_two";
	struct cgs c = { 0 };
	int ret = KSFT_FAIL;

	if (make_cgs(&c, root, "tmpfs_collapse_two") || make_file(c.a, path, 1 * MiB) ||
	    write_as(c.b, path, 1 * MiB, 1 * MiB, 1 * MiB) ||
	    expect_cg(c.a, 1 * MiB, 1 * MiB, 0, "written") ||
	    expect_cg(c.b, 1 * MiB, 1 * MiB, 0, "written") ||
	    expect_collapse(c.b, path, true, "b") || expect_collapse(c.a, path, true, "a"))
		goto out;
	if (expect_cg(c.a, 1 * MiB, 1 * MiB, 0, "refused") ||
	    expect_cg(c.b, 1 * MiB, 1 * MiB, 0, "refused") ||
	    expect_tmpfs(c.parent, HPAGE, "refused"))
		goto out;
	if (unlink(path) || expect_cg(c.a, 0, 0, 0, "unlinked") ||
	    expect_cg(c.b, 0, 0, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	return free_cgs(&c, path, ret);
}

/*
 * A collapse pays for its holes' memory.tmpfs after the huge folio's
 * memory charge. Paid out of the CPU's per-cpu stock, that must take only
 * tmpfs pages from it: memory pages taken too would stay charged for ever.
 * A task of A, on one CPU, writes all but the last page of a 2M file
 * (the CPU's stock then caches A and holds pages of both counts, which
 * pay the one hole) and collapses it, COLLAPSE_ROUNDS times, each file
 * removed at once. Once A's stocks are taken over and A is removed, its
 * parent, which never ran a task, must hold no memory charge but kernel
 * memory: memory.current equal to memory.stat's kernel. A's slab objects
 * that outlive it (2352 bytes of slab_reclaimable, a page of kernel, when
 * the program runs alone in a fresh boot; none after the tests before it
 * in make check) are reparented there and counted in kernel; pages taken
 * from a stock and never uncharged are counted nowhere (65536 bytes after
 * the 16 collapses, on the kernel that leaked them).
 */
#define COLLAPSE_ROUNDS 16

static int body_collapse_holes(const char *cgroup, void *arg)
{
	const char *base = arg;
	char path[PATH_MAX];

	if (pin_cpu(0))
		return 2;
	for (int i = 0; i < COLLAPSE_ROUNDS; i++) {
		char *map, what[32];
		int fd;

		snprintf(path, sizeof(path), "%s.%d", base, i);
		fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
		if (fd < 0 || ftruncate(fd, HPAGE) ||
		    write_pattern(fd, 0, HPAGE - page_size) != HPAGE - page_size) {
			ksft_print_msg("write %s: %s\n", path, strerror(errno));
			return 2;
		}
		map = map_huge_aligned(fd, PROT_READ | PROT_WRITE);
		if (!map)
			return 2;
		snprintf(what, sizeof(what), "round %d", i);
		if (collapse_retry(cgroup, map, what))
			return 2;
		munmap(map, HPAGE);
		close(fd);
		unlink(path);
	}
	return 0;
}

static int test_collapse_holes_from_stock(const char *root)
{
	const char *base = "/tmp/tmpfs_collapse_stock";
	char *parent, *a = NULL;
	long mem = -1, kernel = -1;
	int ret = KSFT_FAIL, r, i;

	parent = make_parent(root, "tmpfs_collapse_stock");
	if (parent)
		a = make_child(parent, "a");
	if (!a)
		goto out;
	r = cg_run(a, body_collapse_holes, (void *)base);
	if (r) {
		ksft_print_msg("collapses by a: result %d, expected %d collapses\n",
			       r, COLLAPSE_ROUNDS);
		goto out;
	}
	if (expect_tmpfs(a, 0, "files removed") || expect_tmpfs(parent, 0, "files removed"))
		goto out;
	flush_charge_stocks();
	drain_lru_batches();
	remove_cgroup(a);
	a = NULL;
	for (i = 0; i < 50; i++) {	/* 5 s: RCU frees, the dying memcg */
		kernel = memcg_stat(parent, "kernel ");
		mem = cg_read_long(parent, "memory.current");
		if (kernel >= 0 && mem == kernel)
			break;
		if (i == 20) {
			drain_lru_batches();
			flush_charge_stocks();
		}
		usleep(100000);
	}
	if (kernel < 0 || mem != kernel) {
		ksft_print_msg("%s: memory.current %ld after a's %d collapses and removal, expected memory.stat kernel %ld\n",
			       parent, mem, COLLAPSE_ROUNDS, kernel);
		goto out;
	}
	ret = KSFT_PASS;
out:
	remove_cgroup(a);
	remove_cgroup(parent);
	return ret;
}

/* khugepaged's knobs, saved and restored around its cases */
static const char *const knobs[] = { "scan_sleep_millisecs", "alloc_sleep_millisecs" };
static char saved[2][32];

static int khugepaged_fast(void)
{
	for (int i = 0; i < 2; i++)
		if (khugepaged_set(knobs[i], "10", saved[i], sizeof(saved[i])))
			return -1;
	return 0;
}

static void khugepaged_restore(void)
{
	for (int i = 0; i < 2; i++)
		if (saved[i][0])
			khugepaged_set(knobs[i], saved[i], NULL, 0);
}

static long full_scans(void)
{
	char buf[32];

	if (read_text(KHUGEPAGED "full_scans", buf, sizeof(buf)) <= 0)
		return -1;
	return atol(buf);
}

/*
 * A task of B maps the file MADV_HUGEPAGE on a huge=advise tmpfs and
 * waits (the pipe) while khugepaged scans its mm; then the parent checks.
 */
struct khp {
	const char *path;
	long written;	/* the bytes of the file that hold data */
	int go[2];	/* B's task writes a byte when mapped, reads one to end */
	int done[2];
};

static int body_khugepaged(const char *cgroup, void *arg)
{
	struct khp *k = arg;
	int fd = open(k->path, O_RDWR);
	char *map, c = 1;

	if (fd < 0)
		return 2;
	map = map_huge_aligned(fd, PROT_READ | PROT_WRITE);
	if (!map || madvise(map, HPAGE, MADV_HUGEPAGE)) {
		ksft_print_msg("MADV_HUGEPAGE: %s\n", strerror(errno));
		return 2;
	}
	/* map what is there: a read of a hole would allocate a page */
	for (long i = 0; i < k->written; i += page_size)
		(void)*(volatile char *)(map + i);
	if (write(k->go[1], &c, 1) != 1 || read(k->done[0], &c, 1) != 1)
		return 2;
	return 0;
}

/*
 * Run khugepaged against a mapping of PATH by a task of CG until the
 * range is huge (want_huge) or, when it must stay small, until
 * khugepaged has made 3 full scans since the mapping appeared.
 */
static int khugepaged_as(const char *cg, const char *path, long written,
			 bool want_huge, const char *a)
{
	struct khp k = { .path = path, .written = written };
	int pid, status, i, ret = -1;
	long scans;
	char c = 0;

	if (pipe(k.go) || pipe(k.done))
		return -1;
	pid = cg_run_nowait(cg, body_khugepaged, &k);
	if (pid < 0)
		return -1;
	if (read(k.go[0], &c, 1) != 1)
		goto out;
	scans = full_scans();
	for (i = 0; i < 600; i++) {	/* 60 s */
		if (want_huge && memcg_stat(a, "shmem_thp ") == HPAGE) {
			ret = 0;
			break;
		}
		if (!want_huge && full_scans() >= scans + 3) {
			ret = 0;
			break;
		}
		usleep(100000);
	}
	if (ret)
		ksft_print_msg("khugepaged: after 60 s, full_scans %ld -> %ld, %s shmem_thp %ld\n",
			       scans, full_scans(), a,
			       memcg_stat(a, "shmem_thp "));
out:
	if (write(k.done[1], &c, 1) != 1)
		ret = -1;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		ret = -1;
	close(k.go[0]);
	close(k.go[1]);
	close(k.done[0]);
	close(k.done[1]);
	return ret;
}

/*
 * The same three rules for khugepaged, which collapses for the task that
 * maps the file: B's task maps A's file; the huge folio is A's; over A's
 * limit, or with pages of both A and B, khugepaged leaves the range alone.
 */
static int test_khugepaged(const char *root)
{
	char dir[] = "/tmp/tmpfs_khugepaged.XXXXXX", path[PATH_MAX];
	struct cgs c = { 0 };
	int ret = KSFT_FAIL;

	if (mount_tmpfs_dir(dir, "huge=advise"))
		return KSFT_FAIL;
	snprintf(path, sizeof(path), "%s/file", dir);
	if (khugepaged_fast() || make_cgs(&c, root, "tmpfs_khugepaged"))
		goto out;

	/* over A's limit: left alone */
	if (cg_write(c.a, "memory.tmpfs.max", "1M") || make_file(c.a, path, 1 * MiB) ||
	    khugepaged_as(c.b, path, 1 * MiB, false, c.a) ||
	    expect_cg(c.a, 1 * MiB, 1 * MiB, 0, "khugepaged, a at its limit") ||
	    expect_cg(c.b, 0, 0, 0, "khugepaged, a at its limit"))
		goto out;

	/* room for the holes: collapsed, charged to A */
	if (cg_write(c.a, "memory.tmpfs.max", "max") || khugepaged_as(c.b, path, 1 * MiB, true, c.a) ||
	    expect_cg(c.a, HPAGE, HPAGE, HPAGE, "khugepaged collapsed") ||
	    expect_cg(c.b, 0, 0, 0, "khugepaged collapsed") || verify_file(path, 1 * MiB))
		goto out;

	/* pages of A and of B: left alone */
	if (make_file(c.a, path, 1 * MiB) || write_as(c.b, path, 1 * MiB, 512 * KiB, 512 * KiB) ||
	    khugepaged_as(c.b, path, 1 * MiB + 512 * KiB, false, c.a) ||
	    expect_cg(c.a, 1 * MiB, 1 * MiB, 0, "khugepaged, two holders") ||
	    expect_cg(c.b, 512 * KiB, 512 * KiB, 0, "khugepaged, two holders"))
		goto out;
	if (unlink(path) || expect_cg(c.a, 0, 0, 0, "unlinked") || expect_cg(c.b, 0, 0, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	khugepaged_restore();
	ret = free_cgs(&c, path, ret);
	umount_tmpfs_dir(dir);
	return ret;
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST_NEEDS(test_collapse_other_cgroup, NEEDS_THP),
	TMPFS_TEST_NEEDS(test_collapse_over_owner_limit, NEEDS_THP),
	TMPFS_TEST_NEEDS(test_collapse_two_holders, NEEDS_THP),
	TMPFS_TEST_NEEDS(test_collapse_holes_from_stock, NEEDS_THP),
	TMPFS_TEST_NEEDS(test_khugepaged, NEEDS_THP),
};

int main(void)
{
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
