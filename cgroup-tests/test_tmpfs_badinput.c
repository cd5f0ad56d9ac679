// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed input to the memory.tmpfs files. memory.tmpfs.max is parsed
 * exactly as memory.swap.max is (the series'
 * Documentation/admin-guide/cgroup-v2.rst): each value of the table is
 * written to both files of one cgroup, and both must give the errno and
 * then read back the value the table says; a rejected write keeps the old
 * value. memory.tmpfs.current and .events are read-only; any write to
 * memory.tmpfs.peak resets that fd's peak.
 */
#include "tmpfs_util.h"

#define OLD "50331648"		/* 48M, set before each write */

struct bad_input {
	const char *name;
	const char *buf;	/* written as is, LEN bytes */
	size_t len;		/* 0: strlen(buf) */
	int err;		/* the write's errno, 0 when accepted */
	const char *after;	/* what the file reads after it */
};

#define IN(s)		s, sizeof(s) - 1
/* memparse() wraps silently past 2^64 bytes; swap.max does the same */
static const struct bad_input table[] = {
	{ "empty write",	"", 0, 0, OLD },	/* never reaches the parser */
	{ "one space",		IN(" "), 0, "0" },
	{ "newline only",	IN("\n"), 0, "0" },
	{ "NUL byte only",	IN("\0"), 0, "0" },
	{ "negative",		IN("-1"), EINVAL, OLD },
	{ "minus zero",		IN("-0"), EINVAL, OLD },
	{ "plus sign",		IN("+1M"), EINVAL, OLD },
	{ "minus max",		IN("-max"), EINVAL, OLD },
	{ "letters",		IN("abc"), EINVAL, OLD },
	{ "maxx",		IN("maxx"), EINVAL, OLD },
	{ "max max",		IN("max max"), EINVAL, OLD },
	{ "MAX",		IN("MAX"), EINVAL, OLD },
	{ "unknown suffix",	IN("1X"), EINVAL, OLD },
	{ "two-letter suffix",	IN("1KB"), EINVAL, OLD },
	{ "space before suffix", IN("1 M"), EINVAL, OLD },
	{ "decimal point",	IN("1.5M"), EINVAL, OLD },
	{ "two lines",		IN("1M\n2M\n"), EINVAL, OLD },
	{ "two numbers",	IN("1M 2M"), EINVAL, OLD },
	{ "bare 0x",		IN("0x"), EINVAL, OLD },
	{ "hex digits, no 0x",	IN("ff"), EINVAL, OLD },
	{ "NUL then junk",	IN("1M\0junk"), 0, "1048576" },
	{ "surrounding blanks",	IN(" \t2M \n"), 0, "2097152" },
	{ "max, newline",	IN("max\n"), 0, "max" },
	{ "blank, max",		IN(" max"), 0, "max" },
	{ "hex",		IN("0x100000"), 0, "1048576" },
	{ "octal",		IN("010"), 0, "0" },
	{ "a page less 1",	IN("4095"), 0, "0" },
	{ "a page plus 1",	IN("4097"), 0, "4096" },
	{ "lower-case k",	IN("1k"), 0, "0" },
	{ "lower-case g",	IN("1g"), 0, "1073741824" },
	{ "1T",			IN("1T"), 0, "1099511627776" },
	{ "1P",			IN("1P"), 0, "1125899906842624" },
	{ "2^63 - 1",		IN("9223372036854775807"), 0, "max" },
	{ "2^64 - 1",		IN("18446744073709551615"), 0, "max" },
	{ "2^64, wraps to 0",	IN("18446744073709551616"), 0, "0" },
	{ "2^65, wraps to 0",	IN("36893488147419103232"), 0, "0" },
	{ "8E = 2^63",		IN("8E"), 0, "max" },
	{ "16E = 2^64, wraps",	IN("16E"), 0, "0" },
	{ "17179869184G = 2^64", IN("17179869184G"), 0, "0" },
	{ "4096 bytes",		NULL, 4096, 0, "1048576" },
	{ "4097 bytes",		NULL, 4097, E2BIG, OLD },
};

