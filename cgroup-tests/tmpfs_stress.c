// SPDX-License-Identifier: GPL-2.0
/*
 * tmpfs_stress: memory.tmpfs under concurrent abuse, with a checker.
 *
 * Workers in cgroups nested three deep with mixed memory.tmpfs.max write,
 * pwrite, store through shared mappings, fallocate, punch holes,
 * truncate, unlink, rename and splice, on /tmp, /dev/shm and a huge=always
 * tmpfs. Meanwhile a migrator moves them between cgroups, a churner
 * creates cgroups, has them write a file and removes them with the file
 * left, a reclaimer pushes data to swap with memory.reclaim and a limiter
 * raises and lowers limits. A checker freezes the tree a few times a
 * second and checks, for every cgroup: current <= max (unless the limiter
 * lowered max below the usage it found, which frees nothing), current is
 * exactly the sum of its children's plus what removed children left, and
 * within memory + swap; and the whole tree's current is exactly the
 * blocks of every file left. At the end every file is removed and every
 * counter must read 0.
 *
 *   tmpfs_stress [-t SECONDS] [-s SEED] [-f]
 *   -t  how long to run (default $TMPFS_STRESS_SECONDS, else 60)
 *   -f  inject faults (failslab, fail_page_alloc) into the workers' tasks
 *
 * Prints KTAP: one result for the invariants, one for the counters at the
 * end, one for the workers' errors.
 */
#include "tmpfs_util.h"

#include <dirent.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>

#define NR_WORKERS	6
#define NR_FILES	6		/* per worker and directory */
#define FILE_MAX	(4 * MiB)
#define TREE_MAX	"48M"		/* bounds the whole run */
#define MAX_CGROUPS	64
#define NR_ERRNO	134
#define MAX_CPUS	64

static const char *const dirs[] = { "/tmp/stress", "/dev/shm/stress",
				    "/tmp/stress_huge" };
#define HUGE_DIR	2
#define CHURN_DIR	"/tmp/stress/churn"

enum op { OP_WRITE, OP_PWRITE, OP_MMAP, OP_FALLOCATE, OP_PUNCH, OP_TRUNCATE,
	  OP_UNLINK, OP_RENAME, OP_SPLICE, NR_OPS };
static const char *const op_names[] = { "write", "pwrite", "mmap-store",
	"fallocate", "punch-hole", "truncate", "unlink", "rename", "splice" };

/* the fixed tree: name, parent index, initial max; leaves hold workers */
static const struct node {
	const char *name;
	int parent;
	const char *max;
	bool leaf, limiter;	/* the limiter may change its max */
} tree[] = {
	/* 0 */ { "",		-1, TREE_MAX,	false, false },
	/* 1 */ { "p0",		0, "24M",	false, true },
	/* 2 */ { "p0/c0",	1, "max",	false, false },
	/* 3 */ { "p0/c0/w0",	2, "4M",	true, true },
	/* 4 */ { "p0/c0/w1",	2, "max",	true, false },
	/* 5 */ { "p0/c1",	1, "8M",	false, true },
	/* 6 */ { "p0/c1/w2",	5, "2M",	true, true },
	/* 7 */ { "p0/c1/w3",	5, "max",	true, false },
	/* 8 */ { "p1",		0, "max",	false, false },
	/* 9 */ { "p1/c2",	8, "16M",	false, true },
	/* 10 */ { "p1/c2/w4",	9, "max",	true, false },
	/* 11 */ { "p1/c2/w5",	9, "6M",	true, true },
	/* 12 */ { "p1/c3",	8, "max",	false, false },
	/* 13 */ { "p1/c3/w6",	12, "3M",	true, true },
};
#define NR_NODES ARRAY_SIZE(tree)

/* Shared between all processes of the run. */
struct shared {
	pthread_mutex_t ctl;		/* control actions vs. the checker */
	volatile int stop;
	int over[NR_NODES];		/* max lowered below usage */
	long ops[NR_OPS], errs[NR_ERRNO], sigbus, unexpected, munmap_retries;
	long migrations, cg_created, cg_removed, reclaims, limits;
	long samples, checks, violations, retried, freeze_timeouts;
	long retried_samples, retry_passes_max;	/* samples a retry passed */
	long cpu_ops[MAX_CPUS];		/* worker operations per cpu run on */
	long cpu_wrong;			/* ... on another cpu than pinned to */
	int churn_seq;
	/* churn files of removed cgroups: what they left on the parent */
	struct churn { int parent, live; char path[64]; } churn[512];
	int nr_churn;
};

