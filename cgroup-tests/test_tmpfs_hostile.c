// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile users: an unprivileged uid (1000) in a cgroup subtree delegated
 * to it as Documentation/admin-guide/cgroup-v2.rst describes (the
 * directory, cgroup.procs, cgroup.threads and cgroup.subtree_control
 * chowned to it) under a memory.tmpfs.max of 1M set by root. It can set
 * the limits of the children it creates, never its own or an ancestor's,
 * and every way around the limit is charged as the spec says: the writer
 * pays, under its cgroup's and every ancestor's limit.
 *
 *   tmpfs_hostile/            root's, +memory
 *     deleg/      max 1M      delegated to uid 1000, which creates:
 *       home/                 where uid 1000's tasks start
 *       a/        max 512K    (set by uid 1000)
 *       b/        max "max"   (set by uid 1000)
 *     plain/                  root's cgroup, not delegated
 *     other/                  root's, no limit
 */
#include "tmpfs_util.h"

#include <grp.h>
#include <sys/socket.h>

#define UID 1000

struct deleg {
	char *top, *deleg, *home, *a, *b, *plain, *other;
};

/* Fork; the child enters CG (as root), becomes uid 1000, runs FN. */
static int run_as_user(const char *cg, int (*fn)(struct deleg *, void *),
		       struct deleg *d, void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (cg && cg_enter_current(cg))
			_exit(100);
		if (setgroups(0, NULL) || setresgid(UID, UID, UID) ||
		    setresuid(UID, UID, UID) || prctl(PR_SET_DUMPABLE, 1))
			_exit(101);
		_exit(fn(d, arg) ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status)) {
		ksft_print_msg("uid %d task killed by signal %d\n", UID, WTERMSIG(status));
		return -1;
	}
	if (WEXITSTATUS(status) >= 100)
		ksft_print_msg("uid %d task: setup step %d failed\n", UID, WEXITSTATUS(status));
	return WEXITSTATUS(status) ? -1 : 0;
}

static int expect_errno(int ret, int err, const char *what)
{
	if (ret == -1 && errno == err)
		return 0;
	ksft_print_msg("%s: %s, expected %s\n", what, ret == -1 ? strerror(errno) : "allowed",
		       strerror(err));
	return -1;
}

/* uid 1000, in deleg: make the children, move into home, enable memory */
static int user_delegate(struct deleg *d, void *arg)
{
	if (mkdir(d->home, 0755) || mkdir(d->a, 0755) || mkdir(d->b, 0755) ||
	    cg_enter_current(d->home) ||
	    cg_write(d->deleg, "cgroup.subtree_control", "+memory")) {
		ksft_print_msg("uid %d: delegation steps: %s\n", UID, strerror(errno));
		return -1;
	}
	if (cg_write(d->a, "memory.tmpfs.max", "512K") ||
	    cg_write(d->b, "memory.tmpfs.max", "max")) {
		ksft_print_msg("uid %d: setting its children's limits: %s\n", UID,
			       strerror(errno));
		return -1;
	}
	return 0;
}

static int setup_deleg(struct deleg *d, const char *root)
{
	const char *files[] = { "", "/cgroup.procs", "/cgroup.threads",
				"/cgroup.subtree_control" };
	char path[PATH_MAX];
	size_t i;

	memset(d, 0, sizeof(*d));
	d->top = make_parent(root, "tmpfs_hostile");
	d->deleg = d->top ? make_child(d->top, "deleg") : NULL;
	d->plain = d->top ? make_child(d->top, "plain") : NULL;
	d->other = d->top ? make_child(d->top, "other") : NULL;
	if (!d->deleg || !d->plain || !d->other)
		return -1;
	d->home = cg_name(d->deleg, "home");
	d->a = cg_name(d->deleg, "a");
	d->b = cg_name(d->deleg, "b");
	if (cg_write(d->deleg, "memory.tmpfs.max", "1M"))
		return -1;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s%s", d->deleg, files[i]);
		if (chown(path, UID, UID))
			return -1;
	}
	return run_as_user(d->deleg, user_delegate, d, NULL);
}

