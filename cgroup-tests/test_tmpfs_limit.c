// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tmpfs.max and memory.tmpfs.events: the limit, the error each path
 * gets, the hierarchy, the interface (the series'
 * Documentation/admin-guide/cgroup-v2.rst, memory.tmpfs.max and .events).
 * Every case checks exact values, the invariants (current <= max, no OOM
 * event or kill), and ends with memory.tmpfs.current back at 0.
 */
#include "tmpfs_util.h"

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/sendfile.h>
#include <sys/statfs.h>
#include <sys/uio.h>

/* Invariants 1 and 6: within the limit, and no OOM because of it. */
static int check_limit_invariants(const char *cg, const char *when)
{
	long cur = tmpfs_current(cg);
	char buf[64];
	long max = -1;

	if (cg_read(cg, "memory.tmpfs.max", buf, sizeof(buf)))
		return -1;
	if (strncmp(buf, "max", 3))
		max = atol(buf);
	if (max >= 0 && cur > max) {
		ksft_print_msg("%s: %s memory.tmpfs.current %ld > max %ld\n",
			       when, cg, cur, max);
		return -1;
	}
	if (cg_read_key_long(cg, "memory.events", "oom ") ||
	    cg_read_key_long(cg, "memory.events", "oom_kill ")) {
		ksft_print_msg("%s: %s has OOM events: oom %ld oom_kill %ld\n", when, cg,
			       cg_read_key_long(cg, "memory.events", "oom "),
			       cg_read_key_long(cg, "memory.events", "oom_kill "));
		return -1;
	}
	return check_within_memory(cg, when);
}

/*
 * write(2) past the limit: a short count, then -1/EDQUOT; the mount is
 * not full; events max and fail count each failure, on the cgroup and
 * its parent; no OOM.
 */
static int body_write_over(const char *cgroup, void *arg)
{
	static char buf[2 * MiB];
	const char *path = arg;
	struct statfs sfs;
	ssize_t w;
	int fd;

	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		return -1;
	memset(buf, 0x3c, sizeof(buf));
	w = write(fd, buf, 2 * MiB);
	if (w != 1 * MiB) {
		ksft_print_msg("write of 2M under a 1M limit returned %zd (%s)\n", w,
			       w < 0 ? strerror(errno) : "short");
		return -1;
	}
	errno = 0;
	w = write(fd, buf, 4096);
	if (w != -1 || errno != EDQUOT) {
		ksft_print_msg("write at the limit returned %zd, errno %d (%s), expected EDQUOT\n",
			       w, errno, strerror(errno));
		return -1;
	}
	if (fstatfs(fd, &sfs) || sfs.f_bavail * sfs.f_bsize < 8 * MiB) {
		ksft_print_msg("statfs: the mount looks full\n");
		return -1;
	}
	close(fd);
	return 0;
}

static int test_write_edquot(const char *root)
{
	const char *path = "/tmp/tmpfs_limit_write";
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (setup_run(&s, root, "tmpfs_limit_write", "1M", body_write_over, (void *)path) ||
	    expect_tmpfs(s.cg, 1 * MiB, "after EDQUOT") ||
	    expect_peak(s.cg, 1 * MiB, 1 * MiB, "peak") ||
	    check_limit_invariants(s.cg, "after EDQUOT") ||
	    expect_events(s.cg, 2, 2, "cgroup") ||
	    expect_events(s.parent, 2, 2, "parent, propagated"))
		goto out;
	if (unlink(path) || expect_tmpfs(s.cg, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	return teardown(&s, path, ret);
}

static sigjmp_buf sigbus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(sigbus_jmp, 1);
}

/*
 * Stores through MAP_SHARED past the limit: SIGBUS on the first page that
 * does not fit, no OOM kill, no endless refault.
 */
static int body_mmap_over(const char *cgroup, void *arg)
{
	const char *path = arg;
	volatile long stored = 0;
	char *map;
	int fd;

	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0 || ftruncate(fd, 2 * MiB))
		return -1;
	map = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	signal(SIGBUS, on_sigbus);
	if (sigsetjmp(sigbus_jmp, 1) == 0) {
		for (long off = 0; off < 2 * MiB; off += page_size) {
			map[off] = 1;
			stored = off + page_size;
		}
		ksft_print_msg("stored 2M under a 1M limit without SIGBUS\n");
		return -1;
	}
	if (stored != 1 * MiB) {
		ksft_print_msg("SIGBUS after %ld bytes, expected after 1M\n", stored);
		return -1;
	}
	munmap(map, 2 * MiB);
	close(fd);
	return 0;
}

static int test_mmap_sigbus(const char *root)
{
	const char *path = "/tmp/tmpfs_limit_mmap";
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (!setup_run(&s, root, "tmpfs_limit_mmap", "1M", body_mmap_over, (void *)path) &&
	    !expect_tmpfs(s.cg, 1 * MiB, "after SIGBUS") &&
	    !check_limit_invariants(s.cg, "after SIGBUS") &&
	    !expect_events(s.cg, 1, 1, "after SIGBUS") && !unlink(path))
		ret = KSFT_PASS;
	return teardown(&s, path, ret);
}

