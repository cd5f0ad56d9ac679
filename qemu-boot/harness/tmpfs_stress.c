// SPDX-License-Identifier: GPL-2.0
/*
 * tmpfs_stress: memory.tmpfs under concurrent abuse, with a checker.
 *
 * Workers in cgroups nested three deep with mixed memory.tmpfs.max write,
 * pwrite, store through shared mappings, fallocate, punch holes,
 * truncate, unlink, rename and splice, on /tmp, /dev/shm and a huge=always
 * tmpfs; and create and remove empty files and fifos, directories, short
 * symlinks (no data page) and long ones (one page, charged like data),
 * hard links and renames of them, under memory.tmpfs.inodes.max limits
 * set before the run (EDQUOT on creation is the expected error). Each
 * inode carries the leaf cgroup that created it (charged it): in its
 * mode's low bits, or the symlink's target. Meanwhile a migrator moves
 * them between cgroups (a worker only between two of its creations, so
 * that it knows the leaf each one charged), a churner
 * creates cgroups, has them write a file and removes them with the file
 * left, a reclaimer pushes data to swap with memory.reclaim and a limiter
 * raises and lowers limits. A checker freezes the tree a few times a
 * second and checks, for every cgroup: current <= max (unless the limiter
 * lowered max below usage, which frees nothing: then current may only
 * drop, until it is at or under max), current is
 * exactly the sum of its children's plus what removed children left, and
 * within memory + swap; and the whole tree's current is exactly the
 * blocks of every file left. For inodes, also: memory.tmpfs.inodes.current
 * <= inodes.max, a leaf's count is exactly the inodes created in it that
 * are left (counted by walking the directories, a hard link once), a
 * parent's is its children's plus what removed children left, and
 * memory.tmpfs.events inodes_fail of a leaf is exactly its workers'
 * EDQUOTs on creation (give or take those of long symlinks, which may be
 * the data limit's, and a creation the freeze caught). At the end every
 * file is removed and every counter must read 0.
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
#define NR_SLOTS	8		/* inode slots, per worker and directory */
#define SHORT_SYMLINK	24		/* inline in the inode: below 128 */
#define LONG_SYMLINK	200		/* a page of its own */
#define MAX_INODES	2048		/* names the checker can see */
#define FILE_MAX	(4 * MiB)
#define TREE_MAX	"48M"		/* bounds the whole run */
#define MAX_CGROUPS	64
#define NR_ERRNO	134
#define MAX_CPUS	64

static const char *const dirs[] = { "/tmp/stress", "/dev/shm/stress",
				    "/tmp/stress_huge" };
#define HUGE_DIR	2
#define CHURN_DIR	"/tmp/stress/churn"

/*
 * The data operations go to the data files w<worker>_<k>; the inode
 * operations from OP_CREATE on to the slots n<worker>_<k>, each empty or
 * holding an empty file or fifo, a directory, a symlink, or a hard link
 * to one of the worker's files or slots (never a directory).
 */
enum op { OP_WRITE, OP_PWRITE, OP_MMAP, OP_FALLOCATE, OP_PUNCH, OP_TRUNCATE,
	  OP_UNLINK, OP_RENAME, OP_SPLICE,
	  OP_CREATE, OP_MKDIR, OP_SYMLINK, OP_LONG_SYMLINK, OP_LINK, OP_REMOVE,
	  OP_RENAME_INODE, NR_OPS };
static const char *const op_names[] = { "write", "pwrite", "mmap-store",
	"fallocate", "punch-hole", "truncate", "unlink", "rename", "splice",
	"create", "mkdir", "symlink", "long-symlink", "link", "remove",
	"rename-inode" };

/*
 * The fixed tree: name, parent index, initial max, memory.tmpfs.inodes.max
 * (never changed during the run); leaves hold workers. A worker fills up
 * to 3 * (NR_FILES + NR_SLOTS) = 42 inodes: the inode limits are hit
 * all the time, w6's 0 refuses every creation, c2's on behalf of w4 too.
 */