static struct shared *sh;
static char base[PATH_MAX];		/* the stress root cgroup */
static char cgpath[NR_NODES][PATH_MAX];
static bool inject;
static unsigned int run_seed;
static int seconds = 60;

static void add(long *c, long n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* check_once_report(): print what fails, count nothing */
static bool describing;

static int violation(const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (describing) {
		ksft_print_msg("  %s\n", msg);
		return -1;
	}
	if (__atomic_add_fetch(&sh->violations, 1, __ATOMIC_RELAXED) <= 20)
		ksft_print_msg("VIOLATION: %s\n", msg);
	return -1;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static long ops_total(void)
{
	long total = 0;
	int k;

	for (k = 0; k < NR_OPS; k++)
		total += sh->ops[k];
	return total;
}

/* --- workers ---------------------------------------------------------------- */

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jmp, 1);
}

static void count_errno(int err, enum op op)
{
	add(&sh->errs[err > 0 && err < NR_ERRNO ? err : 0], 1);
	/*
	 * Without injected faults, only the limit may refuse; and fallocate
	 * may give up with ENOMEM when reclaim (the reclaimer's
	 * memory.reclaim) reaches the pages it is still allocating: shmem's
	 * own rule (shmem_writepage() counts nr_unswapped, shmem_fallocate()
	 * quits), with or without the series.
	 */
	if (!inject && err != EDQUOT && !(op == OP_FALLOCATE && err == ENOMEM)) {
		if (__atomic_add_fetch(&sh->unexpected, 1, __ATOMIC_RELAXED) <= 10)
			ksft_print_msg("unexpected error: %s from %s\n", strerror(err),
				       op_names[op]);
	}
}

/*
 * munmap() can fail: under injected faults, with ENOMEM for a node of the
 * maple tree. A mapping left behind keeps its file's pages after an
 * unlink, charged until the worker exits, and the checker (which counts
 * the blocks of the files it can see) would find the tree's current above
 * them. So retry until the mapping is gone.
 */
static void unmap(void *map, size_t len, enum op op)
{
	while (munmap(map, len)) {
		count_errno(errno, op);
		add(&sh->munmap_retries, 1);
	}
}

static void file_name(char *buf, size_t n, int dir, int worker, int k)
{
	snprintf(buf, n, "%s/w%d_%d", dirs[dir], worker, k);
}

static char data[256 * 1024];

static void worker_op(int id, unsigned int *seed)
{
	char path[PATH_MAX], other[PATH_MAX];
	int dir = rand_r(seed) % ARRAY_SIZE(dirs);
	enum op op = rand_r(seed) % NR_OPS;
	long off = (rand_r(seed) % (FILE_MAX / 4096)) * 4096 + rand_r(seed) % 64;
	long len = 1 + rand_r(seed) % (dir == HUGE_DIR ? 256 * KiB : 96 * KiB);
	int fd = -1, p[2];
	char *map;
	long r = 0;

	if (off + len > FILE_MAX)
		len = FILE_MAX - off;
	file_name(path, sizeof(path), dir, id, rand_r(seed) % NR_FILES);
	add(&sh->ops[op], 1);
	switch (op) {
	case OP_UNLINK:
		if (unlink(path) && errno != ENOENT)
			count_errno(errno, op);
		return;
	case OP_RENAME:
		file_name(other, sizeof(other), dir, id, rand_r(seed) % NR_FILES);
		if (rename(path, other) && errno != ENOENT)
			count_errno(errno, op);
		return;
	default:
		break;
	}
	fd = open(path, O_CREAT | O_RDWR, 0600);
	if (fd < 0) {
		count_errno(errno, op);
		return;
	}
	switch (op) {
	case OP_WRITE:
		if (lseek(fd, off, SEEK_SET) >= 0)
			r = write(fd, data, len);
		break;
	case OP_PWRITE:
		r = pwrite(fd, data, len, off);
		break;
	case OP_MMAP: {
		struct stat st;
		long start = off & ~(4095L), size = off + len;

		if (fstat(fd, &st) || (st.st_size < size && ftruncate(fd, size))) {
			r = -1;
			break;
		}
		map = mmap(NULL, size - start, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fd, start);
		if (map == MAP_FAILED) {
			r = -1;
			break;
		}
		if (sigsetjmp(bus_jmp, 1) == 0)
			memset(map + (off - start), 0x5a, len);
		else
			add(&sh->sigbus, 1);
		unmap(map, size - start, op);
		break;
	}
	case OP_FALLOCATE:
		r = fallocate(fd, 0, off, len);
		break;
	case OP_PUNCH:
		r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
		break;
	case OP_TRUNCATE:
		r = ftruncate(fd, rand_r(seed) % 2 ? 0 : off);
		break;
	case OP_SPLICE:
		if (pipe(p)) {
			r = -1;
			break;
		}
		if (len > 64 * KiB)
			len = 64 * KiB;
		if (write(p[1], data, len) == len) {
			loff_t o = off;

			r = splice(p[0], NULL, fd, &o, len, 0);
		}
		close(p[0]);
		close(p[1]);
		break;
	default:
		break;
	}
	if (r < 0)
		count_errno(errno, op);
	close(fd);
}