/*
 * A read fault on a hole of a shared mapping allocates a page (as it does
 * under size=): loads through MAP_SHARED PROT_READ are charged, and the
 * first one past the limit gets SIGBUS. read(2) of a hole allocates
 * nothing and never fails for the limit.
 */
static int body_read_fault(const char *cgroup, void *arg)
{
	static char buf[64 * 1024];
	const char *path = arg;
	volatile long loaded = 0;
	volatile char sum = 0;
	char *map;
	long off;
	int fd;

	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0 || ftruncate(fd, 2 * MiB))
		return -1;
	map = mmap(NULL, 2 * MiB, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	signal(SIGBUS, on_sigbus);
	if (sigsetjmp(sigbus_jmp, 1) == 0) {
		for (off = 0; off < 2 * MiB; off += page_size) {
			sum += map[off];
			loaded = off + page_size;
		}
		ksft_print_msg("loaded 2M of holes under a 1M limit without SIGBUS\n");
		return -1;
	}
	if (loaded != 1 * MiB || sum != 0) {
		ksft_print_msg("SIGBUS after loading %ld bytes (sum %d), expected after 1M of zeros\n",
			       (long)loaded, sum);
		return -1;
	}
	if (expect_tmpfs(cgroup, 1 * MiB, "read faults up to the limit"))
		return -1;
	/* read(2) of the holes left: zeros, nothing charged, no error */
	for (off = 0; off < 2 * MiB; off += sizeof(buf)) {
		if (pread(fd, buf, sizeof(buf), off) != sizeof(buf)) {
			ksft_print_msg("pread at %ld at the limit: %s\n", off, strerror(errno));
			return -1;
		}
		for (size_t i = 0; i < sizeof(buf); i++)
			if (buf[i])
				return -1;
	}
	if (expect_tmpfs(cgroup, 1 * MiB, "read(2) of holes at the limit"))
		return -1;
	munmap(map, 2 * MiB);
	close(fd);
	return 0;
}

static int test_read_fault_hole(const char *root)
{
	const char *path = "/tmp/tmpfs_limit_readfault";
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (!setup_run(&s, root, "tmpfs_limit_readfault", "1M", body_read_fault, (void *)path) &&
	    !expect_tmpfs(s.cg, 1 * MiB, "after SIGBUS") &&
	    !check_limit_invariants(s.cg, "after SIGBUS") &&
	    !expect_events(s.cg, 1, 1, "one read fault refused") &&
	    !expect_events(s.parent, 1, 1, "parent") && !unlink(path))
		ret = KSFT_PASS;
	return teardown(&s, path, ret);
}

/* fallocate(2) past the limit: EDQUOT, and nothing of that call stays. */
static int body_fallocate_over(const char *cgroup, void *arg)
{
	const char *path = arg;
	int fd;

	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0 || write_pattern(fd, 0, 512 * KiB) != 512 * KiB)
		return -1;
	if (expect_tmpfs(cgroup, 512 * KiB, "512K written"))
		return -1;
	errno = 0;
	if (fallocate(fd, 0, 0, 2 * MiB) != -1 || errno != EDQUOT) {
		ksft_print_msg("fallocate 2M under a 1M limit: errno %d (%s), expected EDQUOT\n",
			       errno, strerror(errno));
		return -1;
	}
	if (expect_tmpfs(cgroup, 512 * KiB, "after the failed fallocate"))
		return -1;
	if (fallocate(fd, 0, 512 * KiB, 256 * KiB)) {
		ksft_print_msg("fallocate 256K within the limit: %s\n", strerror(errno));
		return -1;
	}
	if (expect_tmpfs(cgroup, 768 * KiB, "after fallocate within the limit"))
		return -1;
	close(fd);
	return 0;
}

static int test_fallocate_edquot(const char *root)
{
	const char *path = "/tmp/tmpfs_limit_falloc";
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (!setup_run(&s, root, "tmpfs_limit_falloc", "1M", body_fallocate_over, (void *)path) &&
	    !check_limit_invariants(s.cg, "fallocate") &&
	    !expect_events(s.cg, 1, 1, "fallocate") && !unlink(path))
		ret = KSFT_PASS;
	return teardown(&s, path, ret);
}

/*
 * Hierarchy: the parent's limit stops the second child; the parent gets
 * the max event, the child the fail event; an unlimited cgroup elsewhere
 * is unaffected; the parent is the sum of its children.
 */
