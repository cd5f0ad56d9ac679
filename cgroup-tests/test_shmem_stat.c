// SPDX-License-Identifier: GPL-2.0
/*
 * tmpfs pages written by a task are charged to its cgroup, show up in that
 * cgroup's memory.stat "shmem", and leave it when the file is freed.
 *
 * This holds on the unpatched kernel too: it proves the harness reports a
 * real pass before the series lands, and it guards the accounting that
 * memory.tmpfs.* builds on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest.h"
#include "cgroup/cgroup_util.h"

/* Four MiB and a bit: the charge must be rounded up to whole pages. */
#define FILE_BYTES ((4L << 20) + 100)

static long page_size;

static long round_up_pages(long bytes)
{
	return (bytes + page_size - 1) / page_size * page_size;
}

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
	return cg_read_key_long(cgroup, "memory.stat", "shmem ");
}

/* Runs inside the cgroup: create and fill the file, leave it behind. */
static int write_file(const char *cgroup, void *arg)
{
	const char *path = arg;
	int fd, ret;

	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0) {
		ksft_print_msg("open %s: %s\n", path, strerror(errno));
		return -1;
	}
	ret = fill(fd);
	close(fd);
	return ret;
}

static int write_shm(const char *cgroup, void *arg)
{
	const char *name = arg;
	int fd, ret;

	fd = shm_open(name, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0) {
		ksft_print_msg("shm_open %s: %s\n", name, strerror(errno));
		return -1;
	}
	ret = fill(fd);
	close(fd);
	return ret;
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
 * A file in /tmp written from inside the cgroup: its pages are charged
 * there (shmem and memory.current), and leave on unlink.
 */
static int test_tmp_file(const char *root)
{
	const char *path = "/tmp/shmem_stat_file";
	int ret = KSFT_FAIL;
	long current;
	char *cg;

	cg = cg_name(root, "shmem_stat_tmp");
	if (!cg || cg_create(cg))
		goto cleanup;
	if (expect_shmem(cg, 0, "new cgroup"))
		goto cleanup;
	if (cg_run(cg, write_file, (void *)path))
		goto cleanup;
	if (expect_shmem(cg, round_up_pages(FILE_BYTES), "after write"))
		goto cleanup;
	current = cg_read_long(cg, "memory.current");
	if (current < round_up_pages(FILE_BYTES)) {
		ksft_print_msg("memory.current %ld < shmem %ld\n", current,
			       round_up_pages(FILE_BYTES));
		goto cleanup;
	}
	if (unlink(path))
		goto cleanup;
	if (expect_shmem(cg, 0, "after unlink"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	unlink(path);
	if (cg)
		cg_destroy(cg);
	free(cg);
	return ret;
}

/* POSIX shm in /dev/shm: the same, removed with shm_unlink. */
static int test_dev_shm(const char *root)
{
	const char *name = "/shmem_stat_shm";
	int ret = KSFT_FAIL;
	char *cg;

	cg = cg_name(root, "shmem_stat_shm");
	if (!cg || cg_create(cg))
		goto cleanup;
	if (cg_run(cg, write_shm, (void *)name))
		goto cleanup;
	if (expect_shmem(cg, round_up_pages(FILE_BYTES), "after write"))
		goto cleanup;
	if (shm_unlink(name))
		goto cleanup;
	if (expect_shmem(cg, 0, "after shm_unlink"))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	shm_unlink(name);
	if (cg)
		cg_destroy(cg);
	free(cg);
	return ret;
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
	if (expect_shmem(cgroup, round_up_pages(FILE_BYTES), "unlinked, still open"))
		return -1;
	close(fd);
	return expect_shmem(cgroup, 0, "after close");
}

static int test_unlinked_open(const char *root)
{
	const char *path = "/tmp/shmem_stat_open";
	int ret = KSFT_FAIL;
	char *cg;

	cg = cg_name(root, "shmem_stat_open");
	if (!cg || cg_create(cg))
		goto cleanup;
	if (cg_run(cg, write_unlink_close, (void *)path))
		goto cleanup;
	ret = KSFT_PASS;
cleanup:
	unlink(path);
	if (cg)
		cg_destroy(cg);
	free(cg);
	return ret;
}

/*
 * Every case removes its cgroup with the data freed: cgroup.stat
 * nr_dying_descendants of ROOT must be back to BEFORE (or below) within
 * 5 s, or something still pins the removed memcg.
 */
static int wait_dying(const char *root, long before, const char *name)
{
	long now = cg_read_key_long(root, "cgroup.stat", "nr_dying_descendants ");
	int i;

	for (i = 0; i < 100 && now > before; i++) {
		usleep(50000);
		now = cg_read_key_long(root, "cgroup.stat", "nr_dying_descendants ");
	}
	if (now >= 0 && now <= before)
		return 0;
	ksft_print_msg("%s: nr_dying_descendants %ld after 5 s, was %ld before\n",
		       name, now, before);
	return -1;
}

#define T(x) { x, #x }
static struct test {
	int (*fn)(const char *root);
	const char *name;
} tests[] = {
	T(test_tmp_file),
	T(test_dev_shm),
	T(test_unlinked_open),
};
#undef T

int main(void)
{
	char root[PATH_MAX];
	int i;

	page_size = sysconf(_SC_PAGESIZE);
	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(tests));
	if (cg_find_unified_root(root, sizeof(root), NULL))
		ksft_exit_skip("cgroup v2 isn't mounted\n");
	if (cg_read_strstr(root, "cgroup.subtree_control", "memory"))
		if (cg_write(root, "cgroup.subtree_control", "+memory"))
			ksft_exit_skip("Failed to enable the memory controller\n");

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		long dying = cg_read_key_long(root, "cgroup.stat", "nr_dying_descendants ");
		int ret = tests[i].fn(root);

		if (ret == KSFT_PASS && wait_dying(root, dying, tests[i].name))
			ret = KSFT_FAIL;
		switch (ret) {
		case KSFT_PASS:
			ksft_test_result_pass("%s\n", tests[i].name);
			break;
		case KSFT_SKIP:
			ksft_test_result_skip("%s\n", tests[i].name);
			break;
		default:
			ksft_test_result_fail("%s\n", tests[i].name);
			break;
		}
	}
	ksft_finished();
}