static const struct node {
	const char *name;
	int parent;
	const char *max, *imax;
	bool leaf, limiter;	/* the limiter may change its max */
} tree[] = {
	/* 0 */ { "",		-1, TREE_MAX,	"max",	false, false },
	/* 1 */ { "p0",		0, "24M",	"max",	false, true },
	/* 2 */ { "p0/c0",	1, "max",	"max",	false, false },
	/* 3 */ { "p0/c0/w0",	2, "4M",	"12",	true, true },
	/* 4 */ { "p0/c0/w1",	2, "max",	"max",	true, false },
	/* 5 */ { "p0/c1",	1, "8M",	"max",	false, true },
	/* 6 */ { "p0/c1/w2",	5, "2M",	"6",	true, true },
	/* 7 */ { "p0/c1/w3",	5, "max",	"max",	true, false },
	/* 8 */ { "p1",		0, "max",	"max",	false, false },
	/* 9 */ { "p1/c2",	8, "16M",	"48",	false, true },
	/* 10 */ { "p1/c2/w4",	9, "max",	"max",	true, false },
	/* 11 */ { "p1/c2/w5",	9, "6M",	"20",	true, true },
	/* 12 */ { "p1/c3",	8, "max",	"max",	false, false },
	/* 13 */ { "p1/c3/w6",	12, "3M",	"0",	true, true },
};
#define NR_NODES ARRAY_SIZE(tree)