static int test_hierarchy_limit(const char *root)
{
	const char *pa = "/tmp/tmpfs_hl_a", *pb = "/tmp/tmpfs_hl_b",
		   *po = "/tmp/tmpfs_hl_other";
	char *parent, *a = NULL, *b = NULL, *other_parent, *other = NULL;
	const char *children[2];
	int ret = KSFT_FAIL;

	parent = make_parent(root, "tmpfs_hl");
	a = parent ? make_child(parent, "a") : NULL;
	b = parent ? make_child(parent, "b") : NULL;
	other_parent = make_parent(root, "tmpfs_hl_other");
	other = other_parent ? make_child(other_parent, "sibling") : NULL;
	if (!a || !b || !other) {
		ksft_print_msg("cannot create the cgroups\n");
		goto out;
	}
	children[0] = a;
	children[1] = b;
	if (cg_write(parent, "memory.tmpfs.max", "1M")) {
		ksft_print_msg("cannot set the parent's limit\n");
		goto out;
	}
	if (write_as(a, pa, 0, 768 * KiB, 768 * KiB) ||
	    write_as(b, pb, 0, 512 * KiB, 256 * KiB))
		goto out;
	if (expect_tmpfs(a, 768 * KiB, "a") || expect_tmpfs(b, 256 * KiB, "b") ||
	    check_parent_sum(parent, children, 2, 0, "parent = a + b") ||
	    expect_tmpfs(parent, 1 * MiB, "parent at its limit") ||
	    check_limit_invariants(parent, "parent") ||
	    expect_events(parent, 1, 1, "parent: its limit, b's failure") ||
	    expect_events(b, 0, 1, "b: failed on the parent's limit") ||
	    expect_events(a, 0, 0, "a: no failure"))
		goto out;
	if (write_as(other, po, 0, 4 * MiB, 4 * MiB) ||
	    expect_tmpfs(other, 4 * MiB, "unlimited cgroup") ||
	    expect_events(other, 0, 0, "unlimited cgroup"))
		goto out;
	if (unlink(pa) || unlink(pb) || unlink(po)) {
		ksft_print_msg("unlink: %s\n", strerror(errno));
		goto out;
	}
	if (expect_tmpfs(parent, 0, "freed") || expect_tmpfs(other, 0, "freed"))
		goto out;
	ret = KSFT_PASS;
out:
	unlink(pa);
	unlink(pb);
	unlink(po);
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(parent);
	remove_cgroup(other);
	remove_cgroup(other_parent);
	return ret;
}

/* Write VALUE to memory.tmpfs.max; expect ERR (0 or an errno), then READ. */
static int try_max(const char *cg, const char *value, int err, const char *read)
{
	char *path = cg_control(cg, "memory.tmpfs.max");
	char buf[64];
	int fd, ret = 0;
	ssize_t w;

	fd = open(path, O_WRONLY);
	free(path);
	if (fd < 0)
		return -1;
	errno = 0;
	w = write(fd, value, strlen(value));
	close(fd);
	if (err ? (w != -1 || errno != err) : w != (ssize_t)strlen(value)) {
		ksft_print_msg("writing \"%s\": returned %zd errno %d (%s), expected %s\n",
			       value, w, errno, strerror(errno),
			       err ? strerror(err) : "success");
		ret = -1;
	}
	if (cg_read(cg, "memory.tmpfs.max", buf, sizeof(buf)) ||
	    strcmp(buf, read)) {
		ksft_print_msg("after writing \"%s\": memory.tmpfs.max reads \"%.*s\", expected \"%.*s\"\n",
			       value, (int)strcspn(buf, "\n"), buf,
			       (int)strcspn(read, "\n"), read);
		ret = -1;
	}
	return ret;
}

/*
 * Parsed as memory.swap.max: "max", numbers with K/M/G suffixes, rounded
 * down to pages; EINVAL and the old value kept otherwise. Not on the
 * root cgroup.
 */
static int test_max_interface(const char *root)
{
	struct setup s = { 0 };
	char page[32], page_plus[32], expect[32];
	int ret = KSFT_FAIL;

	if (setup(&s, root, "tmpfs_max_if", "max"))
		goto out;
	snprintf(page, sizeof(page), "%ld\n", page_size);
	snprintf(page_plus, sizeof(page_plus), "%ld", page_size + 1);
	if (try_max(s.cg, "max", 0, "max\n") ||
	    try_max(s.cg, "1M", 0, "1048576\n") ||
	    try_max(s.cg, "16K", 0, "16384\n") ||
	    try_max(s.cg, "2G", 0, "2147483648\n") ||
	    try_max(s.cg, page_plus, 0, page) ||	/* rounded down */
	    try_max(s.cg, "100", 0, "0\n") ||
	    try_max(s.cg, "1M\n", 0, "1048576\n"))
		goto out;
	snprintf(expect, sizeof(expect), "%ld\n", 1 * MiB);
	if (try_max(s.cg, "abc", EINVAL, expect) ||
	    try_max(s.cg, "-1", EINVAL, expect) ||
	    try_max(s.cg, "1X", EINVAL, expect) ||
	    try_max(s.cg, "1.5M", EINVAL, expect) ||
	    try_max(s.cg, "maxx", EINVAL, expect))
		goto out;
	/* memory.swap.max answers the same */
	if (!access(cg_control(s.cg, "memory.swap.max"), F_OK)) {
		const char *bad[] = { "abc", "-1", "1X", "1.5M", "maxx" };

		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			if (raw_write(s.cg, "memory.swap.max", bad[i], strlen(bad[i])) != EINVAL) {
				ksft_print_msg("memory.swap.max: \"%s\" is not EINVAL\n", bad[i]);
				goto out;
			}
		}
	}
	{
		char *rootfile = cg_control(root, "memory.tmpfs.max");

		if (!access(rootfile, F_OK)) {
			ksft_print_msg("%s exists on the root cgroup\n", rootfile);
			free(rootfile);
			goto out;
		}
		free(rootfile);
	}
	ret = KSFT_PASS;
