// SPDX-License-Identifier: GPL-2.0
/*
 * test_libcgroup: memory.tmpfs.* through libcgroup's API (Debian's
 * libcgroup 2.0), the way a program that manages cgroups with it would:
 * create a cgroup with memory.tmpfs.max set, move a task into it, let it
 * write a tmpfs file until EDQUOT, read the files back through the API,
 * raise the limit with cgroup_modify_cgroup(), then the same for
 * memory.tmpfs.inodes.max with a task creating empty files, delete the
 * cgroup.
 *
 * Every value is exact: 1 MiB limit, 64 KiB writes, so the 17th write
 * fails whole with EDQUOT; a limit of 16 inodes, so the creation that
 * would make the cgroup hold a 17th fails with EDQUOT and leaves no file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libcgroup.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"

#define CG		"libcgroup_test"
#define DIR		"/tmp/libcgroup_test"
#define INODES		16
#define MiB		(1024L * 1024)
#define CHUNK		(64 * 1024)

static char chunk[CHUNK];

/* a fresh struct cgroup for CG, with its memory controller's files read */
static struct cgroup *load(void)
{
	struct cgroup *cg = cgroup_new_cgroup(CG);
	int ret;

	if (!cg)
		ksft_exit_fail_msg("cgroup_new_cgroup failed\n");
	ret = cgroup_get_cgroup(cg);
	if (ret) {
		ksft_print_msg("cgroup_get_cgroup: %s\n", cgroup_strerror(ret));
		cgroup_free(&cg);
	}
	return cg;
}

/* VALUE of memory.NAME through the API, or NULL; the caller frees it */
static char *get(const char *name)
{
	struct cgroup_controller *ctrl;
	struct cgroup *cg = load();
	char *value = NULL;
	int ret;

	if (!cg)
		return NULL;
	ctrl = cgroup_get_controller(cg, "memory");
	if (!ctrl) {
		ksft_print_msg("no memory controller in %s\n", CG);
	} else {
		ret = cgroup_get_value_string(ctrl, name, &value);
		if (ret) {
			ksft_print_msg("cgroup_get_value_string(%s): %s\n", name,
				       cgroup_strerror(ret));
			value = NULL;
		}
	}
	cgroup_free(&cg);
	return value;
}

static int expect(const char *name, const char *want)
{
	char *value = get(name);
	int ok = value && !strcmp(value, want);

	ksft_print_msg("%s = \"%s\" (expected \"%s\")\n", name,
		       value ? value : "(none)", want);
	free(value);
	return ok;
}

/* FILE in 64 KiB writes until one fails: the bytes written, or -1 */
static long write_chunks(const char *file, long max_bytes, int *err)
{
	long done = 0;
	ssize_t n;
	int fd;

	fd = open(file, O_CREAT | O_WRONLY | O_APPEND, 0600);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	while (done < max_bytes) {
		n = write(fd, chunk, CHUNK);
		if (n < 0) {
			*err = errno;
			break;
		}
		done += n;
	}
	close(fd);
	return done;
}

/* empty files DIR/f0, DIR/f1, ... until one fails: how many it made */
static long create_files(const char *dir, long max_files, int *err)
{
	char name[PATH_MAX];
	long n;
	int fd;

	for (n = 0; n < max_files; n++) {
		snprintf(name, sizeof(name), "%s/f%ld", dir, n);
		fd = open(name, O_CREAT | O_EXCL | O_WRONLY, 0600);
		if (fd < 0) {
			*err = errno;
			break;
		}
		close(fd);
	}
	return n;
}

/*
 * A child attaches itself with cgroup_attach_task() and does WORK on PATH
 * (write_chunks or create_files); returns what WORK returned, the errno
 * that stopped it in *err.
 */
