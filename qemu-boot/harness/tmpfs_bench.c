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
 */
#include "tmpfs_util.h"

#include <grp.h>
#include <linux/falloc.h>
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

/* two tasks, each in its own sibling cgroup, appending 32 MiB each: run_parallel() */
static long w_parallel(long *ops)
{
	return -1;
}

static const struct workload {
	const char *name;
	long (*fn)(long *ops);
} workloads[] = {
	{ "append", w_append }, { "mmap", w_mmap }, { "fallocate", w_fallocate },
	{ "smallfiles", w_smallfiles }, { "emptyfiles", w_emptyfiles },
	{ "huge", w_huge }, { "swap", w_swap },
	{ "parallel", w_parallel },
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

/* One repetition of W, in a child running as uid 1000; ns per op. */
static double one_run(const struct workload *w, long *ops_out)
{
	char work[PATH_MAX], sib[2][PATH_MAX], c;
	long t0, t1, ops = 0, ns = 0;
	int status, i;
	pid_t pid;

	if (w->fn == w_parallel)
		return run_parallel(ops_out);
	make_dirs(work, sib);
	if (pipe(to_parent) || pipe(to_child))
		die("pipe");
	pid = fork();
	if (pid == 0) {
		run_as_user_in(work);
		t0 = now_ns();
		w->fn(&ops);
		t1 = now_ns();
		ns = t1 - t0;
		if (write(to_parent[1], "d", 1) != 1 ||
		    write(to_parent[1], &ns, sizeof(ns)) != sizeof(ns) ||
		    write(to_parent[1], &ops, sizeof(ops)) != sizeof(ops))
			_exit(1);
		_exit(0);
	}
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
	close(to_parent[1]);
	close(to_child[0]);
	close(to_child[1]);
	*ops_out = ops;
	return (double)ns / ops;
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

		if (only && !strstr(only, w->name))
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
	}
	umount(MNT);
	umount(MNT "-huge");
	return 0;
}