out:
	return teardown(&s, NULL, ret);
}

/*
 * max=0 refuses data, not files, directories or short symlinks; a long
 * symlink is data. Lowering max below usage succeeds and frees nothing.
 */
static int body_max_zero(const char *cgroup, void *arg)
{
	char target[300];
	int fd;

	if (mkdir("/tmp/tmpfs_zero_dir", 0755) ||
	    symlink("short", "/tmp/tmpfs_zero_dir/short")) {
		ksft_print_msg("mkdir or a short symlink under max=0: %s\n", strerror(errno));
		return -1;
	}
	fd = open("/tmp/tmpfs_zero_dir/file", O_CREAT | O_WRONLY, 0644);
	if (fd < 0) {
		ksft_print_msg("creating a file under max=0: %s\n", strerror(errno));
		return -1;
	}
	errno = 0;
	if (write(fd, "x", 1) != -1 || errno != EDQUOT) {
		ksft_print_msg("one byte under max=0: errno %d, expected EDQUOT\n", errno);
		return -1;
	}
	close(fd);
	memset(target, 'l', sizeof(target) - 1);
	target[sizeof(target) - 1] = '\0';
	errno = 0;
	if (symlink(target, "/tmp/tmpfs_zero_dir/long") != -1 || errno != EDQUOT) {
		ksft_print_msg("a 299-byte symlink under max=0: errno %d, expected EDQUOT\n",
			       errno);
		return -1;
	}
	return expect_tmpfs(cgroup, 0, "max=0");
}

static int test_max_zero_and_lowering(const char *root)
{
	const char *path = "/tmp/tmpfs_lower";
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (setup(&s, root, "tmpfs_zero", "0"))
		goto out;
	if (cg_run(s.cg, body_max_zero, NULL))
		goto out;
	if (cg_write(s.cg, "memory.tmpfs.max", "max") ||
	    write_as(s.cg, path, 0, 2 * MiB, 2 * MiB))
		goto out;
	if (cg_write(s.cg, "memory.tmpfs.max", "1M") ||
	    expect_tmpfs(s.cg, 2 * MiB, "max lowered below usage: nothing freed") ||
	    write_as(s.cg, path, 2 * MiB, 4096, 0))
		goto out;
	if (truncate(path, 512 * KiB) ||
	    write_as(s.cg, path, 512 * KiB, 1 * MiB, 512 * KiB) ||
	    expect_tmpfs(s.cg, 1 * MiB, "back under, then at the limit"))
		goto out;
	if (unlink(path))
		goto out;
	ret = KSFT_PASS;
out:
	unlink("/tmp/tmpfs_zero_dir/file");
	unlink("/tmp/tmpfs_zero_dir/short");
	unlink("/tmp/tmpfs_zero_dir/long");
	rmdir("/tmp/tmpfs_zero_dir");
	return teardown(&s, path, ret);
}

/* A change of memory.tmpfs.events wakes inotify and poll(POLLPRI). */
static int test_events_notify(const char *root)
{
	const char *path = "/tmp/tmpfs_notify";
	struct events_watch w = EVENTS_WATCH_INIT;
	struct setup s = { 0 };
	int ret = KSFT_FAIL;
	char buf[4096];

	if (setup(&s, root, "tmpfs_notify", "64K") || watch_events(&w, s.cg) ||
	    write_as(s.cg, path, 0, 128 * KiB, 64 * KiB) || expect_events_wakeup(&w))
		goto out;
	if (read(w.ino, buf, sizeof(buf)) <= 0 ||
	    expect_events(s.cg, 1, 1, "after the failure"))
		goto out;
	if (unlink(path))
		goto out;
	ret = KSFT_PASS;
out:
	unwatch_events(&w);
	return teardown(&s, path, ret);
}

/*
 * The root cgroup has none of the memory.tmpfs files (CFTYPE_NOT_ON_ROOT,
 * as memory.max and memory.swap.*): nothing is charged there.
 */
