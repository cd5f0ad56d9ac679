// SPDX-License-Identifier: GPL-2.0
/*
 * tmpfs pages written by a task are charged to its cgroup, show up in that
 * cgroup's memory.stat "shmem", and leave it when the file is freed.
 *
 * This holds on the unpatched kernel too: it proves the harness reports a
 * real pass before the series lands, and it guards the accounting that
 * memory.tmpfs.* builds on.
 */
#include "tmpfs_util.h"

/* Four MiB and a bit: the charge must be rounded up to whole pages. */
#define FILE_BYTES ((4L << 20) + 100)

/* Write FILE_BYTES to fd, in 64 KiB chunks; 0 on success. */
static int fill(int fd)
{
	static char chunk[64 << 10];
	long done = 0;

	memset(chunk, 0xa5, sizeof(chunk));
	while (done < FILE_BYTES) {
		long n = FILE_BYTES - done;
		ssize_t w;

		if (n > (long)sizeof(chunk))
			n = sizeof(chunk);
		w = write(fd, chunk, n);
		if (w < 0) {
			ksft_print_msg("write: %s\n", strerror(errno));
			return -1;
		}
		done += w;
	}
	return 0;
}

static long shmem_of(const char *cgroup)
{
	return memcg_stat(cgroup, "shmem ");
}

/* Fill and close FD, just made by HOW (open or shm_open) of NAME. */
static int fill_new(int fd, const char *how, const char *name)
{
	int ret;

	if (fd < 0) {
		ksft_print_msg("%s %s: %s\n", how, name, strerror(errno));
		return -1;
	}
	ret = fill(fd);
	close(fd);
	return ret;
}

/* Runs inside the cgroup: create and fill the file, leave it behind. */
static int write_shmem_file(const char *cgroup, void *arg)
{
	return fill_new(open(arg, O_CREAT | O_TRUNC | O_WRONLY, 0600), "open", arg);
}

static int write_shm(const char *cgroup, void *arg)
{
	return fill_new(shm_open(arg, O_CREAT | O_TRUNC | O_RDWR, 0600), "shm_open", arg);
}

static int expect_shmem(const char *cgroup, long want, const char *when)
{
	long got = shmem_of(cgroup);

	if (got != want) {
		ksft_print_msg("%s: memory.stat shmem is %ld, expected %ld\n",
			       when, got, want);
		return -1;
	}
	return 0;
}

/*
 * A file written from inside a new cgroup CG by WRITE: its pages are
 * charged there (shmem and memory.current), and leave when REMOVE
 * removes it (REMOVED says when).
 */
struct shmem_file {
	const char *cg, *path;
	int (*write)(const char *cgroup, void *path);
	int (*remove)(const char *path);
	const char *removed;
};

static int shmem_file_case(const char *root, const struct shmem_file *f)
{
	char *cg = make_child(root, f->cg);
	int ret = KSFT_FAIL;
	long current;

	if (!cg || expect_shmem(cg, 0, "new cgroup") ||
	    cg_run(cg, f->write, (void *)f->path) ||
	    expect_shmem(cg, pages_of(FILE_BYTES), "after write"))
		goto cleanup;
	current = cg_read_long(cg, "memory.current");
	if (current < pages_of(FILE_BYTES)) {
		ksft_print_msg("memory.current %ld < shmem %ld\n", current,
			       pages_of(FILE_BYTES));
		goto cleanup;
	}
	if (f->remove(f->path) || expect_shmem(cg, 0, f->removed))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	f->remove(f->path);
	remove_cgroup(cg);
	return ret;
}

/* A file in /tmp. */
static int test_tmp_file(const char *root)
{
	const struct shmem_file f = { "shmem_stat_tmp", "/tmp/shmem_stat_file",
				      write_shmem_file, unlink, "after unlink" };

	return shmem_file_case(root, &f);
}

/* POSIX shm in /dev/shm: the same, removed with shm_unlink. */
static int test_dev_shm(const char *root)
{
	const struct shmem_file f = { "shmem_stat_shm", "/shmem_stat_shm",
				      write_shm, shm_unlink, "after shm_unlink" };

	return shmem_file_case(root, &f);
}

/* Runs inside the cgroup: unlinked but open, the file keeps its pages. */
static int write_unlink_close(const char *cgroup, void *arg)
{
	const char *path = arg;
	int fd;

	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || fill(fd))
		return -1;
	if (unlink(path))
		return -1;
	if (expect_shmem(cgroup, pages_of(FILE_BYTES), "unlinked, still open"))
		return -1;
	close(fd);
	return expect_shmem(cgroup, 0, "after close");
}

static int test_unlinked_open(const char *root)
{
	const char *path = "/tmp/shmem_stat_open";
	int ret = KSFT_FAIL;
	char *cg;

	cg = make_child(root, "shmem_stat_open");
	if (!cg)
		goto cleanup;
	if (cg_run(cg, write_unlink_close, (void *)path))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	unlink(path);
	remove_cgroup(cg);
	return ret;
}

#define SMALL_PAGES 10

/*
 * Fewer pages than a stat batch: memory.stat read as it is shows them
 * only after the next flush (within 2 s); memcg_stat(), which the other
 * programs use, flushes first and must see exactly them, at once.
 */
static int test_small_file_exact(const char *root)
{
	const char *path = "/tmp/shmem_stat_small";
	long want = SMALL_PAGES * page_size, lazy;
	int ret = KSFT_FAIL;
	char *cg;

	cg = make_child(root, "shmem_stat_small");
	if (!cg || write_as(cg, path, 0, want, want))
		goto cleanup;
	lazy = cg_read_key_long(cg, "memory.stat", "shmem ");
	ksft_print_msg("%d pages written: memory.stat shmem %ld before a flush\n",
		       SMALL_PAGES, lazy);
	if (expect_shmem(cg, want, "small file, flushed") || unlink(path) ||
	    expect_shmem(cg, 0, "small file unlinked, flushed"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	unlink(path);
	remove_cgroup(cg);
	return ret;
}

/*
 * Every case removes its cgroup with the data freed: cgroup.stat
 * nr_dying_descendants of ROOT must be back to where it was
 * (wait_dying(), in the runner), or something still pins the removed
 * memcg. The runner does not require memory.tmpfs: these cases hold on
 * any kernel.
 */
static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_tmp_file),
	TMPFS_TEST(test_dev_shm),
	TMPFS_TEST(test_unlinked_open),
	TMPFS_TEST(test_small_file_exact),
};

int main(void)
{
	return run_memcg_tests(tests, ARRAY_SIZE(tests));
}
