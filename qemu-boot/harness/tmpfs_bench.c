// SPDX-License-Identifier: GPL-2.0
/*
 * tmpfs_bench: what tmpfs costs under one configuration, workload by
 * workload, measured in the guest (make bench runs it under QEMU with
 * -icount, where guest time counts the instructions the guest executes).
 *
 *   tmpfs_bench -c CONFIG [-r REPS] [-w WORKLOAD,...]
 *
 * CONFIG says where the workloads run:
 *   plain     a cgroup at depth 1, no memory.tmpfs.max written
 *   limit1    a cgroup at depth 1 with memory.tmpfs.max 1G (and, where
 *             the kernel has it, memory.tmpfs.inodes.max 1000000)
 *   nest8     a cgroup at depth 8, no limit written
 *   limit8    a cgroup at depth 8 with those limits at depth 8
 *   usrquota  depth 1; the tmpfs mounted usrquota with a 1G block hard
 *             limit for the user
 *   size      depth 1; the tmpfs mounted size=1G
 * Every workload runs as uid 1000 on its own tmpfs mount, REPS times
 * (default 11), and prints one line a repetition and a summary line:
 *   bench: CONFIG WORKLOAD rep N NS_PER_OP OPS
 *   bench: CONFIG WORKLOAD runs N min MIN median MED max MAX
 * WORKLOAD is lowercase letters only (scripts/measure/bench.sh parses it
 * as [a-z]+); -w takes such names separated by commas. The workloads with
 * two tasks (parallel, remotefree, alternate, edquot) put the second one
 * in a sibling of the workload's cgroup, under the same limits, and pin
 * them to CPUs 0 and 1 where the workload says so (the guest has 2 CPUs).
 */
#include "tmpfs_util.h"

#include <grp.h>
#include <linux/falloc.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>

#define UID 1000
#define MNT "/mnt/bench"
#define SIZE (64 * MiB)

