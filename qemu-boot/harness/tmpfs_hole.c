// SPDX-License-Identifier: GPL-2.0
/*
 * make hole's guest program (qemu-boot/harness/hole-guest.sh): the empty-file hole that
 * memory.tmpfs.inodes.max closes.
 *
 *   tmpfs_hole create DIR    create empty files DIR/f0000000, ... until a
 *                            creation fails; print how many and the errno.
 *                            A progress line every 5000 files tells how far
 *                            it got if the OOM killer ends it instead.
 *   tmpfs_hole alloc MIB     touch MIB MiB of anonymous memory, then exit 0:
 *                            can a new task still run in the cgroup?
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int create(const char *dir)
{
	char path[4096];
	long n;

	for (n = 0;; n++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%07ld", dir, n);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0) {
			int err = errno;

			printf("created %ld files, then %s (%s)\n", n,
			       strerrorname_np(err) ? strerrorname_np(err) : "?",
			       strerror(err));
			return 0;
		}
		close(fd);
		if (n && n % 5000 == 0) {
			printf("progress: %ld files\n", n);
			fflush(stdout);
		}
	}
}

static int alloc(long mib)
{
	long len = mib << 20, i;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (i = 0; i < len; i += 4096)
		p[i] = 1;
	printf("touched %ld MiB of anonymous memory\n", mib);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "create"))
		return create(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "alloc"))
		return alloc(atol(argv[2]));
	fprintf(stderr, "usage: %s create DIR | alloc MIB\n", argv[0]);
	return 2;
}