/* Shared between all processes of the run. */
struct shared {
	pthread_mutex_t ctl;		/* control actions vs. the checker */
	volatile int stop;
	/*
	 * The limiter lowered max below usage: the most the usage may be
	 * now (it may only drop), else 0. See limiter_over() and check().
	 */
	long over[NR_NODES];
	/* the limiter's last two values of each node, and when (diagnostics) */
	char limit_now[NR_NODES][8], limit_before[NR_NODES][8];
	long limit_ms[NR_NODES], limit_cur[NR_NODES];
	long ops[NR_OPS], errs[NR_ERRNO], sigbus, unexpected, munmap_retries;
	long migrations, cg_created, cg_removed, reclaims, limits;
	long samples, checks, violations, retried, freeze_timeouts;
	long retried_samples, retry_passes_max;	/* samples a retry passed */
	long cpu_ops[MAX_CPUS];		/* worker operations per cpu run on */
	long cpu_wrong;			/* ... on another cpu than pinned to */
	int churn_seq;
	/*
	 * The leaf each worker is in, changed by the migrator only under
	 * the worker's lock, which the worker holds around each creation:
	 * the leaf a creation charged is known. pend: the leaf of a creation
	 * in flight (0: none), which may have raised an event not tallied.
	 */
	pthread_mutex_t wlock[NR_WORKERS];
	int leaf[NR_WORKERS], pend[NR_WORKERS];
	long edq_inode[NR_NODES];	/* EDQUOT on creation, per leaf */
	long edq_lsym[NR_NODES];	/* ... of a long symlink: either limit */
	long edquot_data;		/* EDQUOT of the data operations */
	/* the inodes the checker found: in its last sample, at most */
	long inodes_seen, links_seen, lsym_seen, inodes_most;
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
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

/* the operations that may allocate data, and so get EDQUOT from tmpfs.max */
static bool data_op(enum op op)
{
	return op <= OP_SPLICE && op != OP_UNLINK && op != OP_RENAME;
}

/* CREATING: ERR is the answer of a creation (an inode charge) */
static void count_errno(int err, enum op op, bool creating)
{
	bool edquot_ok = err == EDQUOT && (creating || data_op(op));

	add(&sh->errs[err > 0 && err < NR_ERRNO ? err : 0], 1);
	if (err == EDQUOT && !creating && data_op(op))
		add(&sh->edquot_data, 1);
	/*
	 * Without injected faults, only the limit may refuse, a creation or
	 * an allocation of data (never an unlink, rename, link or rmdir);
	 * and fallocate may give up with ENOMEM when reclaim (the
	 * reclaimer's memory.reclaim) reaches the pages it is still
	 * allocating: shmem's own rule (shmem_writepage() counts
	 * nr_unswapped, shmem_fallocate() quits), with or without the series.
	 */
	if (!inject && !edquot_ok && !(op == OP_FALLOCATE && err == ENOMEM)) {
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
		count_errno(errno, op, false);
		add(&sh->munmap_retries, 1);
	}
}

static void file_name(char *buf, size_t n, int dir, int worker, int k)
{
	snprintf(buf, n, "%s/w%d_%d", dirs[dir], worker, k);
}

static void slot_name(char *buf, size_t n, int dir, int worker, int k)
{
	snprintf(buf, n, "%s/n%d_%d", dirs[dir], worker, k);
}

static char data[256 * 1024];

/* A robust lock: a worker killed while it holds it blocks no migration. */
static void lock_worker(int id)
{
	if (pthread_mutex_lock(&sh->wlock[id]) == EOWNERDEAD)
		pthread_mutex_consistent(&sh->wlock[id]);
}

/*
 * Around every call that may create an inode: returns the leaf that the
 * inode is charged to, the worker's, which the migrator cannot change
 * until create_end().
 */
static int create_begin(int id)
{
	int leaf;

	lock_worker(id);
	leaf = sh->leaf[id];
	__atomic_store_n(&sh->pend[id], leaf, __ATOMIC_SEQ_CST);
	return leaf;
}

/* ERR: the creation's errno, 0 when it succeeded; keeps errno */
static void create_end(int id, int leaf, int err, bool long_symlink)
{
	int saved = errno;

	if (err == EDQUOT)
		add(long_symlink ? &sh->edq_lsym[leaf] : &sh->edq_inode[leaf], 1);
	__atomic_store_n(&sh->pend[id], 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&sh->wlock[id]);
	errno = saved;
}

/* the target of a symlink created in LEAF: "L<leaf>:" and padding */
static void symlink_target(char *buf, int leaf, int len)
{
	int n = snprintf(buf, len + 1, "L%d:", leaf);

	memset(buf + n, 'x', len - n);
	buf[len] = 0;
}

/* Remove what PATH names, a directory too; nothing there is fine. */
static int remove_path(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	return S_ISDIR(st.st_mode) ? rmdir(path) : unlink(path);
}

/*
 * The inode operations, on the worker's own slots: only this worker
 * touches them, so it knows what is there, and a creation first removes
 * what the slot holds. A creation's only expected error is EDQUOT; other
 * errors (ENOENT of a slot found empty aside) count as unexpected.
 */
static void inode_op(int id, unsigned int *seed, int dir, enum op op)
{
	char path[PATH_MAX], other[PATH_MAX], target[LONG_SYMLINK + 1];
	struct stat st, st2;
	int leaf, r = 0, err, fd;

	slot_name(path, sizeof(path), dir, id, rand_r(seed) % NR_SLOTS);
	switch (op) {
	case OP_REMOVE:
		if (remove_path(path))
			count_errno(errno, op, false);
		return;
	case OP_RENAME_INODE:
		slot_name(other, sizeof(other), dir, id, rand_r(seed) % NR_SLOTS);
		if (lstat(path, &st)) {
			if (errno != ENOENT)
				count_errno(errno, op, false);
			return;
		}
		/* a directory may replace only an (empty) directory */
		if (!lstat(other, &st2) && S_ISDIR(st.st_mode) != S_ISDIR(st2.st_mode) &&
		    remove_path(other)) {
			count_errno(errno, op, false);
			return;
		}
		if (rename(path, other))
			count_errno(errno, op, false);
		return;
	case OP_LINK:
		/* to a data file or a slot of this worker: no new inode */
		if (rand_r(seed) % 2)
			file_name(other, sizeof(other), dir, id, rand_r(seed) % NR_FILES);
		else
			slot_name(other, sizeof(other), dir, id, rand_r(seed) % NR_SLOTS);
		if (lstat(other, &st)) {
			if (errno != ENOENT)
				count_errno(errno, op, false);
			return;
		}
		if (S_ISDIR(st.st_mode) || !strcmp(path, other))
			return;
		if (remove_path(path) || link(other, path))
			count_errno(errno, op, false);
		return;
	default:
		break;
	}
	if (remove_path(path)) {
		count_errno(errno, op, false);
		return;
	}
	leaf = create_begin(id);
	switch (op) {
	case OP_CREATE:
		/* the mode's low bits name the leaf: the worker's umask is 0 */
		if (rand_r(seed) % 2) {
			fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600 | leaf);
			r = fd < 0 ? -1 : close(fd);
		} else {
			r = mknod(path, S_IFIFO | 0600 | leaf, 0);
		}
		break;
	case OP_MKDIR:
		r = mkdir(path, 0700 | leaf);
		break;
	case OP_SYMLINK:
	case OP_LONG_SYMLINK:
		symlink_target(target, leaf, op == OP_SYMLINK ? SHORT_SYMLINK : LONG_SYMLINK);
		r = symlink(target, path);
		break;
	default:
		break;
	}
	err = r ? errno : 0;
	create_end(id, leaf, err, op == OP_LONG_SYMLINK);
	if (err)
		count_errno(err, op, true);
}

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
	int leaf;

	add(&sh->ops[op], 1);
	if (op >= OP_CREATE) {
		inode_op(id, seed, dir, op);
		return;
	}
	if (off + len > FILE_MAX)
		len = FILE_MAX - off;
	file_name(path, sizeof(path), dir, id, rand_r(seed) % NR_FILES);
	switch (op) {
	case OP_UNLINK:
		if (unlink(path) && errno != ENOENT)
			count_errno(errno, op, false);
		return;
	case OP_RENAME:
		file_name(other, sizeof(other), dir, id, rand_r(seed) % NR_FILES);
		if (rename(path, other) && errno != ENOENT)
			count_errno(errno, op, false);
		return;
	default:
		break;
	}
	/* may create the file: its inode is charged, its mode names the leaf */
	leaf = create_begin(id);
	fd = open(path, O_CREAT | O_RDWR, 0600 | leaf);
	create_end(id, leaf, fd < 0 ? errno : 0, false);
	if (fd < 0) {
		count_errno(errno, op, true);
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
		count_errno(errno, op, false);
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
	umask(0);
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
		lock_worker(w);		/* between two of its creations */
		if (!cg_enter(cgpath[leaf], workers[w])) {
			sh->leaf[w] = leaf;
			add(&sh->migrations, 1);
		}
		pthread_mutex_unlock(&sh->wlock[w]);
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

static long read_limit(const char *cg, const char *file)
{
	if (!cg_read_strcmp(cg, file, "max\n"))
		return LONG_MAX;
	return cg_read_long(cg, file);
}

/*
 * sh->over[N] once the limiter has written node N's memory.tmpfs.max,
 * which was OLD; CUR: its usage, read right after the write.
 *
 * The kernel's rule: lowering the max below usage succeeds and frees
 * nothing, and allocations then fail until usage is at or under it (the
 * write returns the pages CPUs held ahead of use for the subtree, and no
 * CPU takes more without room for them). So a node is legitimately over
 * its max only if its usage was above it when the max was written, and
 * from then on its usage only drops; once at or under the max, it never
 * passes it again until the next write. The workers run meanwhile: that
 * usage cannot be read, only bounded, and never so as to excuse what the
 * kernel does not allow:
 *
 * - From above, without a read: the usage was at most the old max, or if
 *   the node was over already, its bound (more is the checker's to find).
 *   A new max at or above that (a raise, "max") cannot leave the node
 *   over: no excuse, whatever a read would say (a charge that fails adds
 *   its pages and takes them back, and a read in between sees them).
 * - After the write the usage can only drop: a single read at or under
 *   the new max proves the node is not over, now or later. Otherwise read
 *   again, 1 ms apart (that every read catches a failing charge is
 *   unlikely), and excuse no more than the least read: the checker flags
 *   usage above it as it does usage above the max, lowers it to what a
 *   pass it keeps reads, and drops it once a kept pass reads the node at
 *   or under its max (check()).
 *
 * Not setting over from a read before the write, nor whenever the max
 * goes down: either would excuse a node whose max was lowered, but not
 * below its usage, and which then passed it. What is still excused: a node
 * that all the reads after the write find above the new max, up to the
 * least of them. Either the write left it there, or the kernel let it
 * pass the max between the write and the first read, and never let it
 * grow after: the two cannot be told apart while the workers run, and
 * freezing them around the write would lose the race of the write (and
 * the batches it returns) with their charges.
 */
static long limiter_over(int n, long old, long cur)
{
	long max = read_limit(cgpath[n], "memory.tmpfs.max");
	long most = sh->over[n] ? sh->over[n] : old;
	int k;

	if (most <= max)
		return 0;
	for (k = 1; cur > max && k < 4; k++) {
		long again;

		sleep_ms(1);
		again = tmpfs_current(cgpath[n]);
		if (again < cur)
			cur = again;
	}
	if (cur <= max)
		return 0;
	return cur < most ? cur : most;
}

static void limiter(unsigned int seed)
{
	static const char *const values[] = { "1M", "2M", "3M", "4M", "6M", "8M",
					      "12M", "16M", "24M", "max" };

	while (!sh->stop) {
		int n = rand_r(&seed) % NR_NODES;
		const char *v = values[rand_r(&seed) % ARRAY_SIZE(values)];

		if (tree[n].limiter) {
			long old;

			pthread_mutex_lock(&sh->ctl);
			old = read_limit(cgpath[n], "memory.tmpfs.max");
			if (!cg_write(cgpath[n], "memory.tmpfs.max", (char *)v)) {
				long cur = tmpfs_current(cgpath[n]);

				sh->over[n] = limiter_over(n, old, cur);
				add(&sh->limits, 1);
				memcpy(sh->limit_before[n], sh->limit_now[n], 8);
				snprintf(sh->limit_now[n], 8, "%s", v);
				sh->limit_ms[n] = now_ms();
				sh->limit_cur[n] = cur;
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

	(void)cgroup;
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

/*
 * The reclaim that runs outside the control lock (kswapd, direct reclaim,
 * khugepaged's) and swap-outs, counters of /proc/vmstat: a swap-out of a
 * removed cgroup's page moves its tmpfs charge to an ancestor
 * (diagnostics).
 */
static const char *const vmstat_keys[] = { "pswpout", "pgscan_kswapd", "pgscan_direct",
					   "pgscan_khugepaged" };

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

/* what the checker sees of the inodes of the run: one entry a name */
static struct seen {
	dev_t dev;
	ino_t ino;
	int owner;		/* the leaf that created it; 0: a churn file */
	long bytes;		/* its blocks, but for a directory's */
	bool long_symlink;
} seen[MAX_INODES];

static int seen_cmp(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/*
 * The leaf that created a worker's inode: the low bits of its mode, or
 * for a symlink its target's "L<leaf>:"; -1 when none is there.
 */
static int inode_owner(const char *path, const struct stat *st)
{
	char target[LONG_SYMLINK + 8];
	ssize_t n;
	int owner;

	if (S_ISLNK(st->st_mode)) {
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			return -1;
		target[n] = 0;
		if (sscanf(target, "L%d:", &owner) != 1)
			return -1;
	} else {
		owner = st->st_mode & 077;
	}
	if (owner <= 0 || owner >= (int)NR_NODES || !tree[owner].leaf)
		return -1;
	return owner;
}

/*
 * Append the names of DIR (but CHURN_DIR, walked on its own) to seen[]
 * from *N on; CHURN: files of the churner's cgroups. Returns the number
 * of names whose inode carries no leaf.
 */
static int walk_dir(const char *dir, bool churn, int *n, bool report)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int bad = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct seen *e = &seen[*n];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!strcmp(path, CHURN_DIR) || lstat(path, &st))
			continue;
		if (*n == MAX_INODES) {
			bad++;
			if (report)
				violation("more than %d names in the stress directories", MAX_INODES);
			break;
		}
		e->dev = st.st_dev;
		e->ino = st.st_ino;
		e->bytes = S_ISDIR(st.st_mode) ? 0 : st.st_blocks * 512;
		e->long_symlink = S_ISLNK(st.st_mode) && st.st_size >= 128;
		e->owner = churn ? 0 : inode_owner(path, &st);
		if (e->owner < 0) {
			bad++;
			if (report)
				violation("%s: mode %o names no leaf cgroup", path, st.st_mode);
			continue;
		}
		(*n)++;
	}
	closedir(d);
	return bad;
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

/* memory_localevents: events stay on the cgroup they happen to */
static bool localevents;
/* a memory.tmpfs.inodes.max whose inodes_max events this node shows */
static bool ilimited[NR_NODES];

/*
 * The inode checks of one pass (the bytes' are check_once()'s): exact
 * counts per leaf, sums per parent, limits, events. Returns the number
 * of failed checks.
 */
static int check_inodes(bool final, bool report, long *files)
{
	long icur[NR_NODES], imax[NR_NODES], isum[NR_NODES] = { 0 }, iown[NR_NODES] = { 0 };
	long count[NR_NODES] = { 0 }, fail[NR_NODES], maxev[NR_NODES];
	long fsum[NR_NODES] = { 0 }, msum[NR_NODES] = { 0 };
	long inodes = 0, links = 0, lsym = 0;
	int bad = 0, n = 0, i, w;

	for (i = 0; i < (int)ARRAY_SIZE(dirs); i++)
		bad += walk_dir(dirs[i], false, &n, report);
	bad += walk_dir(CHURN_DIR, true, &n, report);
	/* an inode once, whatever its hard links */
	qsort(seen, n, sizeof(seen[0]), seen_cmp);
	for (i = 0; i < n; i++) {
		if (i && !seen_cmp(&seen[i - 1], &seen[i])) {
			links++;
			continue;
		}
		inodes++;
		*files += seen[i].bytes;
		count[seen[i].owner]++;
		lsym += seen[i].long_symlink;
	}
	for (i = 0; i < (int)NR_NODES; i++) {
		icur[i] = cg_read_long(cgpath[i], "memory.tmpfs.inodes.current");
		imax[i] = read_limit(cgpath[i], "memory.tmpfs.inodes.max");
		fail[i] = cg_read_key_long(cgpath[i], "memory.tmpfs.events", "inodes_fail ");
		maxev[i] = cg_read_key_long(cgpath[i], "memory.tmpfs.events", "inodes_max ");
	}
	for (i = 0; i < sh->nr_churn; i++) {
		struct stat st;

		if (sh->churn[i].live && !stat(sh->churn[i].path, &st))
			iown[sh->churn[i].parent]++;
	}
	for (i = 1; i < (int)NR_NODES; i++) {
		isum[tree[i].parent] += icur[i];
		fsum[tree[i].parent] += fail[i];
		msum[tree[i].parent] += maxev[i];
	}

	for (i = 0; i < (int)NR_NODES; i++) {
		long lo, hi;

		add(&sh->checks, 4);
		if (icur[i] < 0 || icur[i] > 1L << 30 || fail[i] < 0 || maxev[i] < 0) {
			bad++;
			if (report)
				violation("%s: memory.tmpfs.inodes.current %ld, events inodes_fail %ld inodes_max %ld",
					  cgpath[i], icur[i], fail[i], maxev[i]);
			continue;
		}
		/* invariant 1: inodes.max was set before the run, never changed */
		if (icur[i] > imax[i]) {
			bad++;
			if (report)
				violation("%s: inodes.current %ld > inodes.max %ld", cgpath[i],
					  icur[i], imax[i]);
		}
		/* invariant 2, and exactly what was created in a leaf */
		if (!tree[i].leaf && icur[i] != isum[i] + iown[i]) {
			bad++;
			if (report)
				violation("%s: inodes.current %ld != children %ld + removed children's files %ld",
					  cgpath[i], icur[i], isum[i], iown[i]);
		}
		if (tree[i].leaf && icur[i] != count[i]) {
			bad++;
			if (report)
				violation("%s: inodes.current %ld != %ld inodes created in it and left",
					  cgpath[i], icur[i], count[i]);
		}
		/*
		 * Events: a leaf's inodes_fail counts its workers' EDQUOTs on
		 * creation, plus perhaps those of long symlinks (the data limit
		 * may have refused their page: "fail" then) and of a creation
		 * the freeze caught before its worker tallied it.
		 */
		if (tree[i].leaf) {
			lo = sh->edq_inode[i];
			hi = lo + sh->edq_lsym[i];
			for (w = 0; w < NR_WORKERS; w++)
				hi += __atomic_load_n(&sh->pend[w], __ATOMIC_SEQ_CST) == i;
			if (fail[i] < lo || fail[i] > hi) {
				bad++;
				if (report)
					violation("%s: events inodes_fail %ld, its workers got EDQUOT on creation %ld times (and %ld on long symlinks, %ld in flight)",
						  cgpath[i], fail[i], lo, sh->edq_lsym[i], hi - lo - sh->edq_lsym[i]);
			}
		}
		if (!ilimited[i] && maxev[i]) {
			bad++;
			if (report)
				violation("%s: events inodes_max %ld without an inodes.max %s",
					  cgpath[i], maxev[i], localevents ? "of its own" : "in its subtree");
		}
		/* what happens in a subtree shows on its root, one max a fail */
		if (!localevents && (maxev[i] > fail[i] ||
				     (!tree[i].leaf && (fail[i] < fsum[i] || maxev[i] < msum[i])))) {
			bad++;
			if (report)
				violation("%s: events inodes_max %ld inodes_fail %ld, children's %ld and %ld",
					  cgpath[i], maxev[i], fail[i], msum[i], fsum[i]);
		}
	}
	add(&sh->checks, 1);
	if (icur[0] != inodes) {
		bad++;
		if (report)
			violation("%s: inodes.current %ld != inodes of all files %ld", base, icur[0], inodes);
	}
	if (final) {
		for (i = 0; i < (int)NR_NODES; i++) {
			add(&sh->checks, 1);
			if (icur[i] != 0) {
				bad++;
				if (report)
					violation("end: %s: inodes.current %ld, expected 0", cgpath[i], icur[i]);
			}
		}
	}
	if (!describing) {
		sh->inodes_seen = inodes;
		sh->links_seen = links;
		sh->lsym_seen = lsym;
		if (inodes > sh->inodes_most)
			sh->inodes_most = inodes;
	}
	return bad;
}

/*
 * What a "current > max" violation needs to be understood: the limiter's
 * last values for the node and when, the usage it read then, a second
 * read now, and one after the CPUs' batches were returned (a write of the
 * same max drains them).
 */
static void over_diagnostics(int i)
{
	char max[32] = "", events[256] = "";
	long again = tmpfs_current(cgpath[i]);

	ksft_print_msg("  limiter: %s then %s, %ld ms ago, usage %ld then\n",
		       sh->limit_before[i][0] ? sh->limit_before[i] : "-",
		       sh->limit_now[i][0] ? sh->limit_now[i] : "-",
		       sh->limit_now[i][0] ? now_ms() - sh->limit_ms[i] : -1L,
		       sh->limit_cur[i]);
	if (!cg_read(cgpath[i], "memory.tmpfs.max", max, sizeof(max)))
		cg_write(cgpath[i], "memory.tmpfs.max", max);
	cg_read(cgpath[i], "memory.tmpfs.events", events, sizeof(events));
	for (char *c = events; *c; c++)
		if (*c == '\n')
			*c = ' ';
	ksft_print_msg("  current read again %ld, after the batches were returned %ld; events: %s\n",
		       again, tmpfs_current(cgpath[i]), events);
}

/*
 * One pass over the frozen tree; returns the number of failed checks, and
 * in OVER what sh->over[] becomes if check() keeps the pass.
 */
static int check_once(bool final, bool report, long *over)
{
	long cur[NR_NODES], max[NR_NODES], sum[NR_NODES] = { 0 }, own[NR_NODES] = { 0 };
	long files = 0, mem, swap;
	bool excused;
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
	/* the data of every inode left (long symlinks too), and the inodes */
	bad += check_inodes(final, report, &files);

	for (i = 0; i < (int)NR_NODES; i++) {
		add(&sh->checks, 4);
		if (cur[i] < 0 || cur[i] > 1L << 40) {
			bad++;
			if (report)
				violation("%s: memory.tmpfs.current %ld", cgpath[i], cur[i]);
		}
		/*
		 * invariant 1, unless the limiter lowered max below usage:
		 * then the usage may not grow past the bound it left, which
		 * each kept pass lowers to what it reads, until one reads the
		 * node at or under max (limiter_over()).
		 */
		excused = sh->over[i] && cur[i] <= sh->over[i];
		if (cur[i] > max[i] && !excused) {
			bad++;
			if (report) {
				if (sh->over[i])
					violation("%s: current %ld > max %ld, and grew over %ld since max was lowered below usage",
						  cgpath[i], cur[i], max[i], sh->over[i]);
				else
					violation("%s: current %ld > max %ld", cgpath[i],
						  cur[i], max[i]);
				over_diagnostics(i);
			}
		}
		over[i] = cur[i] > max[i] && excused ? cur[i] : 0;
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
	long over[NR_NODES];

	describing = true;
	check_once(final, true, over);
	describing = false;
}

/*
 * khugepaged and kswapd are not frozen: a charge they are moving can be
 * caught half way. A failed check is retried; only one that persists
 * over 5 passes 20ms apart counts.
 *
 * sh->over[] changes only with a pass that passes, every check of it:
 * every pass of a sample judges the tree by the same bounds, a pass
 * thrown away for a retry or a report changes none, and a read that
 * clears or lowers one is one that summed up with all the others (a
 * node read half way through a move fails the sums). A failing last pass
 * changes none either: it counts as a violation.
 */
static int check(bool final)
{
	long over[NR_NODES];
	int tries, bad;

	add(&sh->samples, 1);
	for (tries = 0;; tries++) {
		bad = check_once(final, tries == 5, over);
		if (!bad) {
			if (tries) {
				/* what the retry hid: a violation for up to 100 ms */
				add(&sh->retried_samples, 1);
				if (tries > sh->retry_passes_max)
					sh->retry_passes_max = tries;
			}
			memcpy(sh->over, over, sizeof(over));
			return 0;
		}
		if (tries == 5)
			return bad;
		if (!tries && sh->retried_samples < 5) {
			ksft_print_msg("retried check, first pass:\n");
			check_once_report(final);
		}
		add(&sh->retried, 1);
		sleep_ms(20);
	}
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
		    cg_write(cgpath[i], "memory.tmpfs.max", (char *)tree[i].max) ||
		    cg_write(cgpath[i], "memory.tmpfs.inodes.max", (char *)tree[i].imax)) {
			ksft_print_msg("creating %s: %s\n", cgpath[i], strerror(errno));
			return -1;
		}
	}
	/* where inodes_max events may show: on the limit, or above it too */
	for (i = NR_NODES - 1; i >= 0; i--) {
		if (strcmp(tree[i].imax, "max"))
			ilimited[i] = true;
		if (i && ilimited[i] && !localevents)
			ilimited[tree[i].parent] = true;
	}
	return 0;
}

/* Is the cgroup2 mount at ROOT mounted with memory_localevents? */
static bool mounted_localevents(const char *root)
{
	char mnt[PATH_MAX], type[64], opts[1024];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	if (!f)
		return false;
	while (fscanf(f, "%*s %4095s %63s %1023s %*d %*d", mnt, type, opts) == 3)
		if (!strcmp(type, "cgroup2") && !strcmp(mnt, root) &&
		    strstr(opts, "memory_localevents"))
			found = true;
	fclose(f);
	return found;
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
			/* the workers' directories are empty */
			if (unlink(path) && errno == EISDIR && strcmp(path, CHURN_DIR))
				rmdir(path);
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
	long control = seconds / 10 > 1 ? seconds / 10 : 1, edq_inode = 0;
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
	for (k = 0; k < (int)NR_NODES; k++)
		edq_inode += sh->edq_inode[k];
	bad += at_least("EDQUOT errors of data", sh->edquot_data, 10);
	bad += at_least("EDQUOT errors on inode creation", edq_inode, 10);
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
	long inodes_left, links_left, lsym_left, edq_inode = 0, edq_lsym = 0;
	long vmstat0[ARRAY_SIZE(vmstat_keys)];
	int opt, i, end_bad, worker_bad = 0, status;
	bool thp = kernel_has_thp();
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
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_mutex_init(&sh->wlock[i], &ma);

	if (mkdir(dirs[0], 0755) || mkdir(dirs[1], 0755) || mkdir(dirs[2], 0755) ||
	    mkdir(CHURN_DIR, 0755) ||
	    mount("tmpfs", dirs[HUGE_DIR], "tmpfs", 0, thp ? "huge=always" : NULL))
		ksft_exit_fail_msg("stress directories: %s\n", strerror(errno));
	if (!thp)
		ksft_print_msg("no transparent huge pages in this kernel: %s is a tmpfs of small pages\n",
			       dirs[HUGE_DIR]);
	dying = nr_dying(root);
	localevents = mounted_localevents(root);
	if (make_tree(root))
		ksft_exit_fail_msg("cannot build the cgroup tree\n");
	if (inject && faults_on())
		ksft_exit_fail_msg("fault injection unavailable (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, debugfs)\n");
	ksft_print_msg("stress: %d s, seed %u, %d workers, %zu cgroups (3 levels), tree max %s, fault injection %s\n",
		       seconds, run_seed, NR_WORKERS, NR_NODES, TREE_MAX, inject ? "on" : "off");
	ksft_print_msg("inodes.max:");
	for (i = 0; i < (int)NR_NODES; i++)
		if (strcmp(tree[i].imax, "max"))
			printf(" %s %s", tree[i].name, tree[i].imax);
	printf(", %s events\n", localevents ? "local" : "hierarchical");

	for (i = 0; i < NR_WORKERS; i++) {
		static const int start[] = { 3, 4, 6, 7, 10, 11 };

		workers[i] = fork();
		if (workers[i] == 0) {
			/* not while the migrator moves it: it would not know where */
			lock_worker(i);
			if (cg_enter_current(cgpath[start[i]]))
				exit(3);
			sh->leaf[i] = start[i];
			pthread_mutex_unlock(&sh->wlock[i]);
			worker(i);
		}
	}
	helpers[0] = spawn(migrator, run_seed + 1);
	helpers[1] = spawn(reclaimer, run_seed + 2);
	helpers[2] = spawn(limiter, run_seed + 3);
	helpers[3] = spawn(churner, run_seed + 4);

	for (k = 0; k < ARRAY_SIZE(vmstat_keys); k++)
		vmstat0[k] = vmstat(vmstat_keys[k]);
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
	inodes_left = sh->inodes_seen;
	links_left = sh->links_seen;
	lsym_left = sh->lsym_seen;
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
	for (i = 0; i < (int)NR_NODES; i++) {
		edq_inode += sh->edq_inode[i];
		edq_lsym += sh->edq_lsym[i];
	}
	ksft_print_msg("inodes: %ld left at the end of the run (%ld hard links more, %ld long symlinks), at most %ld in a sample; EDQUOT on creation %ld, of long symlinks %ld, of data %ld; stress root events inodes_max %ld inodes_fail %ld\n",
		       inodes_left, links_left, lsym_left, sh->inodes_most, edq_inode,
		       edq_lsym, sh->edquot_data,
		       cg_read_key_long(base, "memory.tmpfs.events", "inodes_max "),
		       cg_read_key_long(base, "memory.tmpfs.events", "inodes_fail "));
	ksft_print_msg("control: %ld migrations, %ld cgroups created, %ld removed, %ld reclaims, %ld limit changes\n",
		       sh->migrations, sh->cg_created, sh->cg_removed, sh->reclaims, sh->limits);
	ksft_print_msg("vmstat during the run:");
	for (k = 0; k < ARRAY_SIZE(vmstat_keys); k++)
		printf("%s %s %ld", k ? "," : "", vmstat_keys[k],
		       vmstat(vmstat_keys[k]) - vmstat0[k]);
	printf("\n");
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