static const char *config;
static char cg[PATH_MAX / 2];		/* where the workloads run */
static char mount_opts[128];

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void die(const char *what)
{
	printf("bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* die() with a message of its own, when errno says nothing */
static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	printf("bench: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

/* when the timed part of a workload began: a workload may restart it */
static long t_start;

static char page[4096], chunk[2 * 1024 * 1024];

/* 4 KiB appends up to 64 MiB, then unlink */
static long w_append(long *ops)
{
	int fd = open(MNT "/append", O_CREAT | O_TRUNC | O_WRONLY, 0600);
	long i;

	if (fd < 0)
		die("append: open");
	for (i = 0; i < SIZE / 4096; i++)
		if (write(fd, page, 4096) != 4096)
			die("append: write");
	close(fd);
	unlink(MNT "/append");
	*ops = SIZE / 4096;
	return 0;
}

/* stores through MAP_SHARED into a 64 MiB file: a fault a page */
static long w_mmap(long *ops)
{
	int fd = open(MNT "/mmap", O_CREAT | O_TRUNC | O_RDWR, 0600);
	char *map;
	long i;

	if (fd < 0 || ftruncate(fd, SIZE))
		die("mmap: open");
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	for (i = 0; i < SIZE; i += 4096)
		map[i] = 1;
	munmap(map, SIZE);
	close(fd);
	unlink(MNT "/mmap");
	*ops = SIZE / 4096;
	return 0;
}

/* fallocate 64 MiB in 2 MiB steps, then punch it out the same way */
static long w_fallocate(long *ops)
{
	int fd = open(MNT "/falloc", O_CREAT | O_TRUNC | O_RDWR, 0600);
	long off;

	if (fd < 0)
		die("fallocate: open");
	for (off = 0; off < SIZE; off += 2 * MiB)
		if (fallocate(fd, 0, off, 2 * MiB))
			die("fallocate");
	for (off = 0; off < SIZE; off += 2 * MiB)
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, 2 * MiB))
			die("punch hole");
	close(fd);
	unlink(MNT "/falloc");
	*ops = 2 * SIZE / (2 * MiB);
	return 0;
}

/*
 * 2048 times: create NAME%d, write BYTES (0 or 4096) to it, close, unlink;
 * what smallfiles and emptyfiles time
 */
static long create_files(const char *name, size_t bytes, long *ops)
{
	char path[64];
	int i, fd;

	for (i = 0; i < 2048; i++) {
		snprintf(path, sizeof(path), MNT "/%s%d", name, i);
		fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
		if (fd < 0 || (bytes && write(fd, page, bytes) != (ssize_t)bytes))
			die(name);
		close(fd);
		unlink(path);
	}
	*ops = 2048;
	return 0;
}

/* create, write 4 KiB, unlink: many small files */
static long w_smallfiles(long *ops)
{
	return create_files("small", 4096, ops);
}

/* create, close, unlink: empty files, the inode alone */
static long w_emptyfiles(long *ops)
{
	return create_files("empty", 0, ops);
}

/* huge=always: 64 MiB in 2 MiB writes */
static long w_huge(long *ops)
{
	int fd = open(MNT "-huge/huge", O_CREAT | O_TRUNC | O_WRONLY, 0600);
	long i;

	if (fd < 0)
		die("huge: open");
	for (i = 0; i < SIZE / (2 * MiB); i++)
		if (write(fd, chunk, 2 * MiB) != 2 * MiB)
			die("huge: write");
	close(fd);
	unlink(MNT "-huge/huge");
	*ops = SIZE / (2 * MiB);
	return 0;
}

/* the reclaim of w_swap runs as root, in the parent: a pipe each way */
static int to_parent[2], to_child[2];

/* 64 MiB written, pushed to zram with memory.reclaim, read back */
static long w_swap(long *ops)
{
	int fd = open(MNT "/swap", O_CREAT | O_TRUNC | O_RDWR, 0600);
	char c = 'r', buf[64 * 1024];
	long i;

	if (fd < 0)
		die("swap: open");
	for (i = 0; i < SIZE; i += sizeof(buf))
		if (pwrite(fd, chunk, sizeof(buf), i) != sizeof(buf))
			die("swap: write");
	if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
		die("swap: pipe");
	for (i = 0; i < SIZE; i += sizeof(buf))
		if (pread(fd, buf, sizeof(buf), i) != sizeof(buf))
			die("swap: read");
	close(fd);
	unlink(MNT "/swap");
	*ops = SIZE / 4096;
	return 0;
}

#define SHM_SEGMENTS 1024
#define SHM_SIZE (64 * KiB)

/*
 * POSIX shm in /dev/shm (the guest's tmpfs): 1024 times shm_open, ftruncate
 * to 64 KiB, mmap, store into each of its 16 pages, munmap, close,
 * shm_unlink; ns per segment
 */
static long w_shmseg(long *ops)
{
	char name[32];
	long i, off;

	snprintf(name, sizeof(name), "/tmpfs-bench-%d", (int)getpid());
	for (i = 0; i < SHM_SEGMENTS; i++) {
		int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
		char *map;

		if (fd < 0)
			die("shmseg: shm_open in /dev/shm");
		if (ftruncate(fd, SHM_SIZE))
			die("shmseg: ftruncate");
		map = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			die("shmseg: mmap");
		for (off = 0; off < SHM_SIZE; off += 4096)
			map[off] = 1;
		if (munmap(map, SHM_SIZE) || close(fd) || shm_unlink(name))
			die("shmseg: munmap, close or shm_unlink");
	}
	*ops = SHM_SEGMENTS;
	return 0;
}

#define READ_TMPFS MNT "/read"
#define READ_EXT2 "/mnt/scratch/tmpfs-bench-read"

/*
 * The read controls: PATH, a 64 MiB file, read with 4 KiB preads from the
 * page cache; ns per 4 KiB page. The first run (the warm-up) writes the
 * file and fsyncs it, before the clock starts; the workload's cleanup
 * removes it after the last repetition.
 */
static long read_file(const char *name, const char *path, long *ops)
{
	char buf[4096];
	struct stat st;
	int fd = open(path, O_RDONLY);
	long off;

	if (fd < 0 || fstat(fd, &st) || st.st_size != SIZE) {
		if (fd >= 0)
			close(fd);
		fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
		if (fd < 0)
			fail("%s: create %s: %s", name, path, strerror(errno));
		for (off = 0; off < SIZE; off += 2 * MiB)
			if (pwrite(fd, chunk, 2 * MiB, off) != 2 * MiB)
				fail("%s: write %s: %s", name, path, strerror(errno));
		if (fsync(fd) || close(fd))
			fail("%s: fsync %s: %s", name, path, strerror(errno));
		fd = open(path, O_RDONLY);
		if (fd < 0)
			fail("%s: open %s: %s", name, path, strerror(errno));
	}
	t_start = now_ns();
	for (off = 0; off < SIZE; off += sizeof(buf))
		if (pread(fd, buf, sizeof(buf), off) != sizeof(buf))
			fail("%s: read %s: %s", name, path, strerror(errno));
	close(fd);
	*ops = SIZE / 4096;
	return 0;
}

/* null control: reads from the bench tmpfs charge nothing */
static long w_tmpfsread(long *ops)
{
	return read_file("tmpfsread", READ_TMPFS, ops);
}

/* null control: the same on the guest's ext2 scratch disk (/mnt/scratch) */
static long w_extread(long *ops)
{
	return read_file("extread", READ_EXT2, ops);
}

static void rm_tmpfsread(void)
{
	unlink(READ_TMPFS);
}

static void rm_extread(void)
{
	unlink(READ_EXT2);
}

/* the workloads that run tasks of their own, from the parent (root) */
static double run_parallel(long *ops_out);
static double run_remotefree(long *ops_out);
static double run_alternate(long *ops_out);
static double run_edquot(long *ops_out);

/*
 * A workload is FN, timed in a uid 1000 child of the workload's cgroup
 * (one_run()), or RUN, which runs the repetition itself and returns the
 * ns per op; CLEANUP, if any, runs (as root) after its last repetition.
 */
static const struct workload {
	const char *name;
	long (*fn)(long *ops);
	double (*run)(long *ops_out);
	void (*cleanup)(void);
} workloads[] = {
	{ .name = "append", .fn = w_append },
	{ .name = "mmap", .fn = w_mmap },
	{ .name = "fallocate", .fn = w_fallocate },
	{ .name = "smallfiles", .fn = w_smallfiles },
	{ .name = "emptyfiles", .fn = w_emptyfiles },
	{ .name = "huge", .fn = w_huge },
	{ .name = "swap", .fn = w_swap },
	{ .name = "parallel", .run = run_parallel },
	{ .name = "remotefree", .run = run_remotefree },
	{ .name = "alternate", .run = run_alternate },
	{ .name = "shmseg", .fn = w_shmseg },
	{ .name = "edquot", .run = run_edquot },
	{ .name = "tmpfsread", .fn = w_tmpfsread, .cleanup = rm_tmpfsread },
	{ .name = "extread", .fn = w_extread, .cleanup = rm_extread },
};

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* The cgroup chain: DEPTH levels under the root, memory on for each. */
static void make_cgroups(const char *root, int depth, const char *limit)
{
	char path[PATH_MAX / 2];
	int i;

	snprintf(path, sizeof(path), "%s", root);
	for (i = 1; i <= depth; i++) {
		strncat(path, i == 1 ? "/bench" : "/l", sizeof(path) - strlen(path) - 1);
		if (i > 1) {
			char n[16];

			snprintf(n, sizeof(n), "%d", i);
			strncat(path, n, sizeof(path) - strlen(path) - 1);
		}
		if (mkdir(path, 0755) && errno != EEXIST)
			die(path);
		/* the last level holds the workers and the two siblings */
		if (cg_write(path, "cgroup.subtree_control", "+memory"))
			die("subtree_control");
	}
	snprintf(cg, sizeof(cg), "%s", path);
	if (limit && cg_write(cg, "memory.tmpfs.max", (char *)limit))
		die("memory.tmpfs.max");
	/* a kernel of the series before memory.tmpfs.inodes has no such file */
	if (limit && !access(cg_control(cg, "memory.tmpfs.inodes.max"), F_OK) &&
	    cg_write(cg, "memory.tmpfs.inodes.max", "1000000"))
		die("memory.tmpfs.inodes.max");
}

static void run_as_user_in(const char *cgroup)
{
	if (cg_enter_current(cgroup))
		die("cgroup.procs");
	if (setgroups(0, NULL) || setresgid(UID, UID, UID) || setresuid(UID, UID, UID))
		die("setuid");
}

static void mount_bench(void)
{
	char opts[192];

	mkdir(MNT, 0755);
	mkdir(MNT "-huge", 0755);
	if (mount("tmpfs", MNT, "tmpfs", 0, mount_opts[0] ? mount_opts : NULL))
		die("mount " MNT);
	snprintf(opts, sizeof(opts), "huge=always%s%s", mount_opts[0] ? "," : "", mount_opts);
	if (mount("tmpfs", MNT "-huge", "tmpfs", 0, opts))
		die("mount " MNT "-huge");
	if (chown(MNT, UID, UID) || chown(MNT "-huge", UID, UID))
		die("chown");
}

static void make_dirs(char work[PATH_MAX], char sib[2][PATH_MAX])
{
	int i;

	snprintf(work, PATH_MAX, "%s/work", cg);
	mkdir(work, 0755);
	for (i = 0; i < 2; i++) {
		snprintf(sib[i], PATH_MAX, "%s/sib%d", cg, i);
		mkdir(sib[i], 0755);
	}
}

/* w_parallel: two uid 1000 tasks, one in each sibling, released at once */
static double run_parallel(long *ops_out)
{
	char work[PATH_MAX], sib[2][PATH_MAX];
	int start[2], i, status;
	long t0, t1;
	pid_t pid[2];

	make_dirs(work, sib);
	if (pipe(start))
		die("pipe");
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			char path[64], c;
			int fd;
			long k;

			run_as_user_in(sib[i]);
			if (read(start[0], &c, 1) != 1)
				_exit(1);
			snprintf(path, sizeof(path), MNT "/par%d", i);
			fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
			if (fd < 0)
				_exit(1);
			for (k = 0; k < SIZE / 2 / 4096; k++)
				if (write(fd, page, 4096) != 4096)
					_exit(1);
			close(fd);
			unlink(path);
			_exit(0);
		}
	}
	t0 = now_ns();
	if (write(start[1], "gg", 2) != 2)
		die("pipe");
	for (i = 0; i < 2; i++)
		if (waitpid(pid[i], &status, 0) != pid[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			die("parallel: a writer failed");
	t1 = now_ns();
	close(start[0]);
	close(start[1]);
	*ops_out = SIZE / 4096;
	return (double)(t1 - t0) / *ops_out;
}

/* Run this task on CPU only. */
static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("sched_setaffinity to CPU %d: %s", cpu, strerror(errno));
}

