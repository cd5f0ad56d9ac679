// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU batched charge of memory.tmpfs (the series'
 * Documentation/admin-guide/cgroup-v2.rst, memory.tmpfs.current and .max),
 * on a guest with 2 CPUs: a CPU may charge up to 64 pages ahead of use,
 * yet the limit stays exact (EDQUOT only when the data plus the allocation
 * would exceed it), memory.tmpfs.current excludes the pages charged ahead,
 * peak stays within its bound, and lowering max, removing a cgroup and
 * taking a CPU offline return those pages. A free, on the data's CPU or
 * on another whose stock caches another memcg, gives the pages back to
 * the right cgroup at once.
 *
 * What a CPU holds ahead of use is seen through memory.tmpfs.peak: a write
 * to it resets the watermark seen through that file descriptor to the
 * page_counter's usage, which includes the pages charged ahead.
 */
#include "tmpfs_util.h"

#define BATCH TMPFS_BATCH_PAGES	/* MEMCG_CHARGE_BATCH */

static int nr_cpus;

/* The usage, pages charged ahead of use included: reset peak, read it. */
static long usage_with_stocks(const char *cg)
{
	char buf[64];
	ssize_t n;
	int fd = reset_peak(cg);

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return atol(buf);
}

/*
 * A worker: a process in cgroup CG on CPU, which appends one page to its
 * file PATH per token read from its command pipe and answers with the
 * pwrite's result (bytes, or -errno); it unlinks the file on a 'u' token
 * and exits on EOF.
 */
struct worker {
	pid_t pid;
	int cmd, res;
};

/*
 * Fork W into cgroup CG on CPU with a command and an answer pipe, and
 * have it run SERVE(its command end, its answer end, ARG) until that
 * returns (then it exits 0; it exits 1 when it cannot get in place).
 */
static int child_start(struct worker *w, const char *cg, int cpu,
		       void (*serve)(int cmd, int res, const void *arg),
		       const void *arg)
{
	int cmd[2], res[2];

	if (pipe(cmd) || pipe(res))
		return -1;
	w->pid = fork();
	if (w->pid < 0)
		return -1;
	if (!w->pid) {
		int fd;

		/*
		 * Only its own pipe ends: another worker's command pipe kept
		 * open here would never see EOF when that worker is stopped.
		 */
		for (fd = 3; fd < 1024; fd++)
			if (fd != cmd[0] && fd != res[1])
				close(fd);
		if (cg_enter_current(cg) || pin_cpu(cpu))
			_exit(1);
		serve(cmd[0], res[1], arg);
		_exit(0);
	}
	close(cmd[0]);
	close(res[1]);
	w->cmd = cmd[1];
	w->res = res[0];
	return 0;
}

/* what workers write, filled by the test before it forks them */
static char worker_page[65536];