static long in_cgroup(long (*work)(const char *, long, int *), const char *path,
		      long max, int *err)
{
	int p[2], status;
	long res[2] = { -1, 0 };
	pid_t pid;

	if (pipe(p))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		struct cgroup *cg = cgroup_new_cgroup(CG);
		long out[2] = { -1, 0 };
		int ret, e = 0;

		/* the controllers named are the hierarchies it moves in */
		ret = cg && cgroup_add_controller(cg, "memory") ?
		      cgroup_attach_task(cg) : ECGFAIL;
		if (ret) {
			out[1] = -ret;
		} else {
			out[0] = work(path, max, &e);
			out[1] = e;
		}
		if (write(p[1], out, sizeof(out)) != sizeof(out))
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], res, sizeof(res)) != sizeof(res))
		res[0] = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	*err = res[1];
	return res[0];
}

/* a task in CG writes FILE until EDQUOT: the bytes */
static long fill(const char *file, long max_bytes, int *err)
{
	return in_cgroup(write_chunks, file, max_bytes, err);
}

/*
 * Set memory.tmpfs.inodes.max to VALUE the way a program would change a
 * cgroup: read it, set the value, cgroup_modify_cgroup(); returns its
 * result, the errno behind ECGOTHER in *err.
 */
static int set_inodes_max(const char *value, int *err)
{
	struct cgroup_controller *ctrl;
	struct cgroup *cg = load();
	int ret;

	*err = 0;
	ctrl = cg ? cgroup_get_controller(cg, "memory") : NULL;
	ret = ctrl ? cgroup_set_value_string(ctrl, "memory.tmpfs.inodes.max", value) : ECGFAIL;
	if (!ret)
		ret = cgroup_modify_cgroup(cg);
	if (ret == ECGOTHER)
		*err = cgroup_get_last_errno();
	if (cg)
		cgroup_free(&cg);
	return ret;
}