/* Fault in 256K of stack now, before faults are injected. */
static void prefault_stack(void)
{
	volatile char buf[256 * 1024];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 4096)
		buf[i] = 0;
}

static int nr_cpus;
static int pinned_cpu = -1;

/* Pin the calling worker to cpu ID % nr_cpus: the workers alternate. */
static int pin_worker(int id)
{
	cpu_set_t set;

	pinned_cpu = id % nr_cpus;
	CPU_ZERO(&set);
	CPU_SET(pinned_cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		ksft_print_msg("worker %d: sched_setaffinity to cpu %d: %s\n", id,
			       pinned_cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static void worker(int id)
{
	static char altstack[64 * 1024];
	unsigned int wseed = run_seed * 31 + id;
	struct sigaction sa = { .sa_handler = on_sigbus, .sa_flags = SA_ONSTACK };
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };

	/*
	 * With injected faults, a task whose stack must grow, or whose
	 * signal frame goes to a page not there yet, gets SIGSEGV when the
	 * allocation fails: that is the kernel's answer, not the series'.
	 * So the workers' own memory is all there before faults are on:
	 * the data buffer, the stack, and an alternate stack for SIGBUS;
	 * and it stays there: the reclaimer's memory.reclaim would push it
	 * to swap, and a failed swap-in while the kernel writes the SIGBUS
	 * frame is a SIGSEGV, while reading the data buffer is an EFAULT.
	 */
	if (pin_worker(id))
		exit(2);
	memset(data, 0x6b, sizeof(data));
	memset(altstack, 0, sizeof(altstack));
	prefault_stack();
	if (sigaltstack(&ss, NULL) || sigaction(SIGBUS, &sa, NULL))
		exit(2);
	if (mlockall(MCL_CURRENT)) {
		ksft_print_msg("worker %d: mlockall: %s\n", id, strerror(errno));
		exit(2);
	}
	if (inject) {
		int fd = open("/proc/self/make-it-fail", O_WRONLY);

		if (fd < 0 || write(fd, "1", 1) != 1)
			exit(2);
		close(fd);
	}
	while (!sh->stop) {
		int cpu = sched_getcpu();

		worker_op(id, &wseed);
		/* where the operation started: sampled, not the whole of it */
		if (cpu >= 0 && cpu < MAX_CPUS)
			add(&sh->cpu_ops[cpu], 1);
		if (cpu != pinned_cpu)
			add(&sh->cpu_wrong, 1);
	}
	exit(0);
}

/* --- control tasks ---------------------------------------------------------- */

static pid_t workers[NR_WORKERS];

static void migrator(unsigned int seed)
{
	static const int leaves[] = { 3, 4, 6, 7, 10, 11, 13 };

	while (!sh->stop) {
		int w = rand_r(&seed) % NR_WORKERS;
		int leaf = leaves[rand_r(&seed) % ARRAY_SIZE(leaves)];

		pthread_mutex_lock(&sh->ctl);
		if (!cg_enter(cgpath[leaf], workers[w]))
			add(&sh->migrations, 1);
		pthread_mutex_unlock(&sh->ctl);
		sleep_ms(20);
	}
	exit(0);
}

static void reclaimer(unsigned int seed)
{
	while (!sh->stop) {
		int n = rand_r(&seed) % NR_NODES;

		pthread_mutex_lock(&sh->ctl);
		cg_write(cgpath[n], "memory.reclaim", "2M");	/* EAGAIN is fine */
		add(&sh->reclaims, 1);
		pthread_mutex_unlock(&sh->ctl);
		sleep_ms(50);
	}
	exit(0);
}

static void limiter(unsigned int seed)
{
	static const char *const values[] = { "1M", "2M", "3M", "4M", "6M", "8M",
					      "12M", "16M", "24M", "max" };

	while (!sh->stop) {
		int n = rand_r(&seed) % NR_NODES;
		const char *v = values[rand_r(&seed) % ARRAY_SIZE(values)];

		if (tree[n].limiter) {
			pthread_mutex_lock(&sh->ctl);
			if (!cg_write(cgpath[n], "memory.tmpfs.max", (char *)v)) {
				long cur = tmpfs_current(cgpath[n]);
				long max = cg_read_long(cgpath[n], "memory.tmpfs.max");

				/* "max" reads as a string: atol gives 0 */
				if (strcmp(v, "max") && cur > max)
					sh->over[n] = 1;
				add(&sh->limits, 1);
			}
			pthread_mutex_unlock(&sh->ctl);
		}
		sleep_ms(30);
	}
	exit(0);
}

static int churn_writer(const char *cgroup, void *arg)
{
	int fd = open(arg, O_CREAT | O_TRUNC | O_WRONLY, 0600);

	if (fd < 0)
		return 0;
	write_pattern(fd, 0, 64 * KiB + (getpid() % 8) * 64 * KiB);	/* may hit a limit */
	close(fd);
	return 0;
}

/* Creates a cgroup under a c-level node, has it write a file, removes it. */
static void churner(unsigned int seed)
{
	static const int parents[] = { 2, 5, 9, 12 };

	while (!sh->stop) {
		int parent = parents[rand_r(&seed) % ARRAY_SIZE(parents)], i;
		char name[24], *cg;
		struct churn *c;

		pthread_mutex_lock(&sh->ctl);
		/* drop an old file now and then */
		if (sh->nr_churn && rand_r(&seed) % 3 == 0) {
			c = &sh->churn[rand_r(&seed) % sh->nr_churn];
			if (c->live && !unlink(c->path))
				c->live = 0;
		}
		for (i = 0; i < sh->nr_churn && sh->churn[i].live; i++)
			;	/* a free slot, or the next one */
		if (i < (int)ARRAY_SIZE(sh->churn)) {
			c = &sh->churn[i];
			snprintf(name, sizeof(name), "tmp%d", sh->churn_seq++);
			snprintf(c->path, sizeof(c->path), "%s/%s", CHURN_DIR, name);
			cg = cg_name(cgpath[parent], name);
			if (cg && !cg_create(cg)) {
				add(&sh->cg_created, 1);
				cg_run(cg, churn_writer, c->path);
				c->parent = parent;
				c->live = 1;
				if (i == sh->nr_churn)
					sh->nr_churn++;
				if (!cg_destroy(cg))
					add(&sh->cg_removed, 1);
			}
			free(cg);
		}
		pthread_mutex_unlock(&sh->ctl);
		sleep_ms(100);
	}
	exit(0);
}

/* --- checker ---------------------------------------------------------------- */

static int freeze(int on)
{
	char want[16];
	long t0 = now_ms();

	if (cg_write(base, "cgroup.freeze", on ? "1" : "0"))
		return -1;
	snprintf(want, sizeof(want), "frozen %d", on);
	while (cg_read_strstr(base, "cgroup.events", want)) {
		if (now_ms() - t0 > 10000) {
			add(&sh->freeze_timeouts, 1);
			return -1;
		}
		sleep_ms(1);
	}
	return 0;
}

/* bytes of every file under DIR (blocks of 512) */
static long dir_blocks(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	long sum = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!lstat(path, &st) && S_ISREG(st.st_mode))
			sum += st.st_blocks * 512;
	}
	closedir(d);
	return sum;
}