static int test_root_no_files(const char *root)
{
	static const char *const files[] = { "memory.tmpfs.current",
		"memory.tmpfs.peak", "memory.tmpfs.max", "memory.tmpfs.events",
		"memory.tmpfs.inodes.current", "memory.tmpfs.inodes.max" };
	struct setup s = { 0 };
	int ret = KSFT_PASS;
	size_t i;

	if (setup(&s, root, "tmpfs_root_files", "max"))
		return teardown(&s, NULL, KSFT_FAIL);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		char *on_root = cg_control(root, files[i]);
		char *on_child = cg_control(s.cg, files[i]);

		/* the same name exists on a child: the probe can see a file */
		if (access(on_child, F_OK)) {
			ksft_print_msg("%s: %s\n", on_child, strerror(errno));
			ret = KSFT_FAIL;
		}
		errno = 0;
		if (!access(on_root, F_OK) || errno != ENOENT) {
			ksft_print_msg("%s: %s, expected ENOENT\n", on_root,
				       errno ? strerror(errno) : "exists");
			ret = KSFT_FAIL;
		}
		free(on_root);
		free(on_child);
	}
	return teardown(&s, NULL, ret);
}

/*
 * A grandchild hits its own limit: memory.tmpfs.events of the parent and
 * of the grandparent change too (events propagate), and each change is
 * notified there: inotify IN_MODIFY and poll(POLLPRI) on both.
 */