static int read_value(const char *cg, const char *file, char *buf, size_t n)
{
	char *nl;

	if (cg_read(cg, file, buf, n))
		return -1;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

/* memory.tmpfs.max and memory.swap.max, value by value */
static int test_max_malformed(const char *root)
{
	static char longbuf[4097];
	struct setup s = { 0 };
	const char *files[] = { "memory.tmpfs.max", "memory.swap.max" };
	int ret = KSFT_FAIL, bad = 0;
	size_t i, f;

	if (setup(&s, root, "tmpfs_badinput", "max"))
		goto out;
	/* leading zeros (octal) and 1M, 4096 bytes; 4097 bytes exceeds a page */
	memset(longbuf, '0', sizeof(longbuf));
	memcpy(longbuf + 4094, "1M", 2);
	for (i = 0; i < ARRAY_SIZE(table); i++) {
		const struct bad_input *t = &table[i];
		const char *buf = t->buf ? t->buf : longbuf;
		size_t len = t->len ? t->len : (t->buf ? strlen(t->buf) : 0);

		for (f = 0; f < ARRAY_SIZE(files); f++) {
			char got[64];
			int err;

			if (cg_write(s.cg, files[f], OLD)) {
				ksft_print_msg("%s: cannot set %s\n", files[f], OLD);
				goto out;
			}
			err = raw_write(s.cg, files[f], buf, len);
			if (read_value(s.cg, files[f], got, sizeof(got)))
				goto out;
			ksft_print_msg("%-22s %-16s -> %-6s %s\n", t->name, files[f],
				       err ? (err == EINVAL ? "EINVAL" : err == E2BIG ? "E2BIG" : strerror(err)) : "ok",
				       got);
			if (err != t->err || strcmp(got, t->after)) {
				ksft_print_msg("  expected %s and %s\n",
					       t->err ? strerror(t->err) : "success", t->after);
				bad++;
			}
		}
	}
	if (bad) {
		ksft_print_msg("%d of %zu writes did not behave as the table says\n",
			       bad, 2 * ARRAY_SIZE(table));
		goto out;
	}
	ret = KSFT_PASS;
out:
	return teardown(&s, NULL, ret);
}

/*
 * memory.tmpfs.current and memory.tmpfs.events are read-only (mode 0444)
 * and have no write handler: root can open them for writing, but every
 * write fails with EINVAL, as for memory.swap.current and
 * memory.swap.events, and they keep their values.
 */
static int test_readonly_files(const char *root)
{
	const char *files[][2] = {
		{ "memory.tmpfs.current", "memory.swap.current" },
		{ "memory.tmpfs.events", "memory.swap.events" },
	};
	const char *path = "/tmp/tmpfs_badinput_ro";
	static const struct { const char *buf; size_t len; } inputs[] = {
		{ IN("0") }, { IN("max") }, { IN("reset") }, { IN("-1") },
		{ IN("max 0\nfail 0\n") }, { IN("\0") },
	};
	struct setup s = { 0 };
	int ret = KSFT_FAIL;
	char before[256], after[256];
	size_t f, i, k;

	if (setup(&s, root, "tmpfs_badinput_ro", "64K") ||
	    write_as(s.cg, path, 0, 128 * KiB, 64 * KiB))
		goto out;
	for (f = 0; f < ARRAY_SIZE(files); f++) {
		if (cg_read(s.cg, files[f][0], before, sizeof(before)))
			goto out;
		for (i = 0; i < ARRAY_SIZE(inputs); i++) {
			for (k = 0; k < 2; k++) {
				int err = raw_write(s.cg, files[f][k], inputs[i].buf,
						    inputs[i].len);

				if (err != EINVAL) {
					ksft_print_msg("write %zu to %s: %s, expected EINVAL\n",
						       i, files[f][k],
						       err ? strerror(err) : "accepted");
					goto out;
				}
			}
		}
		if (cg_read(s.cg, files[f][0], after, sizeof(after)) ||
		    strcmp(before, after)) {
			ksft_print_msg("%s changed: \"%s\" -> \"%s\"\n", files[f][0],
				       before, after);
			goto out;
		}
	}
	if (expect_tmpfs(s.cg, 64 * KiB, "after the writes") ||
	    cg_read_key_long(s.cg, "memory.tmpfs.events", "max ") != 1 ||
	    cg_read_key_long(s.cg, "memory.tmpfs.events", "fail ") != 1) {
		ksft_print_msg("memory.tmpfs.events: %s", after);
		goto out;
	}
	ret = KSFT_PASS;
out:
	return teardown(&s, path, ret);
}

/*
 * memory.tmpfs.peak takes any write, whatever it says, as a reset of
 * that fd's value (as memory.peak and memory.swap.peak do); the global
 * peak read through another fd is untouched.
 */
static int test_peak_any_write(const char *root)
{
	const char *path = "/tmp/tmpfs_badinput_peak";
	static const struct { const char *buf; size_t len; } inputs[] = {
		{ IN("reset") }, { IN("0") }, { IN("-1") }, { IN("max") },
		{ IN("abc\n") }, { IN("\0") }, { IN("1M\n2M") }, { IN(" ") },
	};
	struct setup s = { 0 };
	int ret = KSFT_FAIL, wfd = -1, rfd = -1;
	size_t i;

	if (setup(&s, root, "tmpfs_badinput_peak", "max") ||
	    write_as(s.cg, path, 0, 1 * MiB, 1 * MiB))
		goto out;
	if (truncate(path, 256 * KiB) || expect_tmpfs(s.cg, 256 * KiB, "truncated"))
		goto out;
	wfd = open_peak(s.cg, O_RDWR);
	rfd = open_peak(s.cg, O_RDONLY);
	if (wfd < 0 || rfd < 0)
		goto out;
	for (i = 0; i < ARRAY_SIZE(inputs); i++) {
		ssize_t w = pwrite(wfd, inputs[i].buf, inputs[i].len, 0);
		long fd_peak = cg_read_long_fd(wfd), global = cg_read_long_fd(rfd);

		/* both may count pages charged ahead of use: expect_peak_value() */
		if (w != (ssize_t)inputs[i].len ||
		    expect_peak_value(fd_peak, 256 * KiB, -1, "the written fd", "peak write") ||
		    expect_peak_value(global, 1 * MiB, -1, "the other fd", "peak write")) {
			ksft_print_msg("peak write %zu: returned %zd (of %zu)\n",
				       i, w, inputs[i].len);
			goto out;
		}
	}
	ret = KSFT_PASS;
out:
	if (wfd >= 0)
		close(wfd);
	if (rfd >= 0)
		close(rfd);
	return teardown(&s, path, ret);
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_max_malformed),
	TMPFS_TEST(test_readonly_files),
	TMPFS_TEST(test_peak_any_write),
};

int main(void)
{
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