/*
 * After a mismatch between the tree's current and the files: name the
 * unlinked files some task still maps (they hold pages the checker cannot
 * see), so a report says whether the difference is there.
 */
static void report_deleted_mappings(void)
{
	char path[300], line[PATH_MAX + 128];
	struct dirent *de;
	DIR *d = opendir("/proc");
	int n = 0;

	if (!d)
		return;
	while ((de = readdir(d)) && n < 10) {
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f) && n < 10) {
			if (strstr(line, "stress") && strstr(line, "(deleted)")) {
				ksft_print_msg("pid %s maps an unlinked file: %s", de->d_name, line);
				n++;
			}
		}
		fclose(f);
	}
	closedir(d);
	if (!n)
		ksft_print_msg("no task maps an unlinked file of the run\n");
}

/* One pass over the frozen tree; returns the number of failed checks. */
static int check_once(bool final, bool report)
{
	long cur[NR_NODES], max[NR_NODES], sum[NR_NODES] = { 0 }, own[NR_NODES] = { 0 };
	long files = 0, mem, swap;
	int bad = 0, i;

	for (i = 0; i < (int)NR_NODES; i++) {
		cur[i] = tmpfs_current(cgpath[i]);
		max[i] = cg_read_long(cgpath[i], "memory.tmpfs.max");
		if (!cg_read_strcmp(cgpath[i], "memory.tmpfs.max", "max\n"))
			max[i] = LONG_MAX;
	}
	for (i = 0; i < sh->nr_churn; i++) {
		struct stat st;

		if (sh->churn[i].live && !stat(sh->churn[i].path, &st))
			own[sh->churn[i].parent] += st.st_blocks * 512;
	}
	for (i = 1; i < (int)NR_NODES; i++)
		sum[tree[i].parent] += cur[i];
	for (i = 0; i < (int)ARRAY_SIZE(dirs); i++)
		files += dir_blocks(dirs[i]);
	files += dir_blocks(CHURN_DIR);

	for (i = 0; i < (int)NR_NODES; i++) {
		add(&sh->checks, 4);
		if (cur[i] < 0 || cur[i] > 1L << 40) {
			bad++;
			if (report)
				violation("%s: memory.tmpfs.current %ld", cgpath[i], cur[i]);
		}
		if (cur[i] > max[i] && !sh->over[i]) {
			bad++;
			if (report)
				violation("%s: current %ld > max %ld", cgpath[i], cur[i], max[i]);
		} else if (cur[i] <= max[i]) {
			sh->over[i] = 0;
		}
		if (!tree[i].leaf && cur[i] != sum[i] + own[i]) {
			bad++;
			if (report)
				violation("%s: current %ld != children %ld + removed children's files %ld",
					  cgpath[i], cur[i], sum[i], own[i]);
		}
		mem = cg_read_long(cgpath[i], "memory.current");
		swap = cg_read_long(cgpath[i], "memory.swap.current");
		if (cur[i] > mem + swap) {
			bad++;
			if (report)
				violation("%s: tmpfs %ld > memory %ld + swap %ld", cgpath[i],
					  cur[i], mem, swap);
		}
	}
	add(&sh->checks, 1);
	if (cur[0] != files) {
		bad++;
		if (report) {
			violation("%s: current %ld != blocks of all files %ld", base, cur[0], files);
			if (sh->violations <= 3 && !describing)
				report_deleted_mappings();
		}
	}
	if (final) {
		for (i = 0; i < (int)NR_NODES; i++) {
			add(&sh->checks, 1);
			if (cur[i] != 0) {
				bad++;
				if (report)
					violation("end: %s: current %ld, expected 0", cgpath[i], cur[i]);
			}
		}
	}
	return bad;
}

