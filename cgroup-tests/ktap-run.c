// SPDX-License-Identifier: GPL-2.0
/*
 * ktap-run: the in-guest test runner. Runs every executable named test_*
 * in each SUITE:DIR given, in name order, and prints KTAP on stdout: the
 * program's own (kselftest) output indented by four spaces as a nested
 * test, then "ok N SUITE/PROG" or "not ok N SUITE/PROG # reason".
 *
 * Each program runs on a pseudo-terminal, so its stdio is line buffered
 * as on a console: output is live, and a test that forks does not print
 * its buffered lines twice. A program that runs longer than the timeout
 * is killed with its process group.
 *
 * usage: ktap-run [-t SECONDS] SUITE:DIR...
 * Exit status: 0 when every program passed or skipped, 1 otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define KSFT_SKIP 4
#define MAX_TESTS 256

struct test {
	char suite[64];
	char path[512];
	char name[320];
};

static struct test tests[MAX_TESTS];
static int ntests;

static int by_name(const void *a, const void *b)
{
	const struct test *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static void collect(const char *spec)
{
	const char *colon = strchr(spec, ':');
	struct dirent *de;
	int first = ntests;
	char suite[64];
	const char *dir;
	DIR *d;

	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(suite)) {
		fprintf(stderr, "ktap-run: bad argument '%s' (want SUITE:DIR)\n", spec);
		exit(2);
	}
	memcpy(suite, spec, colon - spec);
	suite[colon - spec] = '\0';
	dir = colon + 1;
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "ktap-run: %s: %s\n", dir, strerror(errno));
		exit(2);
	}
	while ((de = readdir(d))) {
		struct test *t;

		if (strncmp(de->d_name, "test_", 5))
			continue;
		if (ntests == MAX_TESTS) {
			fprintf(stderr, "ktap-run: more than %d tests\n", MAX_TESTS);
			exit(2);
		}
		t = &tests[ntests];
		snprintf(t->path, sizeof(t->path), "%s/%s", dir, de->d_name);
		if (access(t->path, X_OK))
			continue;
		snprintf(t->suite, sizeof(t->suite), "%s", suite);
		snprintf(t->name, sizeof(t->name), "%s/%s", suite, de->d_name);
		ntests++;
	}
	closedir(d);
	qsort(tests + first, ntests - first, sizeof(*tests), by_name);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Print the complete lines in buf, indented; keep a partial line. */
static size_t emit_lines(char *buf, size_t len, int flush)
{
	size_t start = 0, i;

	for (i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		buf[i] = '\0';
		if (i > start && buf[i - 1] == '\r')
			buf[i - 1] = '\0';
		printf("    %s\n", buf + start);
		start = i + 1;
	}
	if (flush && start < len) {
		printf("    %.*s\n", (int)(len - start), buf + start);
		start = len;
	}
	memmove(buf, buf + start, len - start);
	fflush(stdout);
	return len - start;
}

static int open_pty(int *slave)
{
	struct termios tio;
	int master;

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) || unlockpt(master))
		return -1;
	*slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	if (*slave < 0)
		return -1;
	if (tcgetattr(*slave, &tio) == 0) {
		tio.c_oflag &= ~OPOST;
		tio.c_lflag &= ~ECHO;
		tcsetattr(*slave, TCSANOW, &tio);
	}
	return master;
}

/* Run one program; return a wait status, or -1 when it timed out. */
static int run_one(const struct test *t, int timeout)
{
	char buf[8192];
	size_t len = 0;
	int master, slave, status = 0, exited = 0, timed_out = 0;
	double deadline = now() + timeout, drain_until = 0;
	pid_t pid;

	master = open_pty(&slave);
	if (master < 0) {
		printf("    # ktap-run: cannot open a pty: %s\n", strerror(errno));
		return 1 << 8;
	}
	pid = fork();
	if (pid < 0) {
		printf("    # ktap-run: fork: %s\n", strerror(errno));
		return 1 << 8;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		setsid();
		dup2(devnull, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		close(slave);
		execl(t->path, t->path, (char *)NULL);
		fprintf(stderr, "ktap-run: exec %s: %s\n", t->path, strerror(errno));
		_exit(127);
	}
	close(slave);

	for (;;) {
		struct pollfd pfd = { .fd = master, .events = POLLIN };
		double limit = exited ? drain_until : deadline;
		int ms = (int)((limit - now()) * 1000);
		ssize_t n;

		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			/* descendants may hold the pty: read what is there, briefly */
			drain_until = now() + 2;
			continue;
		}
		if (ms <= 0) {
			if (exited)
				break;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			timed_out = 1;
			break;
		}
		if (ms > 200)
			ms = 200;	/* wake up to reap the child */
		if (poll(&pfd, 1, ms) <= 0)
			continue;
		n = read(master, buf + len, sizeof(buf) - len);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (!exited) {	/* EIO: no writer left; reap the child */
				waitpid(pid, &status, 0);
				exited = 1;
			}
			break;
		}
		len += n;
		len = emit_lines(buf, len, len == sizeof(buf));
	}
	emit_lines(buf, len, 1);
	close(master);
	return timed_out ? -1 : status;
}

int main(int argc, char **argv)
{
	int timeout = 900, failed = 0, opt, i;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't' || atoi(optarg) <= 0) {
			fprintf(stderr, "usage: ktap-run [-t SECONDS] SUITE:DIR...\n");
			return 2;
		}
		timeout = atoi(optarg);
	}
	if (optind == argc) {
		fprintf(stderr, "usage: ktap-run [-t SECONDS] SUITE:DIR...\n");
		return 2;
	}
	for (i = optind; i < argc; i++)
		collect(argv[i]);

	printf("KTAP version 1\n1..%d\n", ntests);
	fflush(stdout);
	for (i = 0; i < ntests; i++) {
		const struct test *t = &tests[i];
		double start = now();
		int kmsg, status;

		kmsg = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
		if (kmsg >= 0) {
			dprintf(kmsg, "ktap-run: %s\n", t->name);
			close(kmsg);
		}
		printf("# ktap-run: %s\n", t->name);
		fflush(stdout);
		status = run_one(t, timeout);
		printf("# ktap-run: %s took %.1fs\n", t->name, now() - start);
		if (status == -1) {
			printf("not ok %d %s # timed out after %ds\n", i + 1, t->name, timeout);
			failed++;
		} else if (WIFSIGNALED(status)) {
			printf("not ok %d %s # killed by signal %d\n", i + 1, t->name,
			       WTERMSIG(status));
			failed++;
		} else if (WEXITSTATUS(status) == 0) {
			printf("ok %d %s\n", i + 1, t->name);
		} else if (WEXITSTATUS(status) == KSFT_SKIP) {
			printf("ok %d %s # SKIP\n", i + 1, t->name);
		} else {
			printf("not ok %d %s # exit status %d\n", i + 1, t->name,
			       WEXITSTATUS(status));
			failed++;
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}