/* fork(): the child (0 returned) runs as uid 1000 in CGROUP, on CPU only */
static pid_t fork_in(const char *cgroup, int cpu)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		pin(cpu);
		run_as_user_in(cgroup);
	}
	return pid;
}

/* Wait for PID, which must exit 0 (its failure it has printed itself). */
static void reap(pid_t pid, const char *who)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail("%s failed (status %#x)", who, status);
}

/* A timed child's result: NS for OPS operations, through a pipe. */
static void send_result(int fd, long ns, long ops)
{
	if (write(fd, &ns, sizeof(ns)) != sizeof(ns) ||
	    write(fd, &ops, sizeof(ops)) != sizeof(ops))
		die("result pipe");
}

static void recv_result(int fd, long *ns, long *ops, const char *who)
{
	if (read(fd, ns, sizeof(*ns)) != sizeof(*ns) ||
	    read(fd, ops, sizeof(*ops)) != sizeof(*ops))
		fail("%s died before reporting its time", who);
}

#define REMOTE_FILES 64
#define REMOTE_SIZE (256 * KiB)

/*
 * remotefree: a task of the workload's cgroup on CPU 0 writes 64 files of
 * 256 KiB (untimed) and exits; then a task of the sibling sib0 on CPU 1
 * writes 4 KiB of its own, so that CPU 1's memcg stock caches sib0, and
 * unlinks the 64 files: ns per page freed.
 */