static int test_events_notify_ancestors(const char *root)
{
	const char *path = "/tmp/tmpfs_notify_up";
	char *gp, *parent = NULL, *child = NULL, buf[4096];
	const char *level[2];
	int ret = KSFT_FAIL, ino = -1, pfd[2] = { -1, -1 }, i;
	struct pollfd p[2];

	gp = make_parent(root, "tmpfs_notify_up");
	parent = gp ? make_parent(gp, "parent") : NULL;
	child = parent ? make_child(parent, "child") : NULL;
	if (!child || cg_write(child, "memory.tmpfs.max", "64K"))
		goto out;
	level[0] = parent;
	level[1] = gp;
	ino = inotify_init1(IN_NONBLOCK);
	if (ino < 0)
		goto out;
	for (i = 0; i < 2; i++) {
		char *events = cg_control(level[i], "memory.tmpfs.events");

		if (inotify_add_watch(ino, events, IN_MODIFY) < 0)
			goto out;
		pfd[i] = open(events, O_RDONLY);
		free(events);
		/* POLLPRI is raised for changes after a read */
		if (pfd[i] < 0 || read(pfd[i], buf, sizeof(buf)) <= 0)
			goto out;
	}
	if (write_as(child, path, 0, 128 * KiB, 64 * KiB))
		goto out;
	for (i = 0; i < 2; i++) {
		p[i] = (struct pollfd){ .fd = pfd[i], .events = POLLPRI };
		if (poll(&p[i], 1, 5000) < 0)
			goto out;
		if (!(p[i].revents & POLLPRI)) {
			ksft_print_msg("%s: memory.tmpfs.events: no POLLPRI (revents %#x)\n",
				       level[i], p[i].revents);
			goto out;
		}
	}
	{
		struct pollfd pi = { .fd = ino, .events = POLLIN };
		int seen[2] = { 0, 0 };
		long len, off;

		/* two watches, one IN_MODIFY each (both may come in one read) */
		while (!seen[0] || !seen[1]) {
			if (poll(&pi, 1, 5000) <= 0) {
				ksft_print_msg("inotify: IN_MODIFY on the parent %d, on the grandparent %d\n",
					       seen[0], seen[1]);
				goto out;
			}
			len = read(ino, buf, sizeof(buf));
			for (off = 0; off < len;) {
				struct inotify_event *ev = (struct inotify_event *)(buf + off);

				if (ev->mask & IN_MODIFY && ev->wd >= 1 && ev->wd <= 2)
					seen[ev->wd - 1] = 1;
				off += sizeof(*ev) + ev->len;
			}
		}
	}
	if (expect_events(child, 1, 1, "child hit its limit") ||
	    expect_events(parent, 1, 1, "parent, propagated") ||
	    expect_events(gp, 1, 1, "grandparent, propagated"))
		goto out;
	if (unlink(path) || expect_tmpfs(gp, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	if (ino >= 0)
		close(ino);
	for (i = 0; i < 2; i++)
		if (pfd[i] >= 0)
			close(pfd[i]);
	unlink(path);
	remove_cgroup(child);
	remove_cgroup(parent);
	remove_cgroup(gp);
	return ret;
}

/* The options cgroup2 is mounted with at ROOT, from /proc/self/mounts. */
static int cgroup2_options(const char *root, char *opts, size_t n)
{
	char dev[64], dir[PATH_MAX], type[64], o[512];
	FILE *f = fopen("/proc/self/mounts", "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %4095s %63s %511s %*d %*d", dev, dir, type, o) == 4)
		if (!strcmp(type, "cgroup2") && !strcmp(dir, root)) {
			snprintf(opts, n, "%s", o);
			ret = 0;
		}
	fclose(f);
	return ret;
}

/*
 * Remount cgroup2 at ROOT with its options OPTS plus (LOCAL) or minus the
 * memory_localevents option. "rw" and the like are mount flags, not
 * cgroup2 parameters: only the cgroup2 ones are passed on.
 */
static int remount_cgroup2(const char *root, const char *opts, bool local)
{
	static const char *const keep[] = { "nsdelegate", "favordynmods",
		"memory_recursiveprot", "memory_hugetlb_accounting" };
	/* a remount sets the mount's flags too: keep them */
	static const struct { const char *name; unsigned long flag; } flags[] = {
		{ "ro", MS_RDONLY }, { "nosuid", MS_NOSUID }, { "nodev", MS_NODEV },
		{ "noexec", MS_NOEXEC }, { "noatime", MS_NOATIME },
		{ "nodiratime", MS_NODIRATIME }, { "relatime", MS_RELATIME } };
	char data[512] = "", copy[512], *tok, *save;
	unsigned long mflags = MS_REMOUNT;
	size_t i;

	snprintf(copy, sizeof(copy), "%s", opts);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ARRAY_SIZE(keep); i++)
			if (!strcmp(tok, keep[i]))
				snprintf(data + strlen(data), sizeof(data) - strlen(data),
					 "%s%s", *data ? "," : "", tok);
		for (i = 0; i < ARRAY_SIZE(flags); i++)
			if (!strcmp(tok, flags[i].name))
				mflags |= flags[i].flag;
	}
	if (local)
		snprintf(data + strlen(data), sizeof(data) - strlen(data),
			 "%smemory_localevents", *data ? "," : "");
	if (mount("none", root, "cgroup2", mflags, data)) {
		ksft_print_msg("remount %s with \"%s\": %s\n", root, data, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The memory_localevents mount option: memory.tmpfs.events, like
 * memory.events, then counts only the cgroup's own events; an ancestor
 * does not count its descendants'. Without it, they propagate. A child
 * at its own limit, and a child at its parent's limit, under each.
 */
static int test_localevents(const char *root)
{
	const char *pa = "/tmp/tmpfs_localev_a", *pb = "/tmp/tmpfs_localev_b";
	char *gp, *parent = NULL, *a = NULL, *b = NULL, opts[512], now[512];
	int ret = KSFT_FAIL, pass;
	bool remounted = false;

	if (cgroup2_options(root, opts, sizeof(opts))) {
		ksft_print_msg("no cgroup2 mount at %s in /proc/self/mounts\n", root);
		return KSFT_FAIL;
	}
	if (strstr(opts, "memory_localevents")) {
		ksft_print_msg("%s is already mounted with memory_localevents\n", root);
		return KSFT_FAIL;
	}
	gp = make_parent(root, "tmpfs_localev");
	parent = gp ? make_parent(gp, "parent") : NULL;
	a = parent ? make_child(parent, "a") : NULL;
	b = parent ? make_child(parent, "b") : NULL;
	if (!a || !b)
		goto out;
	/*
	 * What each cgroup's memory.tmpfs.events reads (max, fail) after a's
	 * write and after b's, with memory_localevents (first pass), then
	 * without (second pass; the counts of the first one stay).
	 */
	static const long want[2][2][4][2] = {
		/* local: only the cgroup's own events */
		{ /* a */ { { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 } },
		  /* b */ { { 1, 1 }, { 0, 1 }, { 1, 0 }, { 0, 0 } } },
		/* propagated: a's two to the parent and grandparent, then b's */
		{ /* a */ { { 2, 2 }, { 0, 1 }, { 2, 1 }, { 1, 1 } },
		  /* b */ { { 2, 2 }, { 0, 2 }, { 3, 2 }, { 2, 2 } } },
	};
	for (pass = 0; pass < 2; pass++) {
		bool local = pass == 0;
		const char *cgs[4] = { a, b, parent, gp };
		const char *names[4] = { "a", "b", "parent", "grandparent" };
		int step, k;

		if (remount_cgroup2(root, opts, local))
			goto out;
		remounted = local;
		if (cgroup2_options(root, now, sizeof(now)) ||
		    !strstr(now, "memory_localevents") != !local) {
			ksft_print_msg("cgroup2 options after the remount: %s\n", now);
			goto out;
		}
		/* a: 64K of its own; b: what the parent's 128K leaves, 64K */
		if (cg_write(a, "memory.tmpfs.max", "64K") ||
		    cg_write(parent, "memory.tmpfs.max", "128K"))
			goto out;
		for (step = 0; step < 2; step++) {
			char when[96];

			if (write_as(step ? b : a, step ? pb : pa, 0, 128 * KiB, 64 * KiB))
				goto out;
			for (k = 0; k < 4; k++) {
				snprintf(when, sizeof(when), "memory_localevents %s, %s wrote: %s",
					 local ? "on" : "off", step ? "b" : "a", names[k]);
				if (expect_events(cgs[k], want[pass][step][k][0],
						  want[pass][step][k][1], when))
					goto out;
			}
		}
		if (unlink(pa) || unlink(pb) || expect_tmpfs(gp, 0, "unlinked"))
			goto out;
	}
	ret = KSFT_PASS;
out:
	if (remounted && remount_cgroup2(root, opts, false))
		ret = KSFT_FAIL;
	if (cgroup2_options(root, now, sizeof(now)) || strcmp(now, opts)) {
		ksft_print_msg("cgroup2 options were \"%s\", are \"%s\"\n", opts, now);
		ret = KSFT_FAIL;
	}
	unlink(pa);
	unlink(pb);
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(parent);
	remove_cgroup(gp);
	return ret;
}

/* Fail unless the /proc/vmstat counter KEY grew by WANT since BEFORE. */
static int expect_vmstat(const char *key, long before, long want)
{
	long got = vmstat(key) - before;

	if (got == want)
		return 0;
	ksft_print_msg("/proc/vmstat %s grew by %ld, expected %ld\n", key, got, want);
	return -1;
}

/*
 * huge=always, max=3M, write 4M: the first 2M is one huge folio
 * (memory.stat shmem_thp, thp_file_alloc), the second one does not fit
 * (thp_file_fallback_charge) and falls back to small pages, which fill
 * the limit to the page: exactly 3M.
 */
static int test_huge_limit(const char *root)
{
	char dir[] = "/tmp/tmpfs_hlim.XXXXXX", path[PATH_MAX];
	struct setup s = { 0 };
	int ret = KSFT_FAIL;
	long alloc = vmstat("thp_file_alloc");
	long fallback = vmstat("thp_file_fallback");
	long fallback_charge = vmstat("thp_file_fallback_charge");

	if (mount_tmpfs_dir(dir, "huge=always"))
		return KSFT_FAIL;
	snprintf(path, sizeof(path), "%s/data", dir);
	if (setup(&s, root, "tmpfs_huge_limit", "3M"))
		goto out;
	if (write_as(s.cg, path, 0, 4 * MiB, 3 * MiB) ||
	    expect_tmpfs(s.cg, 3 * MiB, "huge=always at a 3M limit") ||
	    check_limit_invariants(s.cg, "huge") ||
	    expect_peak(s.cg, 3 * MiB, 3 * MiB, "peak") ||
	    expect_events(s.cg, 1, 1, "huge: one failure, no fallback counted"))
		goto out;
	if (memcg_stat(s.cg, "shmem_thp ") != 2 * MiB) {
		ksft_print_msg("memory.stat shmem_thp %ld, expected one huge folio (%ld)\n",
			       memcg_stat(s.cg, "shmem_thp "), 2 * MiB);
		goto out;
	}
	if (expect_vmstat("thp_file_alloc", alloc, 1) ||
	    expect_vmstat("thp_file_fallback", fallback, 1) ||
	    expect_vmstat("thp_file_fallback_charge", fallback_charge, 1))
		goto out;
	if (unlink(path))
		goto out;
	ret = KSFT_PASS;
out:
	ret = teardown(&s, path, ret);
	umount_tmpfs_dir(dir);
	return ret;
}

/* At the limit with data in swap: no bypass through swap. */
static int test_swap_no_bypass(const char *root)
{
	const char *path = "/tmp/tmpfs_swap_limit";
	struct setup s = { 0 };
	int ret = KSFT_FAIL, i;

	if (setup(&s, root, "tmpfs_swap_limit", "4M"))
		goto out;
	if (write_as(s.cg, path, 0, 4 * MiB, 4 * MiB))
		goto out;
	for (i = 0; i < 10 && cg_read_long(s.cg, "memory.swap.current") < 3 * MiB; i++)
		cg_write(s.cg, "memory.reclaim", "8M");
	if (cg_read_long(s.cg, "memory.swap.current") < 3 * MiB) {
		ksft_print_msg("memory.reclaim did not swap the data out\n");
		goto out;
	}
	if (expect_tmpfs(s.cg, 4 * MiB, "in swap") ||
	    write_as(s.cg, path, 4 * MiB, 1 * MiB, 0) ||
	    expect_tmpfs(s.cg, 4 * MiB, "no bypass through swap") ||
	    verify_file(path, 4 * MiB) ||
	    check_limit_invariants(s.cg, "swap"))
		goto out;
	if (unlink(path))
		goto out;
	ret = KSFT_PASS;
out:
	/* the freed swap slots hold the cgroup's memcg until drained */
	if (drain_swap_slots())
		ret = KSFT_FAIL;
	return teardown(&s, path, ret);
}

enum write_path { PWRITE, WRITEV, SPLICE, SENDFILE, COPY_FILE_RANGE, O_DIRECT_WRITE,
		  IO_URING, NR_PATHS };
static const char * const path_names[] = { "pwrite", "writev", "splice",
	"sendfile", "copy_file_range", "O_DIRECT write", "io_uring write" };

/*
 * The refused allocations of the two calls, each an event max and fail:
 * one in each call; splice(2) from a pipe holding all 128K tries once
 * more after its short write (iter_file_splice_write() loops while the
 * pipe has data), so its first call counts two. sendfile and
 * copy_file_range go through an internal pipe of 64K: the first chunk
 * fits, the second is refused once.
 */
static const long path_events[] = { 2, 2, 3, 2, 2, 2, 2 };

#define SRC "/tmp/tmpfs_paths_src"	/* 128K, written by the root cgroup */

/* LEN bytes into FD at OFF through PATH: bytes written, or -errno. */
static long write_via(enum write_path path, int fd, long off, long len)
{
	static char *buf;
	struct iovec iov[2];
	int pipefd[2], src;
	loff_t in_off = 0, out_off = off;
	long r;

	if (!buf && posix_memalign((void **)&buf, 4096, 128 * KiB))
		return -ENOMEM;
	memset(buf, 0x77, 128 * KiB);
	switch (path) {
	case PWRITE:
		r = pwrite(fd, buf, len, off);
		break;
	case WRITEV:
		iov[0] = (struct iovec){ buf, len / 2 };
		iov[1] = (struct iovec){ buf + len / 2, len - len / 2 };
		r = pwritev(fd, iov, 2, off);
		break;
	case SPLICE:
		if (pipe(pipefd))
			return -errno;
		fcntl(pipefd[1], F_SETPIPE_SZ, 256 * KiB);
		if (write(pipefd[1], buf, len) != len)
			return -EIO;
		r = splice(pipefd[0], NULL, fd, &out_off, len, 0);
		if (r < 0)
			r = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return r;
	case SENDFILE:
	case COPY_FILE_RANGE:
		src = open(SRC, O_RDONLY);
		if (src < 0)
			return -errno;
		if (lseek(fd, off, SEEK_SET) < 0)
			return -errno;
		r = path == SENDFILE ? sendfile(fd, src, &in_off, len) :
			copy_file_range(src, &in_off, fd, &out_off, len, 0);
		if (r < 0)
			r = -errno;
		close(src);
		return r;
	case O_DIRECT_WRITE:
		r = pwrite(fd, buf, len, off);
		break;
	case IO_URING:
		return uring_write(fd, buf, len, off);
	default:
		return -EINVAL;
	}
	return r < 0 ? -errno : r;
}

/* In a cgroup with a 64K limit: 128K gives 64K, then EDQUOT. */
static int body_write_path(const char *cgroup, void *arg)
{
	enum write_path path = (long)arg;
	const char *name = path_names[path];
	long first, second;
	int fd;

	fd = open("/tmp/tmpfs_paths", O_CREAT | O_TRUNC | O_RDWR |
		  (path == O_DIRECT_WRITE ? O_DIRECT : 0), 0644);
	if (fd < 0) {
		ksft_print_msg("%s: open: %s\n", name, strerror(errno));
		return -1;
	}
	first = write_via(path, fd, 0, 128 * KiB);
	second = write_via(path, fd, first > 0 ? first : 0, 4 * KiB);
	close(fd);
	if (first != 64 * KiB || second != -EDQUOT) {
		ksft_print_msg("%s: 128K at a 64K limit gave %ld, then 4K gave %ld; expected 65536, then %d (EDQUOT)\n",
			       name, first, second, -EDQUOT);
		return -1;
	}
	return expect_tmpfs(cgroup, 64 * KiB, name);
}

/* Every write path stops at the limit with EDQUOT. */
static int test_write_paths(const char *root)
{
	struct setup s = { 0 };
	int ret = KSFT_PASS;
	long p;

	if (write_file(SRC, 128 * KiB))
		return KSFT_FAIL;
	for (p = 0; p < NR_PATHS; p++) {
		if (setup(&s, root, "tmpfs_paths", "64K") ||
		    cg_run(s.cg, body_write_path, (void *)p) ||
		    check_limit_invariants(s.cg, path_names[p]) ||
		    expect_events(s.cg, path_events[p], path_events[p], path_names[p]) ||
		    expect_events(s.parent, path_events[p], path_events[p], path_names[p]))
			ret = KSFT_FAIL;
		else
			ksft_print_msg("%s: 64K, then EDQUOT\n", path_names[p]);
		unlink("/tmp/tmpfs_paths");
		ret = teardown(&s, NULL, ret);
		s = (struct setup){ 0 };
	}
	unlink(SRC);
	return ret;
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_write_edquot),
	TMPFS_TEST(test_mmap_sigbus),
	TMPFS_TEST(test_read_fault_hole),
	TMPFS_TEST(test_fallocate_edquot),
	TMPFS_TEST(test_write_paths),
	TMPFS_TEST(test_hierarchy_limit),
	TMPFS_TEST(test_max_interface),
	TMPFS_TEST(test_max_zero_and_lowering),
	TMPFS_TEST(test_events_notify),
	TMPFS_TEST(test_events_notify_ancestors),
	TMPFS_TEST(test_localevents),
	TMPFS_TEST(test_root_no_files),
	TMPFS_TEST_NEEDS(test_huge_limit, NEEDS_THP),
	TMPFS_TEST(test_swap_no_bypass),
};

int main(void)
{
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
