// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tmpfs.inodes.current and memory.tmpfs.inodes.max (the series'
 * Documentation/admin-guide/cgroup-v2.rst, memory.tmpfs.inodes.*): every
 * kind of creation on a tmpfs counts exactly one inode to the creating
 * task's cgroup and its ancestors, links and renames count none, eviction
 * (last unlink and last close, or unmount) gives it back, a creation over
 * the limit fails with EDQUOT and leaves nothing behind, the charge stays
 * on the ancestors when its cgroup is removed, and what is not a tmpfs in
 * scope (memfd, SysV, shared anonymous memory, a mount's root, nodes that
 * devtmpfs's kernel thread creates) is not charged.
 */
#include "tmpfs_util.h"

#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif

#define INODES "memory.tmpfs.inodes.current"
#define INODES_MAX "memory.tmpfs.inodes.max"

/* 200 bytes: a page-backed symlink (shmem keeps up to 127 in the inode) */
static char long_target[201];

static int expect_inodes(const char *cg, long want, const char *when)
{
	return expect_long(cg, INODES, want, when);
}

/* What a case body runs against: its cgroup, the parent, a directory. */
struct ctx {
	const char *cg, *parent, *dir;
	bool lowered;	/* max was lowered below the count: no invariant 1 */
	char path[PATH_MAX];
};

static const char *at(struct ctx *c, const char *name)
{
	snprintf(c->path, sizeof(c->path), "%s/%s", c->dir, name);
	return c->path;
}

/*
 * The cgroup and its parent count WANT inodes, memory.tmpfs.current is
 * DATA bytes, and invariants 1 and 4 hold.
 */
static int step(struct ctx *c, long want, long data, const char *when)
{
	long max;

	if (expect_inodes(c->cg, want, when) ||
	    expect_inodes(c->parent, want, when) ||
	    expect_tmpfs(c->cg, data, when) ||
	    check_within_memory(c->cg, when))
		return -1;
	max = cg_read_long(c->cg, INODES_MAX);	/* "max" reads as 0 */
	if (!c->lowered && max > 0 && want > max) {
		ksft_print_msg("%s: %ld inodes over memory.tmpfs.inodes.max %ld\n",
			       when, want, max);
		return -1;
	}
	return 0;
}

#define STEP_OK(call, want, data) do {					\
	if ((call) < 0) {						\
		ksft_print_msg("%s: %s\n", #call, strerror(errno));	\
		return -1;						\
	}								\
	if (step(c, want, data, #call))					\
		return -1;						\
} while (0)

static int make_socket(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), ret;

	if (fd < 0)
		return -1;
	strncpy(sun.sun_path, path, sizeof(sun.sun_path) - 1);
	ret = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	return ret;
}

static int make_file(const char *path)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int whiteout_rename(const char *from, const char *to)
{
	return syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to,
		       RENAME_WHITEOUT);
}

/* Each kind of creation, one by one, in the cgroup; then each removal. */
static int body_kinds(const char *cgroup, void *arg)
{
	struct ctx *c = arg;
	char proc[64], dir2[PATH_MAX];
	struct stat st;
	int fd;

	if (expect_inodes(c->cg, 0, "new cgroup"))
		return -1;
	STEP_OK(make_file(at(c, "file")), 1, 0);
	STEP_OK(mkdir(at(c, "dir"), 0755), 2, 0);
	STEP_OK(mknod(at(c, "fifo"), S_IFIFO | 0600, 0), 3, 0);
	STEP_OK(mknod(at(c, "chr"), S_IFCHR | 0600, makedev(1, 3)), 4, 0);
	STEP_OK(symlink("short", at(c, "short")), 5, 0);
	/* a long symlink's target is a page of tmpfs data */
	STEP_OK(symlink(long_target, at(c, "long")), 6, page_size);
	STEP_OK(make_socket(at(c, "sock")), 7, page_size);

	/* O_TMPFILE: charged while open, gone at its close */
	fd = open(c->dir, O_TMPFILE | O_RDWR, 0600);
	STEP_OK(fd, 8, page_size);
	STEP_OK(close(fd), 7, page_size);

	/* an O_TMPFILE file linked in: still one inode after the close */
	fd = open(c->dir, O_TMPFILE | O_RDWR, 0600);
	STEP_OK(fd, 8, page_size);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	STEP_OK(linkat(AT_FDCWD, proc, AT_FDCWD, at(c, "linked"),
		       AT_SYMLINK_FOLLOW), 8, page_size);
	STEP_OK(close(fd), 8, page_size);

	/* RENAME_WHITEOUT: the file moves (0), a whiteout takes its name (1) */
	snprintf(dir2, sizeof(dir2), "%s/moved", c->dir);
	STEP_OK(whiteout_rename(at(c, "file"), dir2), 9, page_size);
	if (lstat(at(c, "file"), &st) || !S_ISCHR(st.st_mode) || st.st_rdev) {
		ksft_print_msg("no whiteout in place of the renamed file\n");
		return -1;
	}

	/* hard links and renames count nothing */
	snprintf(dir2, sizeof(dir2), "%s/hard", c->dir);
	STEP_OK(link(at(c, "moved"), dir2), 9, page_size);
	snprintf(dir2, sizeof(dir2), "%s/dir/hard2", c->dir);
	STEP_OK(rename(at(c, "hard"), dir2), 9, page_size);
	STEP_OK(mkdir(at(c, "dir/sub"), 0755), 10, page_size);
	snprintf(dir2, sizeof(dir2), "%s/sub", c->dir);
	STEP_OK(rename(at(c, "dir/sub"), dir2), 10, page_size);
	/* one of two links: the inode stays */
	STEP_OK(unlink(at(c, "dir/hard2")), 10, page_size);

	/* each removal gives its inode back at once */
	STEP_OK(unlink(at(c, "moved")), 9, page_size);
	STEP_OK(unlink(at(c, "file")), 8, page_size);
	STEP_OK(rmdir(at(c, "sub")), 7, page_size);
	STEP_OK(rmdir(at(c, "dir")), 6, page_size);
	STEP_OK(unlink(at(c, "linked")), 5, page_size);
	STEP_OK(unlink(at(c, "long")), 4, 0);
	STEP_OK(unlink(at(c, "short")), 3, 0);
	STEP_OK(unlink(at(c, "sock")), 2, 0);
	STEP_OK(unlink(at(c, "chr")), 1, 0);
	STEP_OK(unlink(at(c, "fifo")), 0, 0);
	return 0;
}

static int make_dir(char *dir)
{
	if (!mkdtemp(dir)) {
		ksft_print_msg("mkdtemp %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* setup() with memory.tmpfs.max MAX, for the bodies of C. */
static int setup_ctx(struct setup *s, struct ctx *c, const char *root, const char *name,
		     const char *max)
{
	if (setup(s, root, name, max))
		return -1;
	c->cg = s->cg;
	c->parent = s->parent;
	return 0;
}

/*
 * A case whose BODY runs in a new cgroup NAME, in the directory made from
 * the template DIR (outside the cgroup: it never counts). With GONE, the
 * cgroup must count no inode once the body's task is gone.
 */
static int run_ctx_case(const char *root, char *dir, const char *name,
			int (*body)(const char *, void *), const char *gone)
{
	struct ctx c = { .dir = dir };
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (make_dir(dir))
		return KSFT_FAIL;
	if (!setup_ctx(&s, &c, root, name, "max") && !cg_run(s.cg, body, &c) &&
	    !(gone && expect_inodes(s.cg, 0, gone)))
		ret = KSFT_PASS;
	rmdir(dir);
	return teardown(&s, NULL, ret);
}

static int test_inodes_kinds(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes.XXXXXX";

	return run_ctx_case(root, dir, "tmpfs_inodes_kinds", body_kinds, NULL);
}

/* The last unlink of an open, or mapped, file: charged until the last close. */
static int body_open_unlink(const char *cgroup, void *arg)
{
	struct ctx *c = arg;
	char *map;
	int fd;

	fd = open(at(c, "open"), O_CREAT | O_RDWR, 0600);
	STEP_OK(fd, 1, 0);
	STEP_OK(unlink(at(c, "open")), 1, 0);
	STEP_OK(close(fd), 0, 0);

	fd = open(at(c, "mapped"), O_CREAT | O_RDWR, 0600);
	STEP_OK(fd, 1, 0);
	STEP_OK(ftruncate(fd, page_size), 1, 0);
	map = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	map[0] = 1;
	STEP_OK(close(fd), 1, page_size);
	STEP_OK(unlink(at(c, "mapped")), 1, page_size);
	STEP_OK(munmap(map, page_size), 0, 0);
	return 0;
}

static int test_inodes_open_unlink(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes_open.XXXXXX";

	return run_ctx_case(root, dir, "tmpfs_inodes_open", body_open_unlink, NULL);
}

static long free_inodes(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) ? -1 : (long)sf.f_ffree;
}

/*
 * A creation that fails with EDQUOT leaves no name (lstat: ENOENT), no
 * inode charged, and nothing of the superblock's nr_inodes.
 */
static int expect_refused(struct ctx *c, int ret, const char *name,
			  long ffree, long want, const char *what)
{
	struct stat st;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	if (ret >= 0 || errno != EDQUOT) {
		ksft_print_msg("%s at the limit: %s, expected EDQUOT\n", what,
			       ret >= 0 ? "succeeded" : strerror(errno));
		return -1;
	}
	if (!lstat(path, &st) || errno != ENOENT) {
		ksft_print_msg("%s: %s exists after EDQUOT\n", what, path);
		return -1;
	}
	if (free_inodes(c->dir) != ffree) {
		ksft_print_msg("%s: free inodes of the mount %ld -> %ld\n", what,
			       ffree, free_inodes(c->dir));
		return -1;
	}
	return step(c, want, 0, what);
}

#define LIMIT 3

/* At LIMIT inodes, every kind of creation fails; removing one makes room. */
static int body_limit(const char *cgroup, void *arg)
{
	struct ctx *c = arg;
	char to[PATH_MAX];
	long ffree;
	int i, n = 0;

	for (i = 0; i < LIMIT; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		STEP_OK(make_file(at(c, name)), i + 1, 0);
	}
	ffree = free_inodes(c->dir);
#define REFUSED(call, name) do {					\
	int r = (call);							\
									\
	n++;								\
	if (expect_refused(c, r, name, ffree, LIMIT, #call) ||		\
	    expect_inode_events(c->cg, 0, 0, n, n, #call) ||		\
	    expect_inode_events(c->parent, 0, 0, n, n, #call))		\
		return -1;						\
} while (0)
	REFUSED(make_file(at(c, "new")), "new");
	REFUSED(mkdir(at(c, "newdir"), 0755), "newdir");
	REFUSED(mknod(at(c, "fifo"), S_IFIFO | 0600, 0), "fifo");
	REFUSED(mknod(at(c, "chr"), S_IFCHR | 0600, makedev(1, 3)), "chr");
	REFUSED(symlink("short", at(c, "short")), "short");
	REFUSED(symlink(long_target, at(c, "long")), "long");
	REFUSED(make_socket(at(c, "sock")), "sock");
	REFUSED(open(c->dir, O_TMPFILE | O_RDWR, 0600), "tmpfile");
	/* the rename does not happen: f0 keeps its name, no "moved" */
	snprintf(to, sizeof(to), "%s/moved", c->dir);
	REFUSED(whiteout_rename(at(c, "f0"), to), "moved");
	if (access(at(c, "f0"), F_OK)) {
		ksft_print_msg("f0 is gone after a refused RENAME_WHITEOUT\n");
		return -1;
	}
	/* a link and a plain rename need no inode: they succeed at the limit */
	STEP_OK(link(at(c, "f0"), to), LIMIT, 0);
	STEP_OK(rename(to, at(c, "renamed")), LIMIT, 0);
	STEP_OK(unlink(at(c, "renamed")), LIMIT, 0);

	/* room for one again */
	STEP_OK(unlink(at(c, "f0")), LIMIT - 1, 0);
	STEP_OK(mkdir(at(c, "newdir"), 0755), LIMIT, 0);
	REFUSED(make_file(at(c, "new")), "new");
	return 0;
}

static int test_inodes_limit(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes_limit.XXXXXX";
	char limit[16];
	struct setup s = { 0 };
	struct ctx c = { .dir = dir };
	int ret = KSFT_FAIL, i;

	if (make_dir(dir))
		return KSFT_FAIL;
	snprintf(limit, sizeof(limit), "%d", LIMIT);
	if (setup_ctx(&s, &c, root, "tmpfs_inodes_limit", "max") ||
	    cg_write(s.cg, INODES_MAX, limit) ||
	    expect_long(s.cg, INODES_MAX, LIMIT, "set"))
		goto out;
	if (cg_run(s.cg, body_limit, &c))
		goto out;
	/* no OOM, and the byte limit never counted inodes */
	if (cg_read_key_long(s.cg, "memory.events", "oom ") != 0 ||
	    expect_inode_events(s.cg, 0, 0, 10, 10, "end"))
		goto out;
	ret = KSFT_PASS;
out:
	for (i = 1; i < LIMIT; i++) {
		char name[PATH_MAX];

		snprintf(name, sizeof(name), "%s/f%d", dir, i);
		unlink(name);
	}
	snprintf(c.path, sizeof(c.path), "%s/newdir", dir);
	rmdir(c.path);
	if (ret == KSFT_PASS && expect_inodes(s.cg, 0, "removed"))
		ret = KSFT_FAIL;
	rmdir(dir);
	return teardown(&s, NULL, ret);
}

/* A file x may not be created: EDQUOT (WHERE: at which limit). */
static int expect_no_creation(struct ctx *c, const char *where)
{
	errno = 0;
	if (make_file(at(c, "x")) == 0 || errno != EDQUOT) {
		ksft_print_msg("creation %s: %s\n", where, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Lowering memory.tmpfs.inodes.max below the count succeeds and removes
 * nothing; creation fails until the count is below it again. A
 * memory.tmpfs.max of 0 refuses data, not inodes.
 */
static int body_lower(const char *cgroup, void *arg)
{
	struct ctx *c = arg;
	int i;

	for (i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "g%d", i);
		STEP_OK(make_file(at(c, name)), i + 1, 0);
	}
	if (cg_write(c->cg, INODES_MAX, "2") || expect_inodes(c->cg, 4, "lowered"))
		return -1;
	c->lowered = true;
	if (expect_no_creation(c, "over a lowered limit"))
		return -1;
	STEP_OK(unlink(at(c, "g0")), 3, 0);
	STEP_OK(unlink(at(c, "g1")), 2, 0);
	if (expect_no_creation(c, "at the limit"))
		return -1;
	STEP_OK(unlink(at(c, "g2")), 1, 0);
	STEP_OK(make_file(at(c, "x")), 2, 0);
	STEP_OK(unlink(at(c, "x")), 1, 0);
	STEP_OK(unlink(at(c, "g3")), 0, 0);
	return 0;
}

static int test_inodes_lower_limit(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes_lower.XXXXXX";
	struct setup s = { 0 };
	struct ctx c = { .dir = dir };
	int ret = KSFT_FAIL;

	if (make_dir(dir))
		return KSFT_FAIL;
	/* memory.tmpfs.max 0: data is refused, creation is not */
	if (setup_ctx(&s, &c, root, "tmpfs_inodes_lower", "0"))
		goto out;
	if (cg_run(s.cg, body_lower, &c) ||
	    expect_inode_events(s.cg, 0, 0, 2, 2, "end"))
		goto out;
	ret = KSFT_PASS;
out:
	rmdir(dir);
	return teardown(&s, NULL, ret);
}

struct create_req {
	const char *dir, *prefix;
	int n, want;	/* create N files; the first WANT succeed, then EDQUOT */
};

static int body_create(const char *cgroup, void *arg)
{
	const struct create_req *r = arg;
	char path[PATH_MAX];
	int i;

	for (i = 0; i < r->n; i++) {
		int ret;

		snprintf(path, sizeof(path), "%s/%s%d", r->dir, r->prefix, i);
		errno = 0;
		ret = make_file(path);
		if (i < r->want ? ret : (!ret || errno != EDQUOT)) {
			ksft_print_msg("%s: %s, file %d of %d, expected %s\n", path,
				       ret ? strerror(errno) : "created", i + 1,
				       r->n, i < r->want ? "success" : "EDQUOT");
			return -1;
		}
	}
	return 0;
}

static void remove_files(const char *dir, const char *prefix, int n)
{
	char path[PATH_MAX];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s%d", dir, prefix, i);
		unlink(path);
	}
}

/*
 * Hierarchy: the parent's limit binds both children; the parent counts
 * the sum of theirs; "inodes_max" is raised on the parent, "inodes_fail"
 * on the child that was charged (and on the parent, propagated). The
 * charge stays with the cgroup that created the inode, whoever removes
 * or renames it.
 */
static int test_inodes_hierarchy(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes_tree.XXXXXX";
	char *parent = NULL, *a = NULL, *b = NULL;
	const char *children[2];
	struct create_req ra = { dir, "a", 3, 3 }, rb = { dir, "b", 3, 1 };
	char from[PATH_MAX], to[PATH_MAX];
	int ret = KSFT_FAIL;

	if (make_dir(dir))
		return KSFT_FAIL;
	parent = make_parent(root, "tmpfs_inodes_tree");
	a = parent ? make_child(parent, "a") : NULL;
	b = a ? make_child(parent, "b") : NULL;
	if (!b || cg_write(parent, INODES_MAX, "4") || cg_write(b, INODES_MAX, "10"))
		goto out;
	children[0] = a;
	children[1] = b;
	if (cg_run(a, body_create, &ra) || cg_run(b, body_create, &rb))
		goto out;
	if (expect_inodes(a, 3, "a") || expect_inodes(b, 1, "b") ||
	    expect_inodes(parent, 4, "parent"))
		goto out;
	/* rb: 2 refused creations */
	if (expect_inode_events(parent, 0, 0, 2, 2, "parent") ||
	    expect_inode_events(a, 0, 0, 0, 0, "a") ||
	    expect_inode_events(b, 0, 0, 0, 2, "b"))
		goto out;
	/* a rename by another cgroup's task: the charge stays on a */
	snprintf(from, sizeof(from), "%s/a0", dir);
	snprintf(to, sizeof(to), "%s/b-renamed", dir);
	if (rename(from, to) || expect_inodes(a, 3, "renamed") ||
	    expect_inodes(parent, 4, "renamed") ||
	    check_parent_sum(parent, children, 2, 0, "renamed"))
		goto out;
	if (unlink(to) || expect_inodes(a, 2, "a0 unlinked") ||
	    expect_inodes(b, 1, "a0 unlinked") ||
	    expect_inodes(parent, 3, "a0 unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	remove_files(dir, "a", 3);
	remove_files(dir, "b", 3);
	if (ret == KSFT_PASS && (expect_inodes(a, 0, "end") ||
				 expect_inodes(b, 0, "end") ||
				 expect_inodes(parent, 0, "end")))
		ret = KSFT_FAIL;
	rmdir(dir);
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(parent);
	return ret;
}

/*
 * rmdir of a cgroup whose inodes exist: the charge stays on the parent
 * until the inodes go, and the removed memcg is not pinned (the runner
 * checks that no cgroup stays dying). A top-level cgroup's charge leaves
 * with it (the root has no memory.tmpfs): no counter underflows when its
 * inodes go later.
 */
static int test_inodes_rmdir(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes_rmdir.XXXXXX";
	struct create_req r = { dir, "r", 5, 5 }, top = { dir, "t", 2, 2 };
	struct setup s = { 0 };
	char *toplevel = NULL;
	int ret = KSFT_FAIL;
	long dying;

	if (make_dir(dir))
		return KSFT_FAIL;
	if (setup(&s, root, "tmpfs_inodes_rmdir", "max") ||
	    cg_run(s.cg, body_create, &r) ||
	    expect_inodes(s.parent, 5, "created"))
		goto out;
	dying = nr_dying(root);
	remove_cgroup(s.cg);
	s.cg = NULL;
	/* its inodes do not keep the removed cgroup dying */
	if (expect_inodes(s.parent, 5, "child removed") ||
	    wait_dying(root, dying, "inodes of a removed cgroup exist"))
		goto out;
	remove_files(dir, "r", 2);
	if (expect_inodes(s.parent, 3, "two unlinked after rmdir"))
		goto out;
	remove_files(dir, "r", 5);
	if (expect_inodes(s.parent, 0, "all unlinked after rmdir"))
		goto out;

	toplevel = make_child(root, "tmpfs_inodes_top");
	if (!toplevel || cg_run(toplevel, body_create, &top) ||
	    expect_inodes(toplevel, 2, "top-level"))
		goto out;
	remove_cgroup(toplevel);
	toplevel = NULL;
	remove_files(dir, "t", 2);
	ret = KSFT_PASS;
out:
	remove_files(dir, "r", 5);
	remove_files(dir, "t", 2);
	remove_cgroup(toplevel);
	rmdir(dir);
	return teardown(&s, NULL, ret);
}

/*
 * Not charged: memfd, SysV shm, shared anonymous memory (kernel-internal
 * shmem), the root directory that a mount creates, and the device nodes
 * that devtmpfs's kernel thread creates for a device the task adds (a
 * zram device). A node the task itself creates in devtmpfs is charged.
 */
static int body_not_charged(const char *cgroup, void *arg)
{
	struct ctx *c = arg;
	char buf[32], node[64];
	int fd, id, n;
	char *p;

	fd = memfd_create("tmpfs_inodes", 0);
	STEP_OK(fd, 0, 0);
	id = shmget(IPC_PRIVATE, page_size, IPC_CREAT | 0600);
	STEP_OK(id, 0, 0);
	p = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	p[0] = 1;
	if (step(c, 0, 0, "memfd, SysV and shared anonymous"))
		return -1;
	munmap(p, page_size);
	shmctl(id, IPC_RMID, NULL);
	close(fd);

	/* a tmpfs mounted by the task: its root directory is not charged */
	STEP_OK(mount("tmpfs", c->dir, "tmpfs", 0, "size=1m"), 0, 0);
	STEP_OK(mkdir(at(c, "sub"), 0755), 1, 0);
	/* unmounting evicts every inode of the mount */
	STEP_OK(umount(c->dir), 0, 0);

	/* devtmpfs: devtmpfsd creates /dev/zramN before hot_add returns */
	fd = open("/sys/class/zram-control/hot_add", O_RDONLY);
	if (fd < 0) {
		ksft_print_msg("/sys/class/zram-control/hot_add: %s\n", strerror(errno));
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	id = atoi(buf);
	snprintf(node, sizeof(node), "/dev/zram%d", id);
	if (access(node, F_OK)) {
		ksft_print_msg("%s: %s\n", node, strerror(errno));
		return -1;
	}
	if (step(c, 0, 0, "devtmpfs node of a hot-added zram device"))
		return -1;
	fd = open("/sys/class/zram-control/hot_remove", O_WRONLY);
	n = snprintf(buf, sizeof(buf), "%d", id);
	if (fd < 0 || write(fd, buf, n) != n) {
		ksft_print_msg("zram hot_remove %d: %s\n", id, strerror(errno));
		return -1;
	}
	close(fd);

	/* the task's own mknod in devtmpfs is charged */
	STEP_OK(mknod("/dev/tmpfs_inodes_null", S_IFCHR | 0600, makedev(1, 3)), 1, 0);
	STEP_OK(unlink("/dev/tmpfs_inodes_null"), 0, 0);
	return 0;
}

static int test_inodes_not_charged(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes_scope.XXXXXX";
	int ret = run_ctx_case(root, dir, "tmpfs_inodes_scope", body_not_charged, NULL);

	/* what a body that failed left: its mount (the rmdir failed), its node */
	umount(dir);
	unlink("/dev/tmpfs_inodes_null");
	rmdir(dir);
	return ret;
}

/* A tmpfs mounted in a user namespace by an unprivileged task is charged. */
static int body_userns(const char *cgroup, void *arg)
{
	struct ctx *c = arg;

	chmod(c->dir, 0777);
	if (enter_userns_as_nobody())
		return -1;
	STEP_OK(mount("tmpfs", c->dir, "tmpfs", 0, "size=1m"), 0, 0);
	STEP_OK(make_file(at(c, "a")), 1, 0);
	STEP_OK(mkdir(at(c, "d"), 0755), 2, 0);
	STEP_OK(symlink("a", at(c, "l")), 3, 0);
	/* the mount, and its inodes, go with the namespace when this exits */
	return 0;
}

static int test_inodes_userns(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes_userns.XXXXXX";

	return run_ctx_case(root, dir, "tmpfs_inodes_userns", body_userns,
			    "the namespace's mount gone");
}

/*
 * overlayfs with its upper layer on a tmpfs: what it creates in the
 * upper layer for the task is charged to the task's cgroup. A new file,
 * a new directory and a copy-up each add exactly one inode; the first
 * whiteout adds one, and later ones none: overlayfs links them all to
 * one whiteout inode of its work directory.
 */
static int body_overlay(const char *cgroup, void *arg)
{
	struct ctx *c = arg;
	int fd;

	STEP_OK(make_file(at(c, "merged/new")), 1, 0);
	STEP_OK(mkdir(at(c, "merged/newdir"), 0755), 2, 0);
	fd = open(at(c, "merged/lower1"), O_WRONLY);	/* copy-up */
	STEP_OK(fd, 3, 0);
	close(fd);
	STEP_OK(unlink(at(c, "merged/lower2")), 4, 0);
	STEP_OK(unlink(at(c, "merged/lower3")), 4, 0);
	return 0;
}

static int test_inodes_overlay(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes_ovl.XXXXXX";
	const char *sub[] = { "lower", "upper", "work", "merged" };
	char opts[512], path[PATH_MAX];
	struct setup s = { 0 };
	struct ctx c = { .dir = dir };
	int ret = KSFT_FAIL, mounted = 0, i;

	if (make_dir(dir))
		return KSFT_FAIL;
	if (setup_ctx(&s, &c, root, "tmpfs_inodes_ovl", "max") ||
	    mount("tmpfs", dir, "tmpfs", 0, "size=4m")) {
		ksft_print_msg("mount: %s\n", strerror(errno));
		goto out;
	}
	mounted = 1;
	for (i = 0; i < 4; i++)
		if (mkdir(at(&c, sub[i]), 0755))
			goto out;
	for (i = 1; i <= 3; i++) {
		snprintf(path, sizeof(path), "lower/lower%d", i);
		if (make_file(at(&c, path)))
			goto out;
	}
	snprintf(opts, sizeof(opts), "lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work",
		 dir, dir, dir);
	if (mount("overlay", at(&c, "merged"), "overlay", 0, opts)) {
		ksft_print_msg("mount overlay: %s\n", strerror(errno));
		goto out;
	}
	mounted = 2;
	if (cg_run(s.cg, body_overlay, &c))
		goto out;
	if (umount(at(&c, "merged")))
		goto out;
	mounted = 1;
	/* the upper layer's inodes stay charged until the tmpfs goes */
	if (expect_inodes(s.cg, 4, "overlay unmounted"))
		goto out;
	if (umount(dir))
		goto out;
	mounted = 0;
	if (expect_inodes(s.cg, 0, "tmpfs unmounted"))
		goto out;
	ret = KSFT_PASS;
out:
	if (mounted == 2)
		umount(at(&c, "merged"));
	if (mounted)
		umount(dir);
	rmdir(dir);
	return teardown(&s, NULL, ret);
}

/* A refused creation changes memory.tmpfs.events: inotify and poll wake. */
static int test_inodes_events_notify(const char *root)
{
	char dir[] = "/tmp/tmpfs_inodes_notify.XXXXXX";
	struct create_req r = { dir, "n", 2, 1 };
	struct events_watch w = EVENTS_WATCH_INIT;
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (make_dir(dir))
		return KSFT_FAIL;
	if (setup(&s, root, "tmpfs_inodes_notify", "max") ||
	    cg_write(s.cg, INODES_MAX, "1") || watch_events(&w, s.cg) ||
	    cg_run(s.cg, body_create, &r) || expect_events_wakeup(&w) ||
	    expect_inode_events(s.cg, 0, 0, 1, 1, "after the refusal"))
		goto out;
	ret = KSFT_PASS;
out:
	unwatch_events(&w);
	remove_files(dir, "n", 2);
	rmdir(dir);
	return teardown(&s, NULL, ret);
}

#define OLD "100"

/* memory.tmpfs.inodes.max: pids.max's parser, without its upper bound */
static const struct {
	const char *name, *buf;
	size_t len;
	int err;
	const char *after;
} table[] = {
#define IN(s) s, sizeof(s) - 1
	{ "empty write",	"", 0, 0, OLD },	/* never reaches the parser */
	{ "one space",		IN(" "), EINVAL, OLD },
	{ "newline only",	IN("\n"), EINVAL, OLD },
	{ "NUL byte only",	IN("\0"), EINVAL, OLD },
	{ "negative",		IN("-1"), EINVAL, OLD },
	{ "minus zero",		IN("-0"), 0, "0" },
	{ "plus sign",		IN("+5"), 0, "5" },
	{ "letters",		IN("abc"), EINVAL, OLD },
	{ "maxx",		IN("maxx"), EINVAL, OLD },
	{ "MAX",		IN("MAX"), EINVAL, OLD },
	{ "max max",		IN("max max"), EINVAL, OLD },
	{ "suffix K",		IN("1K"), EINVAL, OLD },
	{ "suffix k",		IN("1k"), EINVAL, OLD },
	{ "decimal point",	IN("1.5"), EINVAL, OLD },
	{ "two numbers",	IN("1 2"), EINVAL, OLD },
	{ "two lines",		IN("5\n6\n"), EINVAL, OLD },
	{ "bare 0x",		IN("0x"), EINVAL, OLD },
	{ "hex digits, no 0x",	IN("ff"), EINVAL, OLD },
	{ "bad octal",		IN("08"), EINVAL, OLD },
	{ "NUL then junk",	IN("5\0junk"), 0, "5" },
	{ "surrounding blanks",	IN(" \t42 \n"), 0, "42" },
	{ "max, newline",	IN("max\n"), 0, "max" },
	{ "blank, max",		IN(" max"), 0, "max" },
	{ "zero",		IN("0"), 0, "0" },
	{ "hex",		IN("0x10"), 0, "16" },
	{ "octal",		IN("010"), 0, "8" },
	{ "over PID_MAX_LIMIT",	IN("4194305"), 0, "4194305" },
	{ "2^51 - 2",		IN("2251799813685246"), 0, "2251799813685246" },
	{ "2^51 - 1 (the max)",	IN("2251799813685247"), 0, "max" },
	{ "2^63 - 1",		IN("9223372036854775807"), 0, "max" },
	{ "2^63",		IN("9223372036854775808"), EINVAL, OLD },
	{ "2^64",		IN("18446744073709551616"), EINVAL, OLD },
	{ "4096 bytes",		NULL, 4096, 0, "5" },
	{ "4097 bytes",		NULL, 4097, E2BIG, OLD },
};

static int test_inodes_max_parse(const char *root)
{
	static char longbuf[4097];
	struct setup s = { 0 };
	int ret = KSFT_FAIL, bad = 0, err;
	char got[64];
	size_t i;

	if (setup(&s, root, "tmpfs_inodes_parse", "max") ||
	    expect_long(s.cg, INODES_MAX, 0, "default") ||
	    cg_read_strcmp(s.cg, INODES_MAX, "max\n"))
		goto out;
	/* leading zeros (octal) then 5 */
	memset(longbuf, '0', sizeof(longbuf));
	longbuf[4095] = '5';
	for (i = 0; i < ARRAY_SIZE(table); i++) {
		const char *buf = table[i].buf ? table[i].buf : longbuf;
		char *nl;

		if (cg_write(s.cg, INODES_MAX, OLD))
			goto out;
		err = raw_write(s.cg, INODES_MAX, buf, table[i].len ? table[i].len :
				(table[i].buf ? strlen(table[i].buf) : 0));
		if (cg_read(s.cg, INODES_MAX, got, sizeof(got)))
			goto out;
		nl = strchr(got, '\n');
		if (nl)
			*nl = '\0';
		ksft_print_msg("%-22s -> %-6s %s\n", table[i].name,
			       err ? strerror(err) : "ok", got);
		if (err != table[i].err || strcmp(got, table[i].after)) {
			ksft_print_msg("  expected %s and %s\n",
				       table[i].err ? strerror(table[i].err) : "success",
				       table[i].after);
			bad++;
		}
	}
	if (cg_read_strcmp(s.cg, "memory.tmpfs.events",
			   "max 0\nfail 0\ninodes_max 0\ninodes_fail 0\n")) {
		ksft_print_msg("memory.tmpfs.events has not the four keys\n");
		bad++;
	}
	/* memory.tmpfs.inodes.current is read-only */
	err = raw_write(s.cg, INODES, IN("0"));
	if (err != EINVAL) {
		ksft_print_msg("write to %s: %s, expected EINVAL\n", INODES,
			       err ? strerror(err) : "accepted");
		bad++;
	}
	if (!bad)
		ret = KSFT_PASS;
out:
	return teardown(&s, NULL, ret);
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_inodes_kinds),
	TMPFS_TEST(test_inodes_open_unlink),
	TMPFS_TEST(test_inodes_limit),
	TMPFS_TEST(test_inodes_lower_limit),
	TMPFS_TEST(test_inodes_hierarchy),
	TMPFS_TEST(test_inodes_rmdir),
	TMPFS_TEST(test_inodes_not_charged),
	TMPFS_TEST(test_inodes_userns),
	TMPFS_TEST(test_inodes_overlay),
	TMPFS_TEST(test_inodes_events_notify),
	TMPFS_TEST(test_inodes_max_parse),
};

int main(void)
{
	memset(long_target, 'x', sizeof(long_target) - 1);
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