static double run_remotefree(long *ops_out)
{
	char work[PATH_MAX], sib[2][PATH_MAX], path[64];
	long ns, ops;
	int res[2], i, fd;
	pid_t pid;

	make_dirs(work, sib);
	pid = fork_in(work, 0);
	if (pid == 0) {
		for (i = 0; i < REMOTE_FILES; i++) {
			snprintf(path, sizeof(path), MNT "/remote%d", i);
			fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
			if (fd < 0 || write(fd, chunk, REMOTE_SIZE) != REMOTE_SIZE)
				die("remotefree: the writer");
			close(fd);
		}
		_exit(0);
	}
	reap(pid, "remotefree: the writer");

	if (pipe(res))
		die("pipe");
	pid = fork_in(sib[0], 1);
	if (pid == 0) {
		long t0, t1;

		close(res[0]);
		fd = open(MNT "/remoteown", O_CREAT | O_TRUNC | O_WRONLY, 0600);
		if (fd < 0 || write(fd, page, 4096) != 4096)
			die("remotefree: the sibling's own write");
		t0 = now_ns();
		for (i = 0; i < REMOTE_FILES; i++) {
			snprintf(path, sizeof(path), MNT "/remote%d", i);
			if (unlink(path))
				die("remotefree: unlink");
		}
		t1 = now_ns();
		close(fd);
		unlink(MNT "/remoteown");
		send_result(res[1], t1 - t0, REMOTE_FILES * REMOTE_SIZE / 4096);
		_exit(0);
	}
	close(res[1]);
	recv_result(res[0], &ns, &ops, "remotefree: the remover");
	close(res[0]);
	reap(pid, "remotefree: the remover");
	*ops_out = ops;
	return (double)ns / ops;
}