/* Print the checks that fail now, without counting them as violations. */
static void check_once_report(bool final)
{
	describing = true;
	check_once(final, true);
	describing = false;
}

/*
 * khugepaged and kswapd are not frozen: a charge they are moving can be
 * caught half way. A failed check is retried; only one that persists
 * over 5 passes 20ms apart counts.
 */
static int check(bool final)
{
	int tries;

	add(&sh->samples, 1);
	for (tries = 0; tries < 5; tries++) {
		if (!check_once(final, false)) {
			if (tries) {
				/* what the retry hid: a violation for up to 100 ms */
				add(&sh->retried_samples, 1);
				if (tries > sh->retry_passes_max)
					sh->retry_passes_max = tries;
			}
			return 0;
		}
		if (!tries && sh->retried_samples < 5) {
			ksft_print_msg("retried check, first pass:\n");
			check_once_report(final);
		}
		add(&sh->retried, 1);
		sleep_ms(20);
	}
	return check_once(final, true);
}

/* One frozen sample, under the control lock. */
static void checker_pass(void)
{
	pthread_mutex_lock(&sh->ctl);
	if (!freeze(1))
		check(false);
	freeze(0);
	pthread_mutex_unlock(&sh->ctl);
}

/* --- fault injection -------------------------------------------------------- */