int main(void)
{
	struct cgroup_controller *ctrl;
	char name[PATH_MAX], *held;
	long bytes, made, n;
	struct cgroup *cg;
	int ret, err, ok, i;

	memset(chunk, 0x5a, sizeof(chunk));
	ksft_print_header();
	ksft_set_plan(10);

	ret = cgroup_init();
	if (ret)
		ksft_exit_fail_msg("cgroup_init: %s\n", cgroup_strerror(ret));
	if (access("/sys/fs/cgroup/memory.tmpfs.current", F_OK) &&
	    access("/sys/fs/cgroup/cgroup.controllers", F_OK))
		ksft_exit_fail_msg("no cgroup2 on /sys/fs/cgroup\n");
	mkdir(DIR, 0755);

	/* 1: create with memory.tmpfs.max set */
	cg = cgroup_new_cgroup(CG);
	ctrl = cg ? cgroup_add_controller(cg, "memory") : NULL;
	ret = ctrl ? cgroup_add_value_string(ctrl, "memory.tmpfs.max", "1048576") : ECGFAIL;
	if (!ret)
		ret = cgroup_create_cgroup(cg, 0);
	if (ret)
		ksft_print_msg("creating %s: %s\n", CG, cgroup_strerror(ret));
	cgroup_free(&cg);
	ksft_test_result(!ret && expect("memory.tmpfs.max", "1048576") &&
			 expect("memory.tmpfs.current", "0"),
			 "create_with_tmpfs_max\n");

	/* 2: a task attached through the API stops at the limit */
	bytes = fill(DIR "/a", 4 * MiB, &err);
	ksft_print_msg("wrote %ld bytes, then %s\n", bytes, strerror(err));
	ksft_test_result(bytes == MiB && err == EDQUOT, "edquot_at_limit\n");

	/* 3: the files read back through the API */
	ksft_test_result(expect("memory.tmpfs.current", "1048576") &&
			 expect("memory.tmpfs.peak", "1048576") &&
			 expect("memory.tmpfs.events",
				"max 1\nfail 1\ninodes_max 0\ninodes_fail 0"),
			 "read_back\n");

	/* 4: raise the limit with cgroup_modify_cgroup() */
	cg = load();
	ctrl = cg ? cgroup_get_controller(cg, "memory") : NULL;
	ret = ctrl ? cgroup_set_value_string(ctrl, "memory.tmpfs.max", "2097152") : ECGFAIL;
	if (!ret)
		ret = cgroup_modify_cgroup(cg);
	if (ret)
		ksft_print_msg("raising the limit: %s\n", cgroup_strerror(ret));
	if (cg)
		cgroup_free(&cg);
	bytes = ret ? -1 : fill(DIR "/b", 4 * MiB, &err);
	ksft_print_msg("after raising to 2M: wrote %ld bytes more, then %s\n", bytes,
		       strerror(err));
	ksft_test_result(!ret && expect("memory.tmpfs.max", "2097152") &&
			 bytes == MiB && err == EDQUOT &&
			 expect("memory.tmpfs.current", "2097152") &&
			 expect("memory.tmpfs.events",
				"max 2\nfail 2\ninodes_max 0\ninodes_fail 0"),
			 "raise_with_modify\n");

	/* 5: the data goes, the charge goes */
	unlink(DIR "/a");
	unlink(DIR "/b");
	ksft_test_result(expect("memory.tmpfs.current", "0") &&
			 expect("memory.tmpfs.peak", "2097152"),
			 "uncharged_on_unlink\n");

	/* 6: memory.tmpfs.inodes.max set with cgroup_modify_cgroup() */
	ret = set_inodes_max("16", &err);
	if (ret)
		ksft_print_msg("setting memory.tmpfs.inodes.max: %s\n", cgroup_strerror(ret));
	ksft_test_result(!ret && expect("memory.tmpfs.inodes.max", "16") &&
			 expect("memory.tmpfs.inodes.current", "0"),
			 "set_inodes_max\n");

	/* 7: what the kernel does not take, it refuses, the limit unchanged */
	ok = 1;
	for (i = 0; i < 2; i++) {
		static const char *const bad[] = { "10K", "abc" };

		ret = set_inodes_max(bad[i], &err);
		ksft_print_msg("memory.tmpfs.inodes.max = \"%s\": %s (%s)\n", bad[i],
			       ret ? cgroup_strerror(ret) : "accepted", strerror(err));
		ok &= ret == ECGOTHER && err == EINVAL &&
		      expect("memory.tmpfs.inodes.max", "16");
	}
	ksft_test_result(ok, "inodes_max_rejects_invalid\n");

	/* 8: a task attached through the API creates empty files up to it */
	mkdir(DIR "/i", 0755);
	held = get("memory.tmpfs.inodes.current");
	n = held ? atol(held) : -1;
	free(held);
	made = in_cgroup(create_files, DIR "/i", 1000, &err);
	snprintf(name, sizeof(name), DIR "/i/f%ld", made);
	ksft_print_msg("the cgroup held %ld tmpfs inodes, created %ld files, then %s\n", n,
		       made, strerror(err));
	ksft_test_result(n >= 0 && made == INODES - n && err == EDQUOT &&
			 access(name, F_OK) && errno == ENOENT &&
			 expect("memory.tmpfs.inodes.current", "16") &&
			 expect("memory.tmpfs.current", "0") &&
			 expect("memory.tmpfs.events",
				"max 2\nfail 2\ninodes_max 1\ninodes_fail 1"),
			 "inodes_edquot_at_limit\n");

	/* 9: the last unlink uncharges */
	for (i = 0; i < made; i++) {
		snprintf(name, sizeof(name), DIR "/i/f%d", i);
		unlink(name);
	}
	rmdir(DIR "/i");
	snprintf(name, sizeof(name), "%ld", n);
	ksft_test_result(expect("memory.tmpfs.inodes.current", name),
			 "inodes_uncharged_on_unlink\n");

	/* 10: delete */
	cg = cgroup_new_cgroup(CG);
	ret = cg ? cgroup_add_controller(cg, "memory") ? 0 : ECGFAIL : ECGFAIL;
	if (!ret)
		ret = cgroup_delete_cgroup(cg, 0);
	if (ret)
		ksft_print_msg("deleting %s: %s\n", CG, cgroup_strerror(ret));
	cgroup_free(&cg);
	rmdir(DIR);
	ksft_test_result(!ret && access("/sys/fs/cgroup/" CG, F_OK) && errno == ENOENT,
			 "delete\n");

	ksft_finished();
}