#define ALTERNATE_ROUNDS 4096

/*
 * alternate: a task of the workload's cgroup and one of the sibling sib0,
 * both on CPU 0, append 4 KiB to a file each in strict turn (a token over
 * a pipe pair), 4096 rounds: 8192 pages, 16 MiB a file; ns per page.
 * The first task times it, from the sibling's first token to its last.
 */
static double run_alternate(long *ops_out)
{
	char work[PATH_MAX], sib[2][PATH_MAX], c;
	int ab[2], ba[2], res[2], fd;
	pid_t pid[2];
	long ns, ops, k;

	make_dirs(work, sib);
	if (pipe(ab) || pipe(ba) || pipe(res))
		die("pipe");
	pid[1] = fork_in(sib[0], 0);
	if (pid[1] == 0) {
		close(ab[1]);
		close(ba[0]);
		close(res[0]);
		close(res[1]);
		fd = open(MNT "/alternate1", O_CREAT | O_TRUNC | O_WRONLY, 0600);
		if (fd < 0)
			die("alternate: the sibling's open");
		if (write(ba[1], "r", 1) != 1)
			die("alternate: pipe");
		for (k = 0; k < ALTERNATE_ROUNDS; k++) {
			if (read(ab[0], &c, 1) != 1)
				fail("alternate: the first writer is gone");
			if (write(fd, page, 4096) != 4096)
				die("alternate: the sibling's write");
			if (write(ba[1], "t", 1) != 1)
				die("alternate: pipe");
		}
		/* the last token: the first writer has stopped its clock */
		if (read(ab[0], &c, 1) != 1)
			fail("alternate: the first writer is gone");
		close(fd);
		unlink(MNT "/alternate1");
		_exit(0);
	}
	pid[0] = fork_in(work, 0);
	if (pid[0] == 0) {
		long t0, t1;

		close(ab[0]);
		close(ba[1]);
		close(res[0]);
		fd = open(MNT "/alternate0", O_CREAT | O_TRUNC | O_WRONLY, 0600);
		if (fd < 0)
			die("alternate: open");
		if (read(ba[0], &c, 1) != 1)
			fail("alternate: the sibling writer is gone");
		t0 = now_ns();
		for (k = 0; k < ALTERNATE_ROUNDS; k++) {
			if (write(fd, page, 4096) != 4096)
				die("alternate: write");
			if (write(ab[1], "t", 1) != 1)
				die("alternate: pipe");
			if (read(ba[0], &c, 1) != 1)
				fail("alternate: the sibling writer is gone");
		}
		t1 = now_ns();
		if (write(ab[1], "x", 1) != 1)
			die("alternate: pipe");
		close(fd);
		unlink(MNT "/alternate0");
		send_result(res[1], t1 - t0, 2 * ALTERNATE_ROUNDS);
		_exit(0);
	}
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	close(res[1]);
	recv_result(res[0], &ns, &ops, "alternate: the first writer");
	close(res[0]);
	reap(pid[0], "alternate: the first writer");
	reap(pid[1], "alternate: the sibling writer");
	*ops_out = ops;
	return (double)ns / ops;
}

