# Turn the KTAP of qemu-boot/harness/ktap-run into one record per test:
#   RESULT<TAB>NAME<TAB>REASON     RESULT is PASS, FAIL or SKIP
# NAME is SUITE/PROG for a program without subtests, else
# "SUITE/PROG: SUBTEST" for each subtest. A program that failed without a
# failing subtest, or failed otherwise than a kselftest does on a failing
# subtest (exit status 1: a crash, a timeout, another exit status), is a
# FAIL record of its own as well, and so is a program whose (last) run
# reported fewer subtests than its plan "1..N" promised. A program run
# more than once (ktap-run's retries) gives one record per subtest: PASS
# if some run passed it ("flaky: ..." when another run failed it), FAIL
# if every run failed it. When the runner's own plan promises more
# programs than it reported, the record "harness: runner plan" fails.
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
	# mm's mrelease_test names its subtest after the size it reaped,
	# which it doubles until the reap beats the child's exit: a slower
	# guest reaps 2MB where the baseline run reaped 1MB, the same test
	sub(/^Success reaping a child with [0-9]+MB of memory allocations$/,
	    "Success reaping a child with <N>MB of memory allocations", s)
	return s
}
function reason_of(line,   s) {
	s = line
	sub(/^(not )?ok [0-9]+ */, "", s)
	if (s ~ /^#/ || s !~ / # /) return ""	# kselftest puts the directive first
	sub(/^.* # */, "", s)
	sub(/^SKIP */, "", s)
	return s
}
function reset(   k) {
	for (k in npass) delete npass[k]
	for (k in nfail) delete nfail[k]
	for (k in why) delete why[k]
	n = 0
	runs = 1
	plan_skip = ""
	plan = reported = -1
}
BEGIN { reset(); top_plan = -1; programs = 0 }
{ sub(/\r$/, "") }
/^1\.\.[0-9]+$/ { if (top_plan < 0) top_plan = substr($0, 4) + 0; next }
/^# ktap-run: .* failed; run [0-9]+ of [0-9]+$/ { runs++; plan = reported = -1; next }
/^    1\.\.[0-9]+ *$/ { plan = substr($0, 8) + 0; next }
/^    1\.\.0 # SKIP/ {	# kselftest's ksft_exit_skip: the program's reason
	plan_skip = $0
	sub(/^    1\.\.0 # SKIP */, "", plan_skip)
	next
}
/^    (not )?ok [0-9]+ / {
	sub(/^    /, "")
	s = name_of($0)
	if (!(s in npass)) {
		order[++n] = s
		npass[s] = nfail[s] = 0
	}
	r = result($0)
	reported = (reported < 0) ? 1 : reported + 1
	if (r == "PASS") npass[s]++
	else if (r == "FAIL") nfail[s]++
	if (reason_of($0) != "") why[s] = reason_of($0)
	next
}
/^(not )?ok [0-9]+ / {
	programs++
	prog = name_of($0)
	r = result($0)
	# the last run's plan, against what that run reported
	short = ""
	if (plan > 0 && (reported < 0 ? 0 : reported) < plan)
		short = "plan 1.." plan ", " (reported < 0 ? 0 : reported) " reported"
	if (n == 0) {
		reason = reason_of($0)
		if (r == "SKIP" && plan_skip != "") reason = plan_skip
		if (short != "") {
			r = "FAIL"
			reason = (reason != "" ? reason "; " : "") short
		}
		printf "%s\t%s\t%s\n", r, prog, reason
	} else {
		any_failed = 0
		for (i = 1; i <= n; i++) {
			s = order[i]
			reason = why[s]
			if (npass[s] && nfail[s]) {
				res = "PASS"
				reason = "flaky: failed in " nfail[s] " of " runs " runs"
			} else if (nfail[s]) {
				res = "FAIL"
				any_failed = 1
				if (runs > 1) reason = "failed in all " runs " runs"
			} else {
				res = npass[s] ? "PASS" : "SKIP"
			}
			printf "%s\t%s: %s\t%s\n", res, prog, s, reason
		}
		reason = reason_of($0)
		if (r == "FAIL" && (!any_failed || reason != "exit status 1") || short != "") {
			if (r != "FAIL") reason = ""
			printf "FAIL\t%s\t%s\n", prog, reason (reason != "" && short != "" ? "; " : "") short
		}
	}
	reset()
}
END {
	if (top_plan > programs)
		printf "FAIL\tharness: runner plan\tplan 1..%d, %d programs reported\n", top_plan, programs
}
