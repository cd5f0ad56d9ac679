// SPDX-License-Identifier: GPL-2.0
/*
 * The exactness rules of the series' Documentation/admin-guide/cgroup-v2.rst
 * (memory.tmpfs.max, memory.tmpfs.peak) in the races that a test can only
 * reach with the debug delay of CONFIG_DEBUG_MEMCG_TMPFS
 * (/sys/kernel/debug/memcg_tmpfs/: every memory.tmpfs charge of one cgroup
 * busy-waits between checking the limits and charging the counters):
 *
 * - peak moves only for a committed charge: a huge folio whose memory
 *   charge fails after its tmpfs charge leaves peak where the data puts it;
 * - a charge that fails never makes another fail: a sibling's one page,
 *   which fits unless the failing charge counts, succeeds while that
 *   charge is in flight (two levels: the failing charge's cousin fills the
 *   grandparent);
 * - a charge that completes after a write of memory.tmpfs.max returned
 *   never takes the level above that max;
 * - a CPU isolated at run time (an isolated cpuset partition) gives back
 *   the batch it held at the first tmpfs free there, so that a write of
 *   memory.tmpfs.max interrupts it no more.
 *
 * The cases of the delay are skipped, saying so, on a kernel without it.
 */
#include "tmpfs_util.h"

#include <time.h>

#define DELAY_DIR "/sys/kernel/debug/memcg_tmpfs/"
/*
 * The delay, at each level of a charge (before each counter's update):
 * F's charge below passes three levels, so it is in flight for three
 * delays, and its page is charged to P (the second level) from the end of
 * the second delay to the end of the third.
 */
#define DELAY_MS 1000

/* The cgroup ID of CG: the inode number of its directory; 0 on error. */
static unsigned long long cgroup_id(const char *cg)
{
	struct stat st;

	if (stat(cg, &st)) {
		ksft_print_msg("stat %s: %s\n", cg, strerror(errno));
		return 0;
	}
	return st.st_ino;
}

static int write_debugfs(const char *name, unsigned long long val)
{
	char path[PATH_MAX], buf[32];
	int fd, len, ret = 0;

	snprintf(path, sizeof(path), DELAY_DIR "%s", name);
	len = snprintf(buf, sizeof(buf), "%llu\n", val);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != len) {
		ksft_print_msg("write %s to %s: %s\n", buf, path, strerror(errno));
		ret = -1;
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Delay every memory.tmpfs charge of CG (NULL: none) by DELAY_MS. */
static int delay_charges_of(const char *cg)
{
	unsigned long long id = cg ? cgroup_id(cg) : 0;

	if (cg && !id)
		return -1;
	if (write_debugfs("delay_ms", cg ? DELAY_MS : 0))
		return -1;
	return write_debugfs("delay_cgroup", id);
}

static bool have_delay(void)
{
	return !access(DELAY_DIR "delay_cgroup", W_OK);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * One write of a page by a task of a cgroup, started at a time, and what
 * it did, in memory shared with the parent.
 */
struct page_write {
	char path[PATH_MAX];
	long off;
	double start_at;	/* seconds after the race's t0 ... */
	volatile int go;	/* ... or, when start_at < 0, when this is set */
	double t0, started, done;
	int err;		/* 0, or the errno of the failed write */
	int cpu;
};

static int page_write_body(const char *cgroup, void *arg)
{
	struct page_write *w = arg;
	char *buf = malloc(page_size);
	int fd;
	long n;

	if (!buf || pin_cpu(w->cpu))
		return 1;
	memset(buf, 0x5a, page_size);
	while (w->start_at >= 0 ? now() < w->t0 + w->start_at : !w->go)
		usleep(1000);
	fd = open(w->path, O_WRONLY | O_CREAT, 0600);
	if (fd < 0)
		return 1;
	w->started = now();
	n = pwrite(fd, buf, page_size, w->off);
	w->done = now();
	w->err = n == page_size ? 0 : n < 0 ? errno : EIO;
	close(fd);
	free(buf);
	return 0;
}

/* Run W in CG without waiting: the pid, or -1. */
static int start_write(const char *cg, struct page_write *w)
{
	return cg_run_nowait(cg, page_write_body, w);
}

static int wait_write(int pid, struct page_write *w, const char *who)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		ksft_print_msg("%s's writer did not run to its end\n", who);
		return -1;
	}
	ksft_print_msg("%s: started %.2f s, done %.2f s: %s\n", who,
		       w->started - w->t0, w->done - w->t0,
		       w->err ? strerror(w->err) : "written");
	if (w->err && w->err != EDQUOT) {
		ksft_print_msg("%s: expected success or EDQUOT\n", who);
		return -1;
	}
	return 0;
}

static int set_max_pages(const char *cg, long pages)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", pages * page_size);
	return cg_write(cg, "memory.tmpfs.max", buf);
}