#define EDQUOT_LIMIT (1 * MiB)
#define EDQUOT_WRITES 8192

/*
 * edquot: a task of the workload's cgroup on CPU 0 fills a file to a 1 MiB
 * limit, then times 8192 4 KiB pwrites at its end, each of which must
 * fail: ns per failed write. The limit is memory.tmpfs.max 1M on the
 * workload's cgroup (below any limit of the configuration, on its parent),
 * EDQUOT; on a kernel without memory.tmpfs.max, a tmpfs mounted size=1M,
 * ENOSPC. Meanwhile a task of the sibling sib0 on CPU 1 writes 64 KiB to a
 * file of the bench tmpfs and truncates it, in a loop, until killed, so
 * that CPU 1's stock caches sib0 and holds tmpfs pages of it. It sleeps
 * 1 ms after each round: under -icount the instructions of both CPUs make
 * the guest's time, and QEMU runs the two vCPUs in turn, so a sibling that
 * never sleeps would make the time of a failed write depend on how the
 * turns fall (2.7 to 18 us on either kernel); paced, it adds a few per cent.
 */
static double run_edquot(long *ops_out)
{
	static bool told;
	char work[PATH_MAX], sib[2][PATH_MAX], path[PATH_MAX], c;
	const char *dir = MNT "-edquot";
	int ready[2], res[2], fd, status, want;
	bool memcg;
	pid_t writer, sibling;
	long ns, ops, k;

	make_dirs(work, sib);
	memcg = !access(cg_control(work, "memory.tmpfs.max"), F_OK);
	if (memcg) {
		if (cg_write(work, "memory.tmpfs.max", "1M"))
			die("edquot: memory.tmpfs.max");
		dir = MNT;
		want = EDQUOT;
	} else {
		mkdir(dir, 0755);
		if (mount("tmpfs", dir, "tmpfs", 0, "size=1M"))
			die("edquot: mount size=1M");
		if (chown(dir, UID, UID))
			die("edquot: chown");
		want = ENOSPC;
	}
	if (!told) {
		told = true;
		if (memcg)
			printf("bench: %s edquot: the limit is memory.tmpfs.max 1M on %s: EDQUOT expected\n",
			       config, work);
		else
			printf("bench: %s edquot: no memory.tmpfs.max; the limit is a tmpfs mounted size=1M: ENOSPC expected\n",
			       config);
	}
	snprintf(path, sizeof(path), "%s/edquot", dir);

	if (pipe(ready) || pipe(res))
		die("pipe");
	sibling = fork_in(sib[0], 1);
	if (sibling == 0) {
		close(ready[0]);
		close(res[0]);
		close(res[1]);
		struct timespec pause = { 0, 1000000 };

		fd = open(MNT "/edquot-sibling", O_CREAT | O_TRUNC | O_WRONLY, 0600);
		if (fd < 0)
			die("edquot: the sibling's open");
		for (k = 0;; k++) {
			if (pwrite(fd, chunk, 64 * KiB, 0) != 64 * KiB)
				die("edquot: the sibling's write");
			if (ftruncate(fd, 0))
				die("edquot: the sibling's truncate");
			if (!k && write(ready[1], "r", 1) != 1)
				die("edquot: pipe");
			nanosleep(&pause, NULL);
		}
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		fail("edquot: the sibling writer died before its first write");
	close(ready[0]);

	writer = fork_in(work, 0);
	if (writer == 0) {
		long t0, t1, off;
		ssize_t r;

		close(res[0]);
		fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
		if (fd < 0)
			die("edquot: open");
		for (off = 0; off < EDQUOT_LIMIT; off += 4096) {
			r = pwrite(fd, page, 4096, off);
			if (r != 4096)
				fail("edquot: filling the file to the limit: the write at %ld returned %zd (%s); memory.tmpfs.current %ld",
				     off, r, strerror(errno), memcg ? tmpfs_current(work) : -1);
		}
		t0 = now_ns();
		for (k = 0; k < EDQUOT_WRITES; k++) {
			errno = 0;
			r = pwrite(fd, page, 4096, EDQUOT_LIMIT);
			if (r != -1 || errno != want)
				fail("edquot: a write past the limit returned %zd (%s), not -1 (%s)",
				     r, strerror(errno), strerror(want));
		}
		t1 = now_ns();
		close(fd);
		unlink(path);
		send_result(res[1], t1 - t0, EDQUOT_WRITES);
		_exit(0);
	}
	close(res[1]);
	if (read(res[0], &ns, sizeof(ns)) != sizeof(ns) ||
	    read(res[0], &ops, sizeof(ops)) != sizeof(ops)) {
		kill(sibling, SIGKILL);
		fail("edquot: the writer died before reporting its time");
	}
	close(res[0]);
	kill(sibling, SIGKILL);
	reap(writer, "edquot: the writer");
	if (waitpid(sibling, &status, 0) != sibling)
		die("waitpid");
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail("edquot: the sibling writer failed (status %#x)", status);
	unlink(MNT "/edquot-sibling");
	if (memcg ? cg_write(work, "memory.tmpfs.max", "max") : umount(dir))
		die("edquot: removing the 1M limit");
	*ops_out = ops;
	return (double)ns / ops;
}

/* One repetition of W, in a child running as uid 1000; ns per op. */
static double one_run(const struct workload *w, long *ops_out)
{
	char work[PATH_MAX], sib[2][PATH_MAX], c;
	long t1, ops = 0, ns = 0;
	int status, i;
	pid_t pid;

	if (w->run)
		return w->run(ops_out);
	make_dirs(work, sib);
	if (pipe(to_parent) || pipe(to_child))
		die("pipe");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		run_as_user_in(work);
		t_start = now_ns();
		w->fn(&ops);
		t1 = now_ns();
		ns = t1 - t_start;
		if (write(to_parent[1], "d", 1) != 1 ||
		    write(to_parent[1], &ns, sizeof(ns)) != sizeof(ns) ||
		    write(to_parent[1], &ops, sizeof(ops)) != sizeof(ops))
			_exit(1);
		_exit(0);
	}
	/* the child's ends: a child that dies is then an EOF, not a hang */
	close(to_parent[1]);
	close(to_child[0]);
	/* serve the workload's requests until it says it is done */
	for (;;) {
		if (read(to_parent[0], &c, 1) != 1)
			die("the workload died");
		if (c == 'd')
			break;
		/* 'r', from w_swap: push its data out to zram */
		for (i = 0; i < 4; i++)
			cg_write(work, "memory.reclaim", "64M");	/* EAGAIN is fine */
		if (write(to_child[1], "g", 1) != 1)
			die("pipe");
	}
	if (read(to_parent[0], &ns, sizeof(ns)) != sizeof(ns) ||
	    read(to_parent[0], &ops, sizeof(ops)) != sizeof(ops))
		die("result");
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("workload failed");
	close(to_parent[0]);
	close(to_child[1]);
	*ops_out = ops;
	return (double)ns / ops;
}

