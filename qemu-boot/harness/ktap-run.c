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
 * SUITE:DIR:RETRIES runs a program that failed again, up to RETRIES more
 * times, each run's output nested again after a "# ktap-run: ... run N of M"
 * line; the program's line then tells the last run's result, and
 * "# flaky ..." when an earlier run failed. For suites we do not own whose
 * tests depend on timing (the kernel's selftests under TCG); the verdict
 * reports every such test as flaky. With -k FILE, a run whose failing
 * subtests are all listed in FILE ("SUITE/PROG: SUBTEST" a line: those
 * that fail on the baseline kernel too) is not retried: it would only fail
 * the same way again. With -n SUITE/PROG,... those programs are never
 * retried: ours, in a suite we do not own (selftests/test_tmpfs).
 *
 * The kernel log gets "ktap-run: start SUITE/PROG" before a program's
 * first run and "ktap-run: end SUITE/PROG" after its last, so that the
 * host can tell which program a console report came during.
 *
 * KTAP_ONLY, when set in the environment, is a comma-separated list of
 * SUITE/PROG names: only those run (the host reruns failures in a new
 * boot that way).
 *
 * usage: ktap-run [-t SECONDS] [-k KNOWN_FAILURES] [-n SUITE/PROG,...] SUITE:DIR[:RETRIES]...
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
	int retries;
	char suite[64];
	char path[512];
	char name[320];
};

static struct test tests[MAX_TESTS];
static int ntests;

static char *known;		/* contents of the -k file, one name a line */
static const char *no_retry;	/* -n: SUITE/PROG,... never retried */
static const struct test *running;
static int known_failures, other_failures;	/* of the current run */

static void load_known(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;

	if (!f) {
		fprintf(stderr, "ktap-run: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	/* "\n" + contents + "\n": each name is then found as "\nNAME\n" */
	if (getdelim(&text, &cap, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	if (asprintf(&known, "\n%s\n", text ? text : "") < 0)
		exit(2);
	free(text);
}

/* Count a nested "not ok N NAME" line as a known or another failure. */
static void note_result(const char *line)
{
	char name[512], needle[1024];
	const char *p;

	if (strncmp(line, "not ok ", 7))
		return;
	p = line + 7;
	while (*p >= '0' && *p <= '9')
		p++;
	while (*p == ' ')
		p++;
	snprintf(name, sizeof(name), "%s", p);
	if (strstr(name, " #"))
		*strstr(name, " #") = '\0';
	snprintf(needle, sizeof(needle), "\n%s: %s\n", running->name, name);
	if (known && strstr(known, needle))
		known_failures++;
	else
		other_failures++;
}

static int by_name(const void *a, const void *b)
{
	const struct test *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Is NAME an item of LIST, "NAME,NAME,..."? */
static int listed(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)); p += len)
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
	return 0;
}

/* Is NAME in the KTAP_ONLY list (or is there no list)? */
static int selected(const char *name)
{
	const char *only = getenv("KTAP_ONLY");

	return !only || !*only || listed(only, name);
}

/* "ktap-run: WHAT NAME" to the kernel log, where the console shows it */
static void kmsg(const char *what, const char *name)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	char msg[400];
	int len;

	if (fd < 0) {
		printf("# ktap-run: /dev/kmsg: %s\n", strerror(errno));
		return;
	}
	len = snprintf(msg, sizeof(msg), "ktap-run: %s %s\n", what, name);
	if (write(fd, msg, len) != len)
		printf("# ktap-run: /dev/kmsg: %s\n", strerror(errno));
	close(fd);
}

static void collect(const char *spec)
{
	const char *colon = strchr(spec, ':');
	char suite[64], dir[256], *end;
	struct dirent *de;
	int first = ntests;
	int retries = 0;
	DIR *d;

	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(suite) ||
	    strlen(colon + 1) >= sizeof(dir)) {
		fprintf(stderr, "ktap-run: bad argument '%s' (want SUITE:DIR[:RETRIES])\n", spec);
		exit(2);
	}
	memcpy(suite, spec, colon - spec);
	suite[colon - spec] = '\0';
	strcpy(dir, colon + 1);
	end = strchr(dir, ':');
	if (end) {
		*end++ = '\0';
		retries = strtol(end, &end, 10);
		if (*end || retries < 0) {
			fprintf(stderr, "ktap-run: bad retry count in '%s'\n", spec);
			exit(2);
		}
	}
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
		t->retries = no_retry && listed(no_retry, t->name) ? 0 : retries;
		if (selected(t->name))
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
		note_result(buf + start);
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

	running = t;
	known_failures = other_failures = 0;
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
		len = emit_lines(buf, len, 0);
		/* a line longer than the buffer: print what there is of it */
		if (len == sizeof(buf))
			len = emit_lines(buf, len, 1);
	}
	emit_lines(buf, len, 1);
	close(master);
	return timed_out ? -1 : status;
}

static const char usage[] =
	"usage: ktap-run [-t SECONDS] [-k KNOWN_FAILURES] [-n SUITE/PROG,...] SUITE:DIR[:RETRIES]...\n";

int main(int argc, char **argv)
{
	int timeout = 900, failed = 0, opt, i;

	while ((opt = getopt(argc, argv, "t:k:n:")) != -1) {
		if (opt == 'k') {
			load_known(optarg);
		} else if (opt == 'n') {
			no_retry = optarg;
		} else if (opt == 't' && atoi(optarg) > 0) {
			timeout = atoi(optarg);
		} else {
			fprintf(stderr, "%s", usage);
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	for (i = optind; i < argc; i++)
		collect(argv[i]);

	printf("KTAP version 1\n1..%d\n", ntests);
	fflush(stdout);
	for (i = 0; i < ntests; i++) {
		const struct test *t = &tests[i];
		double start = now();
		int status, run, failed_runs = 0;
		char flaky[64] = "";

		kmsg("start", t->name);
		printf("# ktap-run: %s\n", t->name);
		fflush(stdout);
		for (run = 1; ; run++) {
			status = run_one(t, timeout);
			if (status != -1 && WIFEXITED(status) &&
			    (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == KSFT_SKIP))
				break;
			if (run > t->retries)
				break;
			if (status != -1 && WIFEXITED(status) && known_failures && !other_failures) {
				printf("# ktap-run: %s: only failures known from the baseline; not rerun\n",
				       t->name);
				break;
			}
			failed_runs++;
			printf("# ktap-run: %s failed; run %d of %d\n", t->name, run + 1,
			       t->retries + 1);
			fflush(stdout);
			/*
			 * A busy host starves the vCPUs for a while: the
			 * failures of timing-dependent tests come in runs.
			 * Give it 2, 4, 6, ... seconds to pass.
			 */
			sleep(2 * run);
		}
		if (failed_runs)
			snprintf(flaky, sizeof(flaky), " # flaky: %d of %d runs failed",
				 failed_runs, run);
		kmsg("end", t->name);
		printf("# ktap-run: %s took %.1fs\n", t->name, now() - start);
		if (status == -1) {
			printf("not ok %d %s # timed out after %ds\n", i + 1, t->name, timeout);
			failed++;
		} else if (WIFSIGNALED(status)) {
			printf("not ok %d %s # killed by signal %d\n", i + 1, t->name,
			       WTERMSIG(status));
			failed++;
		} else if (WEXITSTATUS(status) == 0) {
			printf("ok %d %s%s\n", i + 1, t->name, flaky);
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