/*
 * Finding 1 of v5: a huge folio whose tmpfs charge succeeds and whose
 * memory charge fails (memory.max, no swap) falls back to small pages; its
 * tmpfs charge, rolled back, must not show in memory.tmpfs.peak. Pinned to
 * one CPU, the small pages are charged in whole batches (1 MiB is four of
 * them), so peak is exactly the data.
 */
struct peak_req {
	const char *path;
	long anon;
};

static int peak_body(const char *cgroup, void *arg)
{
	struct peak_req *r = arg;
	char *anon;

	if (pin_cpu(0))
		return -1;
	anon = mmap(NULL, r->anon, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		return -1;
	memset(anon, 1, r->anon);
	if (write_file(r->path, MiB)) {
		ksft_print_msg("writing 1M under memory.max 64M: %s\n", strerror(errno));
		return -1;
	}
	if (expect_tmpfs(cgroup, MiB, "1M written") ||
	    expect_long(cgroup, "memory.tmpfs.peak", MiB, "1M written, its huge folio refused"))
		return -1;
	munmap(anon, r->anon);
	return 0;
}

static int test_peak_memory_charge_failed_huge(const char *root)
{
	char dir[] = "/tmp/tmpfs_exact_XXXXXX", path[PATH_MAX];
	struct peak_req r = { path, 62 * MiB };
	char *parent = NULL, *cg = NULL;
	long thp_before, fallback_charge;
	int ret = KSFT_FAIL;

	parent = make_parent(root, "tmpfs_exact_peak");
	cg = parent ? make_child(parent, "writer") : NULL;
	if (!cg || cg_write(cg, "memory.max", "64M") ||
	    cg_write(cg, "memory.swap.max", "0"))
		goto cleanup;
	if (mount_tmpfs_dir(dir, "huge=always"))
		goto cleanup;
	snprintf(path, sizeof(path), "%s/f", dir);
	thp_before = vmstat("thp_file_fallback_charge");
	if (cg_run(cg, peak_body, &r))
		goto cleanup;
	fallback_charge = vmstat("thp_file_fallback_charge") - thp_before;
	if (fallback_charge < 1) {
		ksft_print_msg("the huge folio's memory charge did not fail (thp_file_fallback_charge +%ld): the case tested nothing\n",
			       fallback_charge);
		goto cleanup;
	}
	if (expect_long(parent, "memory.tmpfs.peak", MiB, "the parent's peak"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	umount_tmpfs_dir(dir);
	if (cg && ret == KSFT_PASS && expect_tmpfs(cg, 0, "unmounted"))
		ret = KSFT_FAIL;
	remove_cgroup(cg);
	remove_cgroup(parent);
	return ret;
}

/*
 * Finding 2 of v5. G (max 21 pages) holds P (max 11) and C; P holds F and
 * S. S and C have 10 pages each. F writes a page with its charges
 * delayed; once P counts F's page (F's charge is then on its way to G),
 * S writes a page (it fits unless F's counts), then C writes a page (it
 * fills G, so that F's can fail there). Whatever the order the kernel
 * gives them, S may fail only if F succeeded, or if C succeeded before S
 * was done (then G was full). Exact final usages.
 */
struct squeeze {
	struct page_write f, s, c;
};

static int squeeze_round(const char *root)
{
	char dir[] = "/tmp/tmpfs_exact_XXXXXX";
	char *g = NULL, *p = NULL, *c = NULL, *f = NULL, *s = NULL;
	struct squeeze *q;
	int fpid = -1, spid = -1, cpid = -1, ret = -1;
	long want_p, want_g;
	bool f_ok, s_ok, c_ok;
	double seen;

	q = mmap(NULL, sizeof(*q), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return -1;
	memset(q, 0, sizeof(*q));
	g = make_parent(root, "tmpfs_exact_g");
	p = g ? make_parent(g, "p") : NULL;
	c = g ? make_child(g, "c") : NULL;
	f = p ? make_child(p, "f") : NULL;
	s = p ? make_child(p, "s") : NULL;
	if (!c || !f || !s || set_max_pages(g, 21) || set_max_pages(p, 11))
		goto cleanup;
	if (mount_tmpfs_dir(dir, "huge=never"))
		goto cleanup;
	snprintf(q->f.path, PATH_MAX, "%s/f", dir);
	snprintf(q->s.path, PATH_MAX, "%s/s", dir);
	snprintf(q->c.path, PATH_MAX, "%s/c", dir);
	if (write_as(s, q->s.path, 0, 10 * page_size, 10 * page_size) ||
	    write_as(c, q->c.path, 0, 10 * page_size, 10 * page_size) ||
	    close(open(q->f.path, O_WRONLY | O_CREAT, 0600)))
		goto cleanup;
	q->s.off = 10 * page_size;
	q->c.off = 10 * page_size;
	q->f.cpu = 0;
	q->s.cpu = 1;
	q->c.cpu = 1;
	q->s.start_at = -1;
	q->c.start_at = -1;
	/*
	 * F on CPU 0, the rest on CPU 1: a delayed charge may keep CPU 0
	 * from scheduling (interrupts off, or a raw spinlock on PREEMPT_RT)
	 */
	if (delay_charges_of(f) || pin_cpu(1))
		goto cleanup;
	q->f.t0 = q->s.t0 = q->c.t0 = now();
	spid = start_write(s, &q->s);
	cpid = start_write(c, &q->c);
	fpid = start_write(f, &q->f);
	/* P counts F's page: F's charge is in flight above P */
	while (tmpfs_current(p) < 11 * page_size && now() < q->f.t0 + 20 && !q->f.done)
		usleep(1000);
	seen = now() - q->f.t0;
	q->s.go = 1;
	if (wait_write(spid, &q->s, "S"))
		goto cleanup;
	q->c.go = 1;
	if (wait_write(cpid, &q->c, "C") | wait_write(fpid, &q->f, "F"))
		goto cleanup;
	ksft_print_msg("P counted F's page at %.2f s\n", seen);
	if (seen > q->f.done - q->f.t0 - 0.2) {
		ksft_print_msg("F was (nearly) done when P counted its page: the race was not run\n");
		goto cleanup;
	}
	f_ok = !q->f.err;
	s_ok = !q->s.err;
	c_ok = !q->c.err;
	if (!s_ok && !f_ok && !(c_ok && q->c.started < q->s.done)) {
		ksft_print_msg("S got EDQUOT while only F's failing charge stood in its way (P max 11 pages, 10 used; G max 21, 20 used, C's page %s)\n",
			       c_ok ? "charged after S failed" : "refused");
		goto cleanup;
	}
	want_p = 10 + f_ok + s_ok;
	want_g = want_p + 10 + c_ok;
	if (expect_tmpfs(p, want_p * page_size, "P after the race") ||
	    expect_tmpfs(g, want_g * page_size, "G after the race") ||
	    expect_tmpfs(f, f_ok * page_size, "F after the race"))
		goto cleanup;
	if (want_g > 21 || want_p > 11) {
		ksft_print_msg("a level is over its max: P %ld pages, G %ld\n", want_p, want_g);
		goto cleanup;
	}
	ret = 0;
cleanup:
	pin_cpu(-1);
	delay_charges_of(NULL);
	umount_tmpfs_dir(dir);
	remove_cgroup(f);
	remove_cgroup(s);
	remove_cgroup(c);
	remove_cgroup(p);
	remove_cgroup(g);
	munmap(q, sizeof(*q));
	return ret;
}

static int test_failing_charge_vs_sibling_two_levels(const char *root)
{
	return squeeze_round(root) ? KSFT_FAIL : KSFT_PASS;
}

/*
 * Finding 3 of v5: A (max 20 pages) holds 10; F writes a page with its
 * charge delayed; in the delay, memory.tmpfs.max is lowered to 10 pages.
 * Whatever A's usage was when that write returned, no charge that
 * completes afterwards may take A above the new max.
 */
static int test_lowered_max_vs_charge_in_flight(const char *root)
{
	char dir[] = "/tmp/tmpfs_exact_XXXXXX";
	char *parent = NULL, *a = NULL;
	struct page_write *w;
	long at_write, after;
	double issued, written;
	int pid = -1, ret = KSFT_FAIL;

	w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return KSFT_FAIL;
	memset(w, 0, sizeof(*w));
	parent = make_parent(root, "tmpfs_exact_lower");
	a = parent ? make_child(parent, "a") : NULL;
	if (!a || set_max_pages(a, 20) || mount_tmpfs_dir(dir, "huge=never"))
		goto cleanup;
	snprintf(w->path, PATH_MAX, "%s/f", dir);
	if (write_as(a, w->path, 0, 10 * page_size, 10 * page_size))
		goto cleanup;
	w->off = 10 * page_size;
	/* F on CPU 0, this task on CPU 1: see squeeze_round() */
	if (delay_charges_of(a) || pin_cpu(1))
		goto cleanup;
	w->t0 = now();
	pid = start_write(a, w);
	while (now() < w->t0 + 0.5)
		usleep(1000);
	issued = now() - w->t0;
	if (set_max_pages(a, 10))
		goto cleanup;
	written = now() - w->t0;
	at_write = tmpfs_current(a);
	if (wait_write(pid, w, "F"))
		goto cleanup;
	after = tmpfs_current(a);
	if (issued > w->done - w->t0 - 0.2) {
		ksft_print_msg("F was (nearly) done when max was written: the race was not run\n");
		goto cleanup;
	}
	ksft_print_msg("max lowered to 10 pages, returned at %.2f s with %ld pages charged; %ld at the end\n",
		       written, at_write / page_size, after / page_size);
	if (after > 10 * page_size && after > at_write) {
		ksft_print_msg("a charge that completed after the write of max took A above it\n");
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	pin_cpu(-1);
	delay_charges_of(NULL);
	umount_tmpfs_dir(dir);
	remove_cgroup(a);
	remove_cgroup(parent);
	munmap(w, sizeof(*w));
	return ret;
}

/* The "Function call interrupts" count of CPU in /proc/interrupts, or -1. */
static long call_ipis(int cpu)
{
	char line[1024];
	long val = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (!p || !strstr(line, "Function call interrupts"))
			continue;
		p++;
		for (int i = 0; i <= cpu; i++)
			val = strtol(p, &p, 10);
		break;
	}
	fclose(f);
	return val;
}

struct iso_req {
	const char *path;
	bool truncate;
};

/* A task of the cgroup, on CPU 1: one page written, or the file truncated. */
static int iso_body(const char *cgroup, void *arg)
{
	struct iso_req *r = arg;

	if (pin_cpu(1))
		return -1;
	if (r->truncate)
		return truncate(r->path, 0);
	return write_file(r->path, page_size);
}

/*
 * Finding 5 of v5. A cgroup confined to CPU 1 writes a page there, which
 * leaves a batch of its memory.tmpfs in CPU 1's stock; then its cpuset
 * becomes an isolated partition, and it frees the page on CPU 1. A write
 * of its memory.tmpfs.max, from CPU 0, must then find no stock to return
 * on CPU 1: no function call IPI reaches it.
 */
static int test_isolated_cpu_holds_no_stock(const char *root)
{
	char dir[] = "/tmp/tmpfs_exact_XXXXXX", path[PATH_MAX];
	struct iso_req r = { path, false };
	char *cg = NULL;
	long before, ipis;
	int ret = KSFT_FAIL;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		ksft_print_msg("needs 2 CPUs\n");
		return KSFT_SKIP;
	}
	if (cg_write(root, "cgroup.subtree_control", "+cpuset")) {
		ksft_print_msg("cannot enable the cpuset controller\n");
		return KSFT_FAIL;
	}
	cg = cg_name(root, "tmpfs_exact_iso");
	if (!cg || cg_create(cg) || cg_write(cg, "cpuset.cpus", "1") ||
	    mount_tmpfs_dir(dir, "huge=never"))
		goto cleanup;
	snprintf(path, sizeof(path), "%s/f", dir);
	pin_cpu(0);
	if (cg_run(cg, iso_body, &r))
		goto cleanup;
	if (cg_write(cg, "cpuset.cpus.partition", "isolated") ||
	    cg_read_strstr(cg, "cpuset.cpus.partition", "isolated")) {
		ksft_print_msg("cpuset.cpus.partition: not isolated\n");
		goto cleanup;
	}
	r.truncate = true;
	if (cg_run(cg, iso_body, &r) || expect_tmpfs(cg, 0, "truncated on CPU 1"))
		goto cleanup;
	before = call_ipis(1);
	if (before < 0 || cg_write(cg, "memory.tmpfs.max", "1G"))
		goto cleanup;
	ipis = call_ipis(1) - before;
	if (ipis) {
		ksft_print_msg("a write of memory.tmpfs.max interrupted the isolated CPU 1 (%ld IPIs): it still holds a batch\n",
			       ipis);
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	pin_cpu(-1);
	if (cg)
		cg_write(cg, "cpuset.cpus.partition", "member");
	umount_tmpfs_dir(dir);
	remove_cgroup(cg);
	cg_write(root, "cgroup.subtree_control", "-cpuset");
	return ret;
}

static int needs_delay(int (*fn)(const char *root), const char *root)
{
	if (!have_delay()) {
		ksft_print_msg("no " DELAY_DIR " (CONFIG_DEBUG_MEMCG_TMPFS)\n");
		return KSFT_SKIP;
	}
	return fn(root);
}

static int test_sibling(const char *root)
{
	return needs_delay(test_failing_charge_vs_sibling_two_levels, root);
}

static int test_lowered_max(const char *root)
{
	return needs_delay(test_lowered_max_vs_charge_in_flight, root);
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST_NEEDS(test_peak_memory_charge_failed_huge, NEEDS_THP),
	{ test_sibling, "test_failing_charge_vs_sibling_two_levels", 0 },
	{ test_lowered_max, "test_lowered_max_vs_charge_in_flight", 0 },
	TMPFS_TEST_NEEDS(test_isolated_cpu_holds_no_stock, NEEDS_STOCK),
};

int main(void)
{
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