/* Every counter 0, all removed; a case that passed must leave 0 behind. */
static int teardown_deleg(struct deleg *d, int ret)
{
	char *all[] = { d->home, d->a, d->b, d->deleg, d->plain, d->other, d->top };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		if (!all[i] || access(all[i], F_OK))
			continue;
		if (ret == KSFT_PASS && expect_tmpfs(all[i], 0, "end"))
			ret = KSFT_FAIL;
	}
	for (i = 0; i < ARRAY_SIZE(all); i++)
		remove_cgroup(all[i]);
	return ret;
}

/* uid 1000 writes LEN at OFF of PATH, exactly WANT of it (else EDQUOT) */
struct uw {
	const char *path;
	long off, len, want;
};

static int user_write(struct deleg *d, void *arg)
{
	struct uw *w = arg;

	return write_req_body(NULL, &(struct write_req){ w->path, w->off, w->len, w->want });
}

static int user_own_limits(struct deleg *d, void *arg)
{
	const char *own = arg;
	char path[PATH_MAX];
	int ret = 0;

	snprintf(path, sizeof(path), "%s/memory.tmpfs.max", own);
	ret |= expect_errno(open(path, O_WRONLY), EACCES, "open own memory.tmpfs.max");
	snprintf(path, sizeof(path), "%s/memory.tmpfs.max", d->top);
	ret |= expect_errno(open(path, O_WRONLY), EACCES, "open an ancestor's memory.tmpfs.max");
	snprintf(path, sizeof(path), "%s/memory.tmpfs.inodes.max", own);
	ret |= expect_errno(open(path, O_WRONLY), EACCES, "open own memory.tmpfs.inodes.max");
	snprintf(path, sizeof(path), "%s/memory.tmpfs.inodes.max", d->top);
	ret |= expect_errno(open(path, O_WRONLY), EACCES,
			    "open an ancestor's memory.tmpfs.inodes.max");
	snprintf(path, sizeof(path), "%s/memory.max", own);
	ret |= expect_errno(open(path, O_WRONLY), EACCES, "open own memory.max");
	return ret;
}

/*
 * Neither a plain cgroup's uid nor the owner of a delegated subtree can
 * write the memory.tmpfs.max of its own cgroup or of an ancestor.
 */
static int test_own_limit(const char *root)
{
	struct deleg d;
	int ret = KSFT_FAIL;

	if (setup_deleg(&d, root) ||
	    run_as_user(d.plain, user_own_limits, &d, d.plain) ||
	    run_as_user(d.home, user_own_limits, &d, d.deleg) ||
	    expect_long(d.deleg, "memory.tmpfs.max", 1 * MiB, "deleg's max kept"))
		goto out;
	if (cg_read_strcmp(d.plain, "memory.tmpfs.max", "max\n")) {
		ksft_print_msg("plain's memory.tmpfs.max changed\n");
		goto out;
	}
	ret = KSFT_PASS;
out:
	return teardown_deleg(&d, ret);
}

/*
 * The delegate's own children: a's 512K holds, and b's "max" does not
 * get past deleg's 1M; deleg counts max, b counts fail.
 */
