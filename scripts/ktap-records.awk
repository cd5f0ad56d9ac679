# Turn the KTAP of cgroup-tests/ktap-run into one record per test:
#   RESULT<TAB>NAME<TAB>REASON     RESULT is PASS, FAIL or SKIP
# NAME is SUITE/PROG for a program without subtests, else
# "SUITE/PROG: SUBTEST" for each subtest. A program that failed without a
# failing subtest (a crash, a timeout, a bad exit) is a FAIL record of its own.
function result(line,   r) {
	r = (line ~ /^not ok /) ? "FAIL" : "PASS"
	if (line ~ /# *SKIP/) r = "SKIP"
	return r
}
function name_of(line,   s) {
	s = line
	sub(/^(not )?ok [0-9]+ */, "", s)
	sub(/^# *(SKIP|XFAIL|XPASS) */, "", s)	# kselftest: "ok 3 # SKIP name"
	sub(/ *# .*$/, "", s)
	return s
}
function reason_of(line,   s) {
	s = line
	sub(/^(not )?ok [0-9]+ */, "", s)
	if (s ~ /^#/ || s !~ / # /) return ""	# kselftest puts the directive first
	sub(/^.* # */, "", s)
	return s
}
{ sub(/\r$/, "") }
/^    (not )?ok [0-9]+ / {
	sub(/^    /, "")
	sub_r[++n] = result($0)
	sub_n[n] = name_of($0)
	sub_why[n] = reason_of($0)
	if (sub_r[n] == "FAIL") sub_failed = 1
	next
}
/^(not )?ok [0-9]+ / {
	prog = name_of($0)
	r = result($0)
	if (n == 0) {
		printf "%s\t%s\t%s\n", r, prog, reason_of($0)
	} else {
		for (i = 1; i <= n; i++)
			printf "%s\t%s: %s\t%s\n", sub_r[i], prog, sub_n[i], sub_why[i]
		if (r == "FAIL" && !sub_failed)
			printf "FAIL\t%s\t%s\n", prog, reason_of($0)
	}
	n = 0
	sub_failed = 0
}