/* Is NAME one of the comma-separated names of ONLY? */
static bool listed(const char *only, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* Every name of ONLY must be a workload's: no typo runs nothing. */
static void check_only(const char *only)
{
	const char *p;
	size_t k, n;

	for (p = only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		n = strcspn(p, ",");
		for (k = 0; k < ARRAY_SIZE(workloads); k++)
			if (strlen(workloads[k].name) == n && !strncmp(p, workloads[k].name, n))
				break;
		if (k == ARRAY_SIZE(workloads)) {
			printf("bench: -w: no workload '%.*s'; the workloads:", (int)n, p);
			for (k = 0; k < ARRAY_SIZE(workloads); k++)
				printf(" %s", workloads[k].name);
			printf("\n");
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	char root[PATH_MAX], *only = NULL;
	int reps = 11, opt, r;
	size_t k;

	while ((opt = getopt(argc, argv, "c:r:w:")) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'w':
			only = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s -c CONFIG [-r REPS] [-w WORKLOAD,...]\n", argv[0]);
			return 2;
		}
	}
	if (!config || reps < 1) {
		fprintf(stderr, "usage: %s -c CONFIG [-r REPS] [-w WORKLOAD,...]\n", argv[0]);
		return 2;
	}
	if (only)
		check_only(only);
	if (cg_find_unified_root(root, sizeof(root), NULL))
		die("cgroup2");
	memset(page, 0x11, sizeof(page));
	memset(chunk, 0x22, sizeof(chunk));
	if (!strcmp(config, "plain"))
		make_cgroups(root, 1, NULL);
	else if (!strcmp(config, "limit1"))
		make_cgroups(root, 1, "1G");
	else if (!strcmp(config, "nest8"))
		make_cgroups(root, 8, NULL);
	else if (!strcmp(config, "limit8"))
		make_cgroups(root, 8, "1G");
	else if (!strcmp(config, "usrquota")) {
		make_cgroups(root, 1, NULL);
		snprintf(mount_opts, sizeof(mount_opts), "usrquota,usrquota_block_hardlimit=1G");
	} else if (!strcmp(config, "size")) {
		make_cgroups(root, 1, NULL);
		snprintf(mount_opts, sizeof(mount_opts), "size=1G");
	} else {
		fprintf(stderr, "%s: unknown config '%s'\n", argv[0], config);
		return 2;
	}
	mount_bench();
	printf("bench: %s: workloads in %s, mount options '%s', %d repetitions\n",
	       config, cg, mount_opts, reps);

	for (k = 0; k < ARRAY_SIZE(workloads); k++) {
		const struct workload *w = &workloads[k];
		double *ns = calloc(reps, sizeof(double));
		long ops = 0;

		if (only && !listed(only, w->name))
			continue;
		one_run(w, &ops);	/* warm-up, not counted */
		for (r = 0; r < reps; r++) {
			ns[r] = one_run(w, &ops);
			printf("bench: %s %s rep %d %.3f %ld\n", config, w->name, r, ns[r], ops);
		}
		{
			long *sorted = calloc(reps, sizeof(long));

			for (r = 0; r < reps; r++)
				sorted[r] = (long)(ns[r] * 1000);	/* ps per op */
			qsort(sorted, reps, sizeof(long), cmp_long);
			printf("bench: %s %s runs %d min %.3f median %.3f max %.3f\n",
			       config, w->name, reps, sorted[0] / 1000.0,
			       sorted[reps / 2] / 1000.0, sorted[reps - 1] / 1000.0);
			free(sorted);
		}
		free(ns);
		if (w->cleanup)
			w->cleanup();
	}
	umount(MNT);
	umount(MNT "-huge");
	/* the workload's cgroup and its siblings (make_dirs()) */
	{
		char work[PATH_MAX], sib[2][PATH_MAX];

		make_dirs(work, sib);
		if (rmdir(work) || rmdir(sib[0]) || rmdir(sib[1]))
			die("rmdir of the workload's cgroups");
	}
	return 0;
}