static int test_delegated_children(const char *root)
{
	const char *pa = "/tmp/tmpfs_hostile_a", *pb = "/tmp/tmpfs_hostile_b";
	struct uw wa = { pa, 0, 1 * MiB, 512 * KiB }, wb = { pb, 0, 2 * MiB, 512 * KiB };
	struct deleg d;
	int ret = KSFT_FAIL;

	if (setup_deleg(&d, root) ||
	    run_as_user(d.a, user_write, &d, &wa) ||
	    run_as_user(d.b, user_write, &d, &wb))
		goto out;
	if (expect_tmpfs(d.a, 512 * KiB, "a") || expect_tmpfs(d.b, 512 * KiB, "b") ||
	    expect_tmpfs(d.deleg, 1 * MiB, "deleg") ||
	    expect_tmpfs(d.top, 1 * MiB, "top") ||
	    expect_events(d.a, 1, 1, "a hit its own max") ||
	    expect_events(d.b, 0, 1, "b hit deleg's max") ||
	    /* a's events propagate, as memory.events do: its own and b's */
	    expect_events(d.deleg, 2, 2, "deleg") ||
	    check_within_memory(d.deleg, "deleg"))
		goto out;
	if (cg_read_key_long(d.deleg, "memory.events", "oom ") != 0 ||
	    cg_read_key_long(d.deleg, "memory.events", "oom_kill ") != 0)
		goto out;
	if (unlink(pa) || unlink(pb))
		goto out;
	ret = KSFT_PASS;
out:
	unlink(pa);
	unlink(pb);
	return teardown_deleg(&d, ret);
}