static const char *const fault_dirs[] = { "/sys/kernel/debug/failslab",
					  "/sys/kernel/debug/fail_page_alloc" };
#define FAULT_TIMES 1000000L

static int set_attr(const char *dir, const char *attr, const char *val)
{
	char path[PATH_MAX];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

static long get_attr(const char *dir, const char *attr)
{
	char path[PATH_MAX], buf[64] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	fd = open(path, O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return -1;
	close(fd);
	return atol(buf);
}

static int faults_on(void)
{
	char times[32];
	size_t i;

	snprintf(times, sizeof(times), "%ld", FAULT_TIMES);
	for (i = 0; i < ARRAY_SIZE(fault_dirs); i++) {
		const char *d = fault_dirs[i];

		if (set_attr(d, "task-filter", "Y") || set_attr(d, "probability", "2") ||
		    set_attr(d, "interval", "1") || set_attr(d, "times", times) ||
		    set_attr(d, "space", "0") || set_attr(d, "verbose", "0") ||
		    set_attr(d, "ignore-gfp-wait", "N")) {
			ksft_print_msg("%s: cannot configure: %s\n", d, strerror(errno));
			return -1;
		}
	}
	if (set_attr(fault_dirs[1], "ignore-gfp-highmem", "N") ||
	    set_attr(fault_dirs[1], "min-order", "0"))
		return -1;
	return 0;
}

static long faults_off(void)
{
	long injected = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fault_dirs); i++) {
		long left = get_attr(fault_dirs[i], "times");

		set_attr(fault_dirs[i], "probability", "0");
		ksft_print_msg("%s: %ld faults injected\n", fault_dirs[i], FAULT_TIMES - left);
		injected += FAULT_TIMES - left;
	}
	return injected;
}

/* --- setup and teardown ----------------------------------------------------- */