static void worker_serve(int cmd, int res, const void *arg)
{
	const char *path = arg;
	long off = 0, r;
	char c;
	int fd;

	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		_exit(1);
	while (read(cmd, &c, 1) == 1) {
		if (c == 'u') {
			close(fd);
			r = unlink(path) ? -errno : 0;
			fd = -1;
		} else {
			r = pwrite(fd, worker_page, page_size, off);
			if (r < 0)
				r = -errno;
			else
				off += r;
		}
		if (write(res, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
}

static int worker_start(struct worker *w, const char *cg, int cpu,
			const char *path)
{
	/* before the fork: its copy-on-write is charged outside CG */
	memset(worker_page, 0x5a, sizeof(worker_page));
	return child_start(w, cg, cpu, worker_serve, path);
}

/* Send token C to the worker; its answer, or -100000 when it died. */
static long worker_do(struct worker *w, char c)
{
	long r;

	if (write(w->cmd, &c, 1) != 1 || read(w->res, &r, sizeof(r)) != sizeof(r))
		return -100000;
	return r;
}

/* Stop the worker; 0 when it exited cleanly. */
static int worker_stop(struct worker *w)
{
	int status;

	close(w->cmd);
	close(w->res);
	if (waitpid(w->pid, &status, 0) != w->pid)
		return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* Stop each of the N workers that was started: RET, or KSFT_FAIL if one failed. */
static int stop_workers(struct worker *w, int n, int ret)
{
	for (int i = 0; i < n; i++)
		if (w[i].pid > 0 && worker_stop(&w[i]))
			ret = KSFT_FAIL;
	return ret;
}

/* Have the worker write N pages; 0 when every one was written. */
static int worker_write(struct worker *w, long n, const char *when)
{
	long i, r;

	for (i = 0; i < n; i++) {
		r = worker_do(w, 'w');
		if (r != page_size) {
			ksft_print_msg("%s: page %ld of %ld: %ld\n", when, i, n, r);
			return -1;
		}
	}
	return 0;
}

static int need_two_cpus(void)
{
	if (nr_cpus >= 2)
		return 0;
	ksft_print_msg("the guest has %d CPU: these cases need 2\n", nr_cpus);
	return -1;
}

/*
 * setup() a cgroup NAME without a limit, with a worker on CPU 0
 * (/tmp/batch_0) that wrote N0 pages and one on CPU 1 (/tmp/batch_1)
 * that wrote N1.
 */
static int setup_workers(struct setup *s, struct worker w[2], const char *root,
			 const char *name, long n0, long n1)
{
	if (need_two_cpus() || setup(s, root, name, "max") ||
	    worker_start(&w[0], s->cg, 0, "/tmp/batch_0") ||
	    worker_start(&w[1], s->cg, 1, "/tmp/batch_1") ||
	    worker_write(&w[0], n0, "cpu0") || worker_write(&w[1], n1, "cpu1"))
		return -1;
	return 0;
}

/*
 * Have worker W write pages until EDQUOT (at most MAX_PAGES); its bytes
 * written, or -1 on another error.
 */
static long write_until_edquot(struct worker *w, long max_pages, const char *who)
{
	long written = 0, r, i;

	for (i = 0; i <= max_pages; i++) {
		r = worker_do(w, 'w');
		if (r == -EDQUOT)
			return written;
		if (r != page_size) {
			ksft_print_msg("writer %s: %ld after %ld bytes\n", who, r, written);
			return -1;
		}
		written += r;
	}
	ksft_print_msg("writer %s: no EDQUOT after %ld bytes\n", who, written);
	return -1;
}

/*
 * Two siblings under a parent limited to 1M (256 pages), each writing
 * from its own CPU. a writes one page (its CPU charges a batch of 64
 * ahead), then b writes until EDQUOT: b takes batches while the parent
 * has room for one on every CPU, then charges exactly, and when the
 * usage, a's batch included, reaches the limit, its charge must return
 * a's batch from the other CPU and go on: b writes exactly the 255 pages
 * left, then a gets EDQUOT at once. Then the same in turns, a page each.
 */
static int siblings_case(const char *root, bool turns)
{
	char *parent = NULL, *a = NULL, *b = NULL;
	struct worker w[2] = { 0 }, *wa = &w[0], *wb = &w[1];
	long written_a = 0, written_b = 0, r, limit = 1 * MiB;
	const char *name = turns ? "in turns" : "a page, then b";
	int ret = KSFT_FAIL, stopped = 0, turn;

	parent = make_parent(root, "tmpfs_batch_sib");
	a = parent ? make_child(parent, "a") : NULL;
	b = parent ? make_child(parent, "b") : NULL;
	if (!a || !b || cg_write(parent, "memory.tmpfs.max", "1M"))
		goto out;
	if (worker_start(wa, a, 0, "/tmp/batch_a") ||
	    worker_start(wb, b, 1, "/tmp/batch_b"))
		goto out;
	if (!turns) {
		if (worker_write(wa, 1, "a"))
			goto out;
		written_a = page_size;
		written_b = write_until_edquot(wb, limit / page_size, "b");
		if (written_b < 0)
			goto out;
		r = worker_do(wa, 'w');
		if (r != -EDQUOT) {
			ksft_print_msg("a after b's EDQUOT: %ld, expected %d\n", r, -EDQUOT);
			goto out;
		}
		if (written_a + written_b != limit) {
			ksft_print_msg("b got EDQUOT after %ld bytes, with a's %ld, under a limit of %ld\n",
				       written_b, written_a, limit);
			goto out;
		}
	}
	for (turn = 0; turns && stopped != 3 && turn < 1000; turn++) {
		struct worker *wt = turn & 1 ? wb : wa;
		long *written = turn & 1 ? &written_b : &written_a;
		int bit = turn & 1 ? 2 : 1;

		if (stopped & bit)
			continue;
		r = worker_do(wt, 'w');
		if (r == page_size) {
			*written += r;
			continue;
		}
		if (r != -EDQUOT) {
			ksft_print_msg("writer %c: %ld after %ld bytes\n",
				       turn & 1 ? 'b' : 'a', r, *written);
			goto out;
		}
		if (written_a + written_b != limit) {
			ksft_print_msg("writer %c got EDQUOT with %ld + %ld bytes written under a limit of %ld\n",
				       turn & 1 ? 'b' : 'a', written_a, written_b, limit);
			goto out;
		}
		stopped |= bit;
	}
	if (turns && stopped != 3) {
		ksft_print_msg("no EDQUOT after %ld + %ld bytes\n", written_a, written_b);
		goto out;
	}
	ksft_print_msg("%s: a on CPU 0 %ld, b on CPU 1 %ld bytes, then EDQUOT each\n",
		       name, written_a, written_b);
	if (expect_tmpfs(a, written_a, name) || expect_tmpfs(b, written_b, name) ||
	    expect_tmpfs(parent, limit, name) ||
	    expect_long(parent, "memory.tmpfs.peak", limit, name) ||
	    expect_events(a, 0, 1, name) || expect_events(b, 0, 1, name) ||
	    expect_events(parent, 2, 2, name))
		goto out;
	if (worker_do(wa, 'u') || worker_do(wb, 'u') ||
	    expect_tmpfs(a, 0, "unlinked") || expect_tmpfs(b, 0, "unlinked") ||
	    expect_tmpfs(parent, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	ret = stop_workers(w, 2, ret);
	unlink("/tmp/batch_a");
	unlink("/tmp/batch_b");
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(parent);
	return ret;
}

static int test_siblings_exact(const char *root)
{
	if (need_two_cpus())
		return KSFT_FAIL;
	if (siblings_case(root, false) != KSFT_PASS)
		return KSFT_FAIL;
	return siblings_case(root, true);
}

/* The same with both writers at full speed, in parallel. */
static int body_fill(const char *cgroup, void *arg)
{
	long cpu = (long)arg, off = 0, r;
	static char page[65536];
	char path[64];
	int fd;

	if (pin_cpu(cpu))
		return -1;
	snprintf(path, sizeof(path), "/tmp/batch_fill%ld", cpu);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		return -1;
	for (;;) {
		r = pwrite(fd, page, page_size, off);
		if (r != page_size)
			break;
		off += r;
	}
	close(fd);
	return r < 0 && errno == EDQUOT ? 0 : -1;
}

static int test_siblings_parallel(const char *root)
{
	char *parent = NULL, *a = NULL, *b = NULL;
	int ret = KSFT_FAIL, status;
	pid_t pa, pb;

	if (need_two_cpus())
		return KSFT_FAIL;
	parent = make_parent(root, "tmpfs_batch_par");
	a = parent ? make_child(parent, "a") : NULL;
	b = parent ? make_child(parent, "b") : NULL;
	if (!a || !b || cg_write(parent, "memory.tmpfs.max", "4M"))
		goto out;
	pa = cg_run_nowait(a, body_fill, (void *)0L);
	pb = cg_run_nowait(b, body_fill, (void *)1L);
	if (pa < 0 || pb < 0)
		goto out;
	if (waitpid(pa, &status, 0) != pa || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    waitpid(pb, &status, 0) != pb || !WIFEXITED(status) || WEXITSTATUS(status)) {
		ksft_print_msg("a writer did not end with EDQUOT\n");
		goto out;
	}
	ksft_print_msg("parallel siblings: %ld + %ld bytes\n",
		       tmpfs_current(a), tmpfs_current(b));
	if (expect_tmpfs(parent, 4 * MiB, "parent") ||
	    check_parent_sum(parent, (const char *[]){ a, b }, 2, 0, "parent") ||
	    expect_long(parent, "memory.tmpfs.peak", 4 * MiB, "parent peak") ||
	    expect_events(parent, 2, 2, "parent"))
		goto out;
	unlink("/tmp/batch_fill0");
	unlink("/tmp/batch_fill1");
	if (expect_tmpfs(parent, 0, "unlinked") || expect_tmpfs(a, 0, "unlinked") ||
	    expect_tmpfs(b, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	unlink("/tmp/batch_fill0");
	unlink("/tmp/batch_fill1");
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(parent);
	return ret;
}

/*
 * The usage with stocks once CPUS CPUs wrote PAGES pages in all: a batch
 * on each CPU; on PREEMPT_RT, where the series keeps no stock, the data.
 */
static long ahead(long pages, int cpus)
{
	return (kernel_is_rt() ? pages : (long)cpus * BATCH) * page_size;
}

/*
 * Stock on both CPUs: 3 pages written from CPU 0, 5 from CPU 1, no
 * limit (on PREEMPT_RT: no stock, the usage is the data). current is exact (8 pages) in the cgroup and its parent, though
 * each CPU charged a batch ahead: the usage with stocks is 2 batches, and
 * peak stays within 64 pages a CPU above the data's peak.
 */
static int test_current_exact(const char *root)
{
	struct worker w[2] = { 0 };
	struct setup s = { 0 };
	int ret = KSFT_FAIL;
	long with, peak;

	if (setup_workers(&s, w, root, "tmpfs_batch_cur", 3, 5))
		goto out;
	with = usage_with_stocks(s.cg);
	peak = cg_read_long(s.cg, "memory.tmpfs.peak");
	ksft_print_msg("8 pages written on 2 CPUs: usage with stocks %ld, peak %ld\n",
		       with, peak);
	if (expect_tmpfs(s.cg, 8 * page_size, "written") ||
	    expect_tmpfs(s.parent, 8 * page_size, "written (parent)") ||
	    check_within_memory(s.cg, "written"))
		goto out;
	if (with != ahead(8, 2)) {
		ksft_print_msg("usage with stocks %ld, expected %s: %ld\n", with,
			       kernel_is_rt() ? "the data (PREEMPT_RT: no stock)" :
			       "a batch of 64 pages on each CPU", ahead(8, 2));
		goto out;
	}
	if (peak < 8 * page_size || peak > (8 + BATCH * nr_cpus) * page_size) {
		ksft_print_msg("peak %ld beyond [8, 8 + %d * %d] pages\n", peak, BATCH, nr_cpus);
		goto out;
	}
	/* freed from each CPU: back into that CPU's stock, current exact */
	if (worker_do(&w[0], 'u') || expect_tmpfs(s.cg, 5 * page_size, "cpu0 unlinked") ||
	    worker_do(&w[1], 'u') || expect_tmpfs(s.cg, 0, "cpu1 unlinked") ||
	    expect_tmpfs(s.parent, 0, "unlinked (parent)"))
		goto out;
	ret = KSFT_PASS;
out:
	return teardown(&s, NULL, stop_workers(w, 2, ret));
}

/*
 * Lowering max while both CPUs hold a batch: the write returns the
 * batches before it returns (usage with stocks = the data), and the next
 * page is refused at once.
 */
static int test_lower_max(const char *root)
{
	struct worker w[2] = { 0 };
	struct setup s = { 0 };
	int ret = KSFT_FAIL;
	long with, r;

	if (setup_workers(&s, w, root, "tmpfs_batch_low", 1, 1))
		goto out;
	with = usage_with_stocks(s.cg);
	if (with != ahead(2, 2)) {
		ksft_print_msg("before: usage with stocks %ld, expected %ld\n", with, ahead(2, 2));
		goto out;
	}
	if (cg_write(s.cg, "memory.tmpfs.max", "8K"))
		goto out;
	with = usage_with_stocks(s.cg);
	if (with != 2 * page_size) {
		ksft_print_msg("max lowered to 8K: usage with stocks %ld, expected %ld\n",
			       with, 2 * page_size);
		goto out;
	}
	r = worker_do(&w[0], 'w');
	if (r != -EDQUOT) {
		ksft_print_msg("a page over the lowered max: %ld, expected %d\n", r, -EDQUOT);
		goto out;
	}
	if (expect_tmpfs(s.cg, 2 * page_size, "lowered") ||
	    expect_events(s.cg, 1, 1, "lowered"))
		goto out;
	ksft_print_msg("max lowered under 2 batches: they returned, then EDQUOT\n");
	if (worker_do(&w[0], 'u') || worker_do(&w[1], 'u'))
		goto out;
	ret = KSFT_PASS;
out:
	return teardown(&s, NULL, stop_workers(w, 2, ret));
}

/*
 * Lowering max races a writer on the other CPU. The writer, on CPU 0,
 * appends pages up to RACE_DATA and truncates, again and again; CPU 1
 * sets max to "max" (batches are taken again) and then to RACE_DATA plus
 * 32 pages, RACE_ROUNDS times. Each time the lowering write returns, the
 * usage with stocks must be within the new max: no batch charged before
 * it may survive it (a CPU that takes one has no room for it afterwards).
 * The writer's data never exceeds the max, so it must never get EDQUOT.
 */
#define RACE_DATA 256	/* pages */
#define RACE_ROUNDS 2000

static int race_writer(const char *cg, const char *path, int cpu, int stop)
{
	static char page[65536];
	long edquot = 0, pages = 0, loops = 0;
	char c;
	int fd;

	memset(page, 0x5a, sizeof(page));
	if (cg_enter_current(cg) || pin_cpu(cpu))
		return 1;
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		return 1;
	while (read(stop, &c, 1) < 0 && errno == EAGAIN) {
		for (long i = 0; i < RACE_DATA; i++) {
			if (pwrite(fd, page, page_size, i * page_size) == page_size)
				pages++;
			else if (errno == EDQUOT)
				edquot++;
			else
				return 1;
		}
		if (ftruncate(fd, 0))
			return 1;
		loops++;
	}
	close(fd);
	unlink(path);
	if (edquot)
		ksft_print_msg("writer: EDQUOT %ld times with the data within max\n", edquot);
	ksft_print_msg("writer: %ld pages in %ld files\n", pages, loops);
	return edquot || !loops ? 1 : 0;
}

/* N race_writer()s, writer I on CPU I, until their pipe is closed. */
struct race_writers {
	int stop;		/* the pipe's write end */
	pid_t pid[2];
};

#define RACE_WRITERS_INIT { .stop = -1, .pid = { -1, -1 } }

/* Start N race_writer()s in CG, writer I on CPU I into PATHS[I]: 0, or -1. */
static int start_race_writers(struct race_writers *rw, const char *cg,
			      const char *const *paths, int n)
{
	int stop[2], i;

	if (pipe2(stop, O_NONBLOCK))
		return -1;
	for (i = 0; i < n; i++) {
		rw->pid[i] = fork();
		if (rw->pid[i] < 0)
			break;
		if (!rw->pid[i]) {
			close(stop[1]);
			_exit(race_writer(cg, paths[i], i, stop[0]));
		}
	}
	close(stop[0]);
	rw->stop = stop[1];
	return i == n ? 0 : -1;
}

/* Stop the writers: RET, or KSFT_FAIL when one did not exit with 0. */
static int stop_race_writers(struct race_writers *rw, int ret)
{
	int status;

	if (rw->stop >= 0)
		close(rw->stop);
	for (size_t i = 0; i < ARRAY_SIZE(rw->pid); i++)
		if (rw->pid[i] > 0 && (waitpid(rw->pid[i], &status, 0) != rw->pid[i] ||
				       !WIFEXITED(status) || WEXITSTATUS(status)))
			ret = KSFT_FAIL;
	return ret;
}

static int test_lower_max_racing(const char *root)
{
	long limit = (RACE_DATA + 32) * page_size, with, worst = 0, over = 0;
	const char *path = "/tmp/batch_race";
	struct race_writers rw = RACE_WRITERS_INIT;
	struct setup s = { 0 };
	int ret = KSFT_FAIL, i;
	char max[32];

	if (need_two_cpus())
		return KSFT_FAIL;
	snprintf(max, sizeof(max), "%ld", limit);
	if (setup(&s, root, "tmpfs_batch_race", "max") ||
	    start_race_writers(&rw, s.cg, &path, 1))
		goto out;
	if (pin_cpu(1))
		goto out;
	for (i = 0; i < RACE_ROUNDS; i++) {
		if (cg_write(s.cg, "memory.tmpfs.max", "max") ||
		    cg_write(s.cg, "memory.tmpfs.max", max))
			goto out;
		with = usage_with_stocks(s.cg);
		if (with < 0)
			goto out;
		if (with > limit)
			over++;
		if (with > worst)
			worst = with;
	}
	ksft_print_msg("%d lowerings to %ld: usage with stocks at most %ld, over max %ld times\n",
		       RACE_ROUNDS, limit, worst, over);
	if (!over)
		ret = KSFT_PASS;
out:
	ret = stop_race_writers(&rw, ret);
	if (ret == KSFT_PASS && (expect_tmpfs(s.cg, 0, "end") ||
				 expect_events(s.cg, 0, 0, "end")))
		ret = KSFT_FAIL;
	return teardown(&s, NULL, ret);
}

/* The function-call interrupts of every CPU so far (CAL in /proc/interrupts). */
static long call_interrupts(void)
{
	char line[4096], *p, *end;
	long sum = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "CAL:", 4))
			continue;
		sum = 0;
		for (p += 4;; p = end) {
			long n = strtol(p, &end, 10);

			if (end == p)
				break;
			sum += n;
		}
		break;
	}
	fclose(f);
	return sum;
}

#define READS 20000

/*
 * Read FILE of CG READS times as user nobody, in a child: the
 * function-call interrupts all CPUs took meanwhile, or -1.
 */
static long reads_as_nobody(const char *cg, const char *file)
{
	long before = call_interrupts(), after;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		char buf[64];
		int fd, i;

		if (pin_cpu(0) || setgid(65534) || setuid(65534))
			_exit(1);
		fd = open(cg_control(cg, file), O_RDONLY);
		if (fd < 0) {
			ksft_print_msg("nobody: open %s/%s: %s\n", cg, file, strerror(errno));
			_exit(1);
		}
		for (i = 0; i < READS; i++)
			if (pread(fd, buf, sizeof(buf), 0) <= 0)
				_exit(1);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	after = call_interrupts();
	return before < 0 || after < 0 ? -1 : after - before;
}

/*
 * Any user may read memory.tmpfs.current: a read never takes the
 * batches back from the CPUs, nor interrupts one. Two writers, one a
 * CPU, write and truncate files through their stocks while user nobody
 * polls a file of their cgroup: memory.current (which reads a counter),
 * then memory.tmpfs.current, twice each. The function-call interrupts
 * during the memory.tmpfs.current polls may not exceed twice those during
 * the memory.current polls plus one per 400 reads: the memory.current
 * polls take some too (a kernel stack freed with the reader flushes the
 * kernel's TLB on every CPU now and then), from 8 to 37 in 40000 reads
 * on a 2-CPU guest, so a bound of the reference plus half of it failed
 * one run in four with no IPI sent by a read (22 against 8). A read that
 * returned the stocks whenever it found a writer busy would send
 * thousands. A rarer drain is below that noise: v3's reader drained
 * after four busy tries in a row, and this case measured 31 against 25
 * on it.
 */
static int test_read_sends_no_ipi(const char *root)
{
	const char *paths[2] = { "/tmp/batch_ipi0", "/tmp/batch_ipi1" };
	struct race_writers rw = RACE_WRITERS_INIT;
	long ref = 0, tmpfs = 0, n;
	int ret = KSFT_FAIL, i;
	struct setup s = { 0 };

	if (need_two_cpus())
		return KSFT_FAIL;
	if (setup(&s, root, "tmpfs_batch_ipi", "max") ||
	    start_race_writers(&rw, s.cg, paths, 2))
		goto out;
	for (i = 0; i < 2; i++) {
		n = reads_as_nobody(s.cg, "memory.current");
		if (n < 0)
			goto out;
		ref += n;
		n = reads_as_nobody(s.cg, "memory.tmpfs.current");
		if (n < 0)
			goto out;
		tmpfs += n;
	}
	ksft_print_msg("function-call interrupts during %d reads by nobody: memory.current %ld, memory.tmpfs.current %ld\n",
		       2 * READS, ref, tmpfs);
	if (tmpfs <= 2 * ref + 2 * READS / 400)
		ret = KSFT_PASS;
	else
		ksft_print_msg("memory.tmpfs.current: %ld interrupts, expected at most %ld\n",
			       tmpfs, 2 * ref + 2 * READS / 400);
out:
	ret = stop_race_writers(&rw, ret);
	if (ret == KSFT_PASS && expect_tmpfs(s.cg, 0, "end"))
		ret = KSFT_FAIL;
	return teardown(&s, NULL, ret);
}

/*
 * Leave a whole batch in CPU 1's stock for the child: a page written and
 * freed there. The usage with stocks shows it (1 batch); another memcg's
 * charge on that CPU can take the stock over first, so try up to 5 times.
 */
static int stock_on_cpu1(const char *cg, const char *when)
{
	struct worker w = { 0 };
	long with = -1;
	int i;

	for (i = 0; i < 5; i++) {
		if (worker_start(&w, cg, 1, "/tmp/batch_1") ||
		    worker_write(&w, 1, when) || worker_do(&w, 'u') ||
		    worker_stop(&w))
			return -1;
		with = usage_with_stocks(cg);
		if (with == BATCH * page_size)
			return 0;
	}
	ksft_print_msg("%s: usage with stocks %ld, expected a batch (%ld)\n",
		       when, with, BATCH * page_size);
	return -1;
}

/* Wait up to 10 s for the usage with stocks of CG to be 0. */
static int wait_no_stock(const char *cg, const char *when)
{
	long with = -1;
	int i;

	for (i = 0; i < 100; i++) {
		with = usage_with_stocks(cg);
		if (!with)
			return 0;
		usleep(100000);
	}
	ksft_print_msg("%s: usage with stocks still %ld\n", when, with);
	return -1;
}

/* A removed cgroup's batch goes back: its parent's usage is 0 again. */
static int test_rmdir_returns_stock(const char *root)
{
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (need_two_cpus())
		return KSFT_FAIL;
	if (setup(&s, root, "tmpfs_batch_rmdir", "max") ||
	    stock_on_cpu1(s.cg, "before rmdir") ||
	    expect_tmpfs(s.cg, 0, "freed") || expect_tmpfs(s.parent, 0, "freed"))
		goto out;
	if (destroy_cgroup(&s.cg))
		goto out;
	if (wait_no_stock(s.parent, "child removed"))
		goto out;
	ksft_print_msg("a batch on CPU 1, the child removed: parent usage 0\n");
	ret = KSFT_PASS;
out:
	remove_cgroup(s.cg);
	remove_cgroup(s.parent);
	return ret;
}

static int cpu1_online(const char *val)
{
	int fd = open("/sys/devices/system/cpu/cpu1/online", O_WRONLY);
	int ret = -1;

	if (fd < 0) {
		ksft_print_msg("/sys/devices/system/cpu/cpu1/online: %s\n", strerror(errno));
		return -1;
	}
	if (write(fd, val, 1) == 1)
		ret = 0;
	else
		ksft_print_msg("cpu1/online <- %s: %s\n", val, strerror(errno));
	close(fd);
	return ret;
}

/* CPU 1 goes offline: its batch goes back. */
static int test_cpu_offline_returns_stock(const char *root)
{
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (need_two_cpus())
		return KSFT_FAIL;
	if (setup(&s, root, "tmpfs_batch_cpu", "max") ||
	    stock_on_cpu1(s.cg, "before offline"))
		goto out;
	if (cpu1_online("0"))
		goto out;
	if (usage_with_stocks(s.cg) == 0 && usage_with_stocks(s.parent) == 0 &&
	    !expect_tmpfs(s.cg, 0, "offline"))
		ret = KSFT_PASS;
	else
		ksft_print_msg("CPU 1 offline: usage with stocks %ld (parent %ld), expected 0\n",
			       usage_with_stocks(s.cg), usage_with_stocks(s.parent));
	if (cpu1_online("1"))
		ret = KSFT_FAIL;
	if (ret == KSFT_PASS)
		ksft_print_msg("a batch on CPU 1, CPU 1 offline: usage 0\n");
out:
	return teardown(&s, NULL, ret);
}

/*
 * An agent: a process in cgroup CG on CPU that runs one file operation
 * per command read from its pipe and answers with its result (0, or
 * -errno): 'W' writes LEN bytes of the pattern into PATH (created or
 * truncated), 'T' truncates PATH to LEN, 'U' unlinks PATH. It holds no
 * file open between commands. The values right after a command are read
 * by the caller once the answer came: no sleep, no retry.
 */
struct agent_cmd {
	char op;
	long len;
	char path[PATH_MAX];
};

static void agent_serve(int cmd, int res, const void *arg)
{
	struct agent_cmd c;
	long r;

	while (read(cmd, &c, sizeof(c)) == sizeof(c)) {
		if (c.op == 'W')
			r = write_file(c.path, c.len) ? -EIO : 0;
		else if (c.op == 'T')
			r = truncate(c.path, c.len) ? -errno : 0;
		else if (c.op == 'U')
			r = unlink(c.path) ? -errno : 0;
		else
			r = -EINVAL;
		if (write(res, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
}

static int agent_start(struct worker *w, const char *cg, int cpu)
{
	return child_start(w, cg, cpu, agent_serve, NULL);
}

/* Have agent W run OP on PATH with LEN; 0 when it succeeded. */
static int agent_do(struct worker *w, char op, const char *path, long len)
{
	struct agent_cmd c = { .op = op, .len = len };
	long r = -100000;

	snprintf(c.path, sizeof(c.path), "%s", path);
	if (write(w->cmd, &c, sizeof(c)) == sizeof(c) &&
	    read(w->res, &r, sizeof(r)) == sizeof(r) && !r)
		return 0;
	ksft_print_msg("agent %d: %c %s %ld: %ld (%s)\n", (int)w->pid, op, path,
		       len, r, r < 0 && r > -4096 ? strerror(-r) : "died");
	return -1;
}

/* The pages CPUs hold ahead of use for CG: its usage with stocks less current. */
static long stocked(const char *cg)
{
	return usage_with_stocks(cg) - tmpfs_current(cg);
}

/*
 * Fail unless memory.stat shmem_thp of CG reads HPAGE: its file is one
 * huge folio (polled for up to 4 s, though memcg_stat() flushes the stats).
 */
static int expect_huge(const char *cg, const char *when)
{
	long got = -1;

	for (int i = 0; i < 40; i++) {
		got = memcg_stat(cg, "shmem_thp ");
		if (got == HPAGE)
			return 0;
		usleep(100000);
	}
	ksft_print_msg("%s: %s memory.stat shmem_thp %ld, expected one huge folio (%ld)\n",
		       when, cg, got, HPAGE);
	return -1;
}

#define REMOTE_PAGES 200	/* a's file */
#define REMOTE_OWN 3		/* b's own pages, leaving its stock on CPU 1 */

/*
 * A free on another CPU than the data's, whose stock caches another
 * memcg and holds some of its memory.tmpfs: the stock must not take the
 * pages, and the owner's current drops to the exact value at once. a's
 * agent on CPU 0 writes its file, b's agent on CPU 1 writes 3 pages of
 * its own (CPU 1's stock caches b, a batch less 3 pages in it), then
 * frees a's data. And the reverse: a frees its data on CPU 0, whose
 * stock caches a: exact at once too.
 *
 * With HUGE, a's file is one huge folio (a huge=always tmpfs) and the
 * free a truncation to its middle: the split drops the tails beyond EOF
 * one page at a time with interrupts off, the free fast path into the
 * stock. Otherwise the files are small pages and b unlinks a's file
 * (its last link, no fd open): the truncation's batch.
 */
static int remote_free_case(const char *root, bool huge)
{
	char dir[64] = "", apath[PATH_MAX], bpath[] = "/tmp/batch_remote_b";
	struct worker w[2] = { 0 }, *wa = &w[0], *wb = &w[1];
	long a_len = huge ? HPAGE : REMOTE_PAGES * page_size;
	long a_left = huge ? HPAGE / 2 : 0, b_len = REMOTE_OWN * page_size, held;
	char *parent, *a = NULL, *b = NULL;
	const char *when = huge ? "huge" : "small";
	int ret = KSFT_FAIL, i;

	if (need_two_cpus())
		return KSFT_FAIL;
	parent = make_parent(root, "tmpfs_batch_remote");
	a = parent ? make_child(parent, "a") : NULL;
	b = parent ? make_child(parent, "b") : NULL;
	if (!a || !b)
		goto out;
	if (huge) {
		snprintf(dir, sizeof(dir), "/tmp/batch_remote_huge.XXXXXX");
		if (mount_tmpfs_dir(dir, "huge=always"))
			goto out;
		snprintf(apath, sizeof(apath), "%s/a", dir);
	} else {
		snprintf(apath, sizeof(apath), "/tmp/batch_remote_a");
	}
	if (agent_start(wa, a, 0) || agent_start(wb, b, 1))
		goto out;

	/*
	 * a frees its own data on CPU 0 first, where a's last write, of one
	 * page, left the rest of its batch in the stock. Another memcg's
	 * charge or free on CPU 0 may take the stock over (such as an
	 * RCU-deferred free of a removed cgroup's inode): the page is
	 * rewritten, up to 5 times. Written before the huge file, it was
	 * gone from the stock in 1 run of 1 on the kernel that batches
	 * memory.tmpfs.inodes.
	 */
	if (agent_do(wa, 'W', apath, a_len) || (huge && expect_huge(a, "a wrote")))
		goto out;
	for (i = 0, held = 0; i < 5 && held <= 0; i++) {
		if (agent_do(wa, 'W', "/tmp/batch_remote_a0", page_size))
			goto out;
		held = stocked(a);
	}
	ksft_print_msg("%s: a wrote %ld bytes on CPU 0, its stock holds %ld\n",
		       when, a_len + page_size, held);
	if (held <= 0) {
		ksft_print_msg("%s: no pages of a in CPU 0's stock\n", when);
		goto out;
	}
	if (agent_do(wa, 'T', apath, a_left) ||
	    expect_tmpfs(a, a_left + page_size, "a freed its own data on CPU 0") ||
	    expect_tmpfs(parent, a_left + page_size, "a freed its own data: parent") ||
	    agent_do(wa, 'U', apath, 0) ||
	    expect_tmpfs(a, page_size, "a unlinked its own file on CPU 0") ||
	    agent_do(wa, 'U', "/tmp/batch_remote_a0", 0) ||
	    expect_tmpfs(a, 0, "a unlinked its page on CPU 0") ||
	    expect_tmpfs(parent, 0, "a unlinked its page: parent"))
		goto out;

	/* then b frees a's data on CPU 1, whose stock caches b */
	if (agent_do(wa, 'W', apath, a_len) ||
	    (huge && expect_huge(a, "a wrote again")) ||
	    expect_tmpfs(a, a_len, "a wrote again"))
		goto out;
	/* another memcg's charge or free on CPU 1 may take the stock over: retry */
	for (i = 0; i < 5; i++) {
		if (agent_do(wb, 'W', bpath, b_len) || expect_tmpfs(b, b_len, "b wrote its own"))
			goto out;
		held = stocked(b);
		if (held == BATCH * page_size - b_len)
			break;
	}
	if (held != BATCH * page_size - b_len) {
		ksft_print_msg("%s: CPU 1's stock holds %ld of b, expected a batch less b's pages: %ld\n",
			       when, held, BATCH * page_size - b_len);
		goto out;
	}
	if (agent_do(wb, huge ? 'T' : 'U', apath, a_left) ||
	    expect_tmpfs(a, a_left, "b freed a's data on CPU 1") ||
	    expect_tmpfs(b, b_len, "b freed a's data: b") ||
	    expect_tmpfs(parent, a_left + b_len, "b freed a's data: parent"))
		goto out;
	if ((huge && agent_do(wb, 'U', apath, 0)) ||
	    agent_do(wb, 'U', bpath, 0) ||
	    expect_tmpfs(a, 0, "unlinked") || expect_tmpfs(b, 0, "unlinked") ||
	    expect_tmpfs(parent, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	ret = stop_workers(w, 2, ret);
	unlink(apath);
	unlink(bpath);
	unlink("/tmp/batch_remote_a0");
	umount_tmpfs_dir(dir);
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(parent);
	return ret;
}

static int test_remote_free(const char *root)
{
	return remote_free_case(root, false);
}

static int test_remote_free_huge(const char *root)
{
	return remote_free_case(root, true);
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_siblings_exact),
	TMPFS_TEST(test_siblings_parallel),
	TMPFS_TEST(test_current_exact),
	TMPFS_TEST(test_lower_max),
	TMPFS_TEST(test_lower_max_racing),
	TMPFS_TEST(test_read_sends_no_ipi),
	TMPFS_TEST_NEEDS(test_rmdir_returns_stock, NEEDS_STOCK),
	TMPFS_TEST_NEEDS(test_cpu_offline_returns_stock, NEEDS_STOCK),
	TMPFS_TEST_NEEDS(test_remote_free, NEEDS_STOCK),
	TMPFS_TEST_NEEDS(test_remote_free_huge, NEEDS_STOCK | NEEDS_THP),
};

int main(void)
{
	nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