/* uid 1000 in b: a user and mount namespace of its own, a tmpfs in it */
static int user_userns_tmpfs(struct deleg *d, void *arg)
{
	const char *dir = arg;
	char path[PATH_MAX];

	if (enter_userns(UID))
		return -1;
	if (mount("tmpfs", dir, "tmpfs", 0, "size=64m")) {
		ksft_print_msg("mount tmpfs in the user namespace: %s\n", strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/fill", dir);
	if (write_req_body(NULL, &(struct write_req){ path, 0, 2 * MiB, 1 * MiB }))
		return -1;
	/* its own mount, its own size=: still deleg's 1M, still EDQUOT */
	return expect_tmpfs(d->b, 1 * MiB, "tmpfs in a user namespace");
}

/*
 * Run FN as uid 1000 in b with a fresh directory of /tmp it owns (made
 * from TEMPLATE), then require deleg's events to read max 1, fail 1.
 */
static int run_in_user_dir(const char *root, char *template,
			   int (*fn)(struct deleg *, void *))
{
	struct deleg d;
	int ret = KSFT_FAIL;

	if (!mkdtemp(template) || chown(template, UID, UID))
		return KSFT_FAIL;
	if (setup_deleg(&d, root) ||
	    run_as_user(d.b, fn, &d, template) ||
	    expect_events(d.deleg, 1, 1, "deleg"))
		goto out;
	ret = KSFT_PASS;
out:
	rmdir(template);
	return teardown_deleg(&d, ret);
}

static int test_escape_userns(const char *root)
{
	char dir[] = "/tmp/tmpfs_hostile_ns.XXXXXX";

	/* the namespace, its mount and its data die with the task */
	return run_in_user_dir(root, dir, user_userns_tmpfs);
}

/* uid 1000 in b: splice from a pipe, then io_uring writes */
static int user_splice_uring(struct deleg *d, void *arg)
{
	static char buf[64 * 1024];
	const char *path = arg;
	long done = 0, r;
	int fd, p[2];

	memset(buf, 0x42, sizeof(buf));
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || pipe(p))
		return -1;
	for (;;) {
		loff_t off = done;

		if (write(p[1], buf, sizeof(buf)) != sizeof(buf))
			return -1;
		r = splice(p[0], NULL, fd, &off, sizeof(buf), 0);
		if (r <= 0)
			break;
		done += r;
		if (r < (long)sizeof(buf))
			break;
	}
	if (done != 1 * MiB || r != -1 || errno != EDQUOT) {
		ksft_print_msg("splice: %ld bytes, then %s; expected 1M, then EDQUOT\n",
			       done, r < 0 ? strerror(errno) : "no error");
		return -1;
	}
	if (ftruncate(fd, 512 * KiB) || expect_tmpfs(d->b, 512 * KiB, "after splice"))
		return -1;
	for (done = 512 * KiB;;) {
		r = uring_write(fd, buf, sizeof(buf), done);
		if (r <= 0)
			break;
		done += r;
	}
	if (done != 1 * MiB || r != -EDQUOT) {
		ksft_print_msg("io_uring: up to %ld bytes, then %ld; expected 1M, then %d\n",
			       done, r, -EDQUOT);
		return -1;
	}
	close(fd);
	return expect_tmpfs(d->b, 1 * MiB, "after io_uring");
}

static int test_escape_splice_uring(const char *root)
{
	const char *path = "/tmp/tmpfs_hostile_splice";
	struct deleg d;
	int ret = KSFT_FAIL;

	if (setup_deleg(&d, root) ||
	    run_as_user(d.b, user_splice_uring, &d, (void *)path) ||
	    expect_tmpfs(d.deleg, 1 * MiB, "deleg") ||
	    expect_events(d.deleg, 2, 2, "deleg") || unlink(path))
		goto out;
	ret = KSFT_PASS;
out:
	unlink(path);
	return teardown_deleg(&d, ret);
}

/* The two ends of a socketpair, for passing a file descriptor. */
static int sock[2];

static int send_fd(int s, int fd)
{
	char c = 'f', cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(s, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int s)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(s, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* uid 1000 in b: open the file, pass it out, write only after the other */
static int user_fd_sender(struct deleg *d, void *arg)
{
	const char *path = arg;
	char c;
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	long w;

	if (fd < 0 || send_fd(sock[0], fd) || read(sock[0], &c, 1) != 1)
		return -1;
	w = write_pattern(fd, 2 * MiB, 2 * MiB);
	if (w != 1 * MiB || errno != EDQUOT) {
		ksft_print_msg("sender wrote %ld through its own fd (%s), expected 1M, then EDQUOT\n",
			       w, strerror(errno));
		return -1;
	}
	return 0;
}

/* uid 1000 in other: gets the fd and writes 2M through it */
static int user_fd_receiver(struct deleg *d, void *arg)
{
	int fd = recv_fd(sock[1]);
	long w;

	if (fd < 0)
		return -1;
	w = write_pattern(fd, 0, 2 * MiB);
	close(fd);
	if (w != 2 * MiB) {
		ksft_print_msg("receiver wrote %ld of 2M\n", w);
		return -1;
	}
	return write(sock[1], "d", 1) == 1 ? 0 : -1;
}

/*
 * A file descriptor passed over a unix socket to a task in another
 * cgroup: whoever writes pays. The receiver's 2M go to its cgroup; the
 * sender still stops at deleg's 1M.
 */
static int test_escape_fd_passing(const char *root)
{
	const char *path = "/tmp/tmpfs_hostile_fd";
	struct deleg d;
	int ret = KSFT_FAIL, status;
	pid_t receiver;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sock))
		return KSFT_FAIL;
	if (setup_deleg(&d, root))
		goto out;
	receiver = fork();
	if (receiver == 0)
		_exit(run_as_user(d.other, user_fd_receiver, &d, NULL) ? 1 : 0);
	if (receiver < 0 || run_as_user(d.b, user_fd_sender, &d, (void *)path) ||
	    waitpid(receiver, &status, 0) != receiver || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		goto out;
	if (expect_tmpfs(d.other, 2 * MiB, "receiver's cgroup") ||
	    expect_tmpfs(d.b, 1 * MiB, "sender's cgroup") ||
	    expect_tmpfs(d.deleg, 1 * MiB, "deleg") ||
	    expect_tmpfs(d.top, 3 * MiB, "top = deleg + other") ||
	    expect_events(d.other, 0, 0, "receiver's cgroup") || unlink(path))
		goto out;
	ret = KSFT_PASS;
out:
	unlink(path);
	close(sock[0]);
	close(sock[1]);
	return teardown_deleg(&d, ret);
}

/* uid 1000 in a: open, fill a, move itself to b, write on, try to leave */
static int user_move_self(struct deleg *d, void *arg)
{
	const char *path = arg;
	char procs[PATH_MAX];
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	long w;

	if (fd < 0)
		return -1;
	w = write_pattern(fd, 0, 1 * MiB);
	if (w != 512 * KiB || errno != EDQUOT) {
		ksft_print_msg("in a: wrote %ld, expected 512K, then EDQUOT\n", w);
		return -1;
	}
	if (cg_enter_current(d->b)) {
		ksft_print_msg("moving itself to b: %s\n", strerror(errno));
		return -1;
	}
	w = write_pattern(fd, 512 * KiB, 1 * MiB);
	if (w != 512 * KiB || errno != EDQUOT) {
		ksft_print_msg("in b: wrote %ld, expected 512K, then EDQUOT\n", w);
		return -1;
	}
	/* out of the delegated subtree: not allowed */
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", d->other);
	if (expect_errno(open(procs, O_WRONLY), EACCES, "open other/cgroup.procs"))
		return -1;
	if (cg_enter_current(d->top) == 0 || cg_enter_current("/sys/fs/cgroup") == 0) {
		ksft_print_msg("uid %d left its delegated subtree\n", UID);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * A task that moves itself to another of its cgroups after opening the
 * file: what it wrote stays charged where it was written, what it writes
 * next is charged to the new cgroup, and deleg's limit covers both.
 */
static int test_escape_move_self(const char *root)
{
	const char *path = "/tmp/tmpfs_hostile_move";
	struct deleg d;
	int ret = KSFT_FAIL;

	if (setup_deleg(&d, root) ||
	    run_as_user(d.a, user_move_self, &d, (void *)path) ||
	    expect_tmpfs(d.a, 512 * KiB, "a") || expect_tmpfs(d.b, 512 * KiB, "b") ||
	    expect_tmpfs(d.deleg, 1 * MiB, "deleg") || unlink(path))
		goto out;
	ret = KSFT_PASS;
out:
	unlink(path);
	return teardown_deleg(&d, ret);
}

/* uid 1000 in b: a file in one directory, filled through a hard link */
static int user_hardlink(struct deleg *d, void *arg)
{
	const char *base = arg;
	char one[PATH_MAX / 2], two[PATH_MAX / 2], f[PATH_MAX], g[PATH_MAX];

	snprintf(one, sizeof(one), "%s/one", base);
	snprintf(two, sizeof(two), "%s/two", base);
	snprintf(f, sizeof(f), "%s/f", one);
	snprintf(g, sizeof(g), "%s/g", two);
	if (mkdir(one, 0700) || mkdir(two, 0700))
		return -1;
	if (write_req_body(NULL, &(struct write_req){ f, 0, 512 * KiB, 512 * KiB }) ||
	    link(f, g) ||
	    write_req_body(NULL, &(struct write_req){ g, 512 * KiB, 1 * MiB, 512 * KiB }))
		return -1;
	if (expect_tmpfs(d->b, 1 * MiB, "through the link") || unlink(f) ||
	    expect_tmpfs(d->b, 1 * MiB, "first name gone, link holds it") ||
	    unlink(g) || expect_tmpfs(d->b, 0, "both names gone"))
		return -1;
	return rmdir(one) || rmdir(two);
}

static int test_escape_hardlink(const char *root)
{
	char dir[] = "/tmp/tmpfs_hostile_link.XXXXXX";

	return run_in_user_dir(root, dir, user_hardlink);
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_own_limit),
	TMPFS_TEST(test_delegated_children),
	TMPFS_TEST(test_escape_userns),
	TMPFS_TEST(test_escape_splice_uring),
	TMPFS_TEST(test_escape_fd_passing),
	TMPFS_TEST(test_escape_move_self),
	TMPFS_TEST(test_escape_hardlink),
};

int main(void)
{
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