static int make_tree(const char *root)
{
	int i;

	snprintf(base, sizeof(base), "%s/tmpfs_stress", root);
	for (i = 0; i < (int)NR_NODES; i++) {
		snprintf(cgpath[i], sizeof(cgpath[i]), "%s%s%s", base,
			 i ? "/" : "", tree[i].name);
		if (cg_create(cgpath[i]) ||
		    (!tree[i].leaf && cg_write(cgpath[i], "cgroup.subtree_control", "+memory")) ||
		    cg_write(cgpath[i], "memory.tmpfs.max", (char *)tree[i].max)) {
			ksft_print_msg("creating %s: %s\n", cgpath[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void remove_tree(void)
{
	char path[PATH_MAX + 32];
	int i, k;

	/* churn cgroups that a failed rmdir may have left */
	for (k = 0; k < sh->churn_seq; k++)
		for (i = 0; i < (int)NR_NODES; i++) {
			snprintf(path, sizeof(path), "%s/tmp%d", cgpath[i], k);
			rmdir(path);
		}
	for (i = NR_NODES - 1; i >= 0; i--)
		cg_destroy(cgpath[i]);
}

static void remove_files(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	size_t i;
	const char *all[] = { CHURN_DIR, dirs[0], dirs[1], dirs[2] };

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		DIR *d = opendir(all[i]);

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", all[i], de->d_name);
			unlink(path);
		}
		if (d)
			closedir(d);
	}
}

static const char *const helper_names[] = { "migrator", "reclaimer", "limiter",
					    "churner" };

/*
 * At most 1 sample in 100 may need a retry to pass (and 2 in a short
 * run): each hides a state that broke an invariant for up to 100 ms.
 */
static int max_retried_samples(void)
{
	return sh->samples / 100 > 2 ? sh->samples / 100 : 2;
}

/* Fail, printing what, unless COUNT reached MIN. */
static int at_least(const char *what, long count, long min)
{
	if (count >= min)
		return 0;
	ksft_print_msg("too few %s: %ld, expected at least %ld\n", what, count, min);
	return 1;
}

/*
 * The run did what it claims: every operation, on every cpu, the limits
 * hit (EDQUOT, SIGBUS), every control action and the checker, each many
 * times. Minimums far below what the slowest kernel does: a 30 s run of
 * the plain kernel on 2 TCG cpus does about 2600 of each operation,
 * 10000 on each cpu, 70 migrations, 45 cgroups created and removed, 60
 * reclaims, 55 limit changes, 45 samples; the KASAN kernel under
 * injected faults about 300 of each operation, 1500 on each cpu, and 6
 * to 9 of each control action (30 s, a loaded host). So at least 100 of
 * each operation, 10 a second on each cpu, and one of each control
 * action every 10 seconds.
 */
static int too_few(void)
{
	long control = seconds / 10 > 1 ? seconds / 10 : 1;
	int bad = 0, k;

	for (k = 0; k < NR_OPS; k++)
		bad += at_least(op_names[k], sh->ops[k], 100);
	for (k = 0; k < nr_cpus; k++) {
		char what[32];

		snprintf(what, sizeof(what), "operations on cpu%d", k);
		bad += at_least(what, sh->cpu_ops[k], 10L * seconds);
	}
	if (sh->cpu_wrong) {
		ksft_print_msg("%ld operations ran on another cpu than their worker's\n",
			       sh->cpu_wrong);
		bad++;
	}
	bad += at_least("EDQUOT errors", sh->errs[EDQUOT], 10);
	bad += at_least("SIGBUS", sh->sigbus, 1);
	bad += at_least("migrations", sh->migrations, control);
	bad += at_least("cgroups created", sh->cg_created, control);
	bad += at_least("cgroups removed", sh->cg_removed, control);
	bad += at_least("reclaims", sh->reclaims, control);
	bad += at_least("limit changes", sh->limits, control);
	bad += at_least("frozen samples", sh->samples, control);
	return bad;
}

static pid_t spawn(void (*fn)(unsigned int), unsigned int seed)
{
	pid_t pid = fork();

	if (pid == 0)
		fn(seed);
	return pid;
}

int main(int argc, char **argv)
{
	char root[PATH_MAX];
	pid_t helpers[4];
	pthread_mutexattr_t ma;
	long injected = 0, t0, next, run_violations, dying;
	int opt, i, end_bad, worker_bad = 0, status;
	size_t k;

	run_seed = time(NULL);
	if (getenv("TMPFS_STRESS_SECONDS"))
		seconds = atoi(getenv("TMPFS_STRESS_SECONDS"));
	while ((opt = getopt(argc, argv, "t:s:f")) != -1) {
		switch (opt) {
		case 't':
			seconds = atoi(optarg);
			break;
		case 's':
			run_seed = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			inject = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-t SECONDS] [-s SEED] [-f]\n", argv[0]);
			return 2;
		}
	}
	if (seconds <= 0) {
		fprintf(stderr, "%s: -t needs a positive number of seconds\n", argv[0]);
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	ksft_print_header();
	ksft_set_plan(5);
	if (nr_cpus < 2 || nr_cpus > MAX_CPUS)
		ksft_exit_fail_msg("%d cpus online: the stress needs 2 to %d\n", nr_cpus, MAX_CPUS);
	if (cg_find_unified_root(root, sizeof(root), NULL))
		ksft_exit_fail_msg("cgroup v2 isn't mounted\n");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(sh, 0, sizeof(*sh));
	sh->churn_seq = run_seed % 1000;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->ctl, &ma);

	if (mkdir(dirs[0], 0755) || mkdir(dirs[1], 0755) || mkdir(dirs[2], 0755) ||
	    mkdir(CHURN_DIR, 0755) ||
	    mount("tmpfs", dirs[HUGE_DIR], "tmpfs", 0, "huge=always"))
		ksft_exit_fail_msg("stress directories: %s\n", strerror(errno));
	dying = nr_dying(root);
	if (make_tree(root))
		ksft_exit_fail_msg("cannot build the cgroup tree\n");
	if (inject && faults_on())
		ksft_exit_fail_msg("fault injection unavailable (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, debugfs)\n");
	ksft_print_msg("stress: %d s, seed %u, %d workers, %zu cgroups (3 levels), tree max %s, fault injection %s\n",
		       seconds, run_seed, NR_WORKERS, NR_NODES, TREE_MAX, inject ? "on" : "off");

	for (i = 0; i < NR_WORKERS; i++) {
		static const int start[] = { 3, 4, 6, 7, 10, 11 };

		workers[i] = fork();
		if (workers[i] == 0) {
			if (cg_enter_current(cgpath[start[i]]))
				exit(3);
			worker(i);
		}
	}
	helpers[0] = spawn(migrator, run_seed + 1);
	helpers[1] = spawn(reclaimer, run_seed + 2);
	helpers[2] = spawn(limiter, run_seed + 3);
	helpers[3] = spawn(churner, run_seed + 4);

	t0 = now_ms();
	for (next = 10; now_ms() - t0 < seconds * 1000L;) {
		sleep_ms(200);
		checker_pass();
		if (now_ms() - t0 >= next * 1000L) {
			ksft_print_msg("stress: %lds, %ld operations, %ld checks, %ld violations\n",
				       next, ops_total(), sh->checks, sh->violations);
			next += 10;
		}
	}
	sh->stop = 1;
	for (i = 0; i < 4; i++) {
		if (waitpid(helpers[i], &status, 0) != helpers[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			ksft_print_msg("%s: %s %d\n", helper_names[i],
				       WIFSIGNALED(status) ? "killed by signal" : "exit status",
				       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			worker_bad++;
		}
	}
	for (i = 0; i < NR_WORKERS; i++) {
		if (waitpid(workers[i], &status, 0) != workers[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			ksft_print_msg("worker %d: %s %d\n", i,
				       WIFSIGNALED(status) ? "killed by signal" : "exit status",
				       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			worker_bad++;
		}
	}
	if (inject)
		injected = faults_off();

	/* all stopped: a last check, then everything goes */
	check(false);
	run_violations = sh->violations;
	remove_files();
	for (i = 0; i < sh->nr_churn; i++)
		sh->churn[i].live = 0;
	end_bad = check(true);
	umount(dirs[HUGE_DIR]);

	ksft_print_msg("operations: %ld in %d s:", ops_total(), seconds);
	for (k = 0; k < NR_OPS; k++)
		printf(" %s %ld", op_names[k], sh->ops[k]);
	printf("\n");
	ksft_print_msg("errors returned: SIGBUS %ld", sh->sigbus);
	for (k = 0; k < NR_ERRNO; k++)
		if (sh->errs[k])
			printf(", %s %ld", k ? strerrorname_np(k) : "other", sh->errs[k]);
	printf(", munmap retried %ld\n", sh->munmap_retries);
	ksft_print_msg("control: %ld migrations, %ld cgroups created, %ld removed, %ld reclaims, %ld limit changes\n",
		       sh->migrations, sh->cg_created, sh->cg_removed, sh->reclaims, sh->limits);
	ksft_print_msg("checker: %ld frozen samples, %ld checks, %ld retried, %ld freeze timeouts, %ld violations\n",
		       sh->samples, sh->checks, sh->retried, sh->freeze_timeouts, sh->violations);
	ksft_print_msg("retries: %ld samples passed only on a retry (at most %d allowed), after up to %ld retries (%ld ms)\n",
		       sh->retried_samples, max_retried_samples(), sh->retry_passes_max,
		       sh->retry_passes_max * 20);
	ksft_print_msg("workers pinned alternately to %d cpus:", nr_cpus);
	for (i = 0; i < nr_cpus; i++)
		printf(" cpu%d %ld", i, sh->cpu_ops[i]);
	printf(" operations (sched_getcpu() before each), %ld on another cpu than pinned\n",
	       sh->cpu_wrong);
	if (inject)
		ksft_print_msg("faults injected: %ld\n", injected);

	ksft_test_result(!run_violations && !sh->freeze_timeouts &&
			 sh->retried_samples <= max_retried_samples(), "stress_invariants\n");
	ksft_test_result(!end_bad, "stress_counters_zero\n");
	ksft_test_result(!worker_bad && !sh->unexpected && (!inject || injected > 0),
			 "stress_worker_errors\n");
	ksft_test_result(!too_few(), "stress_coverage\n");
	remove_tree();
	/*
	 * Every cgroup of the run is gone with its data: none may stay
	 * dying, once the swap slot caches let go of the swap entries freed
	 * last (they hold their memcg ids).
	 */
	ksft_test_result(!drain_swap_slots() && !wait_dying(root, dying, "stress"),
			 "stress_no_dying_cgroups\n");
	rmdir(CHURN_DIR);
	for (i = ARRAY_SIZE(dirs) - 1; i >= 0; i--)
		rmdir(dirs[i]);
	ksft_finished();
	return 0;
}
