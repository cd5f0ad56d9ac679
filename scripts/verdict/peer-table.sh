#!/usr/bin/env bash
# The peer suites (the kernel's cgroup, memfd and mm selftests, the cgroup
# selftests on a tmpfs, stress-ng's stressors; without our own
# test_tmpfs), subtest by subtest: the baseline kernel's result beside
# the patched kernel's, then a count of each pair. A later boot's PASS
# (check.sh's reruns) counts.
#   usage: peer-table.sh BASELINE_RECORDS RESULTS.log [RERUN_DIR...]
set -uo pipefail
baseline=$1 results=$2
shift 2
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
# the peer suites and our programs among them: qemu-boot/suites.list
peers=$("$top/scripts/suites.sh" peers | paste -sd'|' -)
ours=$("$top/scripts/suites.sh" ours | paste -sd'|' -)
{
	awk -F'\t' '{ print "B\t" $1 "\t" $2 }' "$baseline"
	awk -f "$here/ktap-records.awk" "$results" | awk -F'\t' '{ print "P\t" $1 "\t" $2 }'
	for dir in "$@"; do
		awk -f "$here/ktap-records.awk" "$dir/results.log" |
			awk -F'\t' '$1 == "PASS" { print "R\t" $1 "\t" $2 }'
	done
} | awk -F'\t' -v peers="^($peers)/" -v ours="^($ours)(:|$)" '
$3 !~ peers { next }
ours != "^()(:|$)" && $3 ~ ours { next }
$1 == "B" { b[$3] = $2; names[$3] = 1 }
$1 == "P" { p[$3] = $2; names[$3] = 1 }
$1 == "R" { r[$3] = 1 }
END {
	printf "%-9s %-9s %s\n", "baseline", "patched", "peer selftest"
	n = 0
	for (k in names) sorted[++n] = k
	# insertion sort: awk has no portable sort
	for (i = 2; i <= n; i++) {
		v = sorted[i]
		for (j = i - 1; j > 0 && sorted[j] > v; j--) sorted[j + 1] = sorted[j]
		sorted[j + 1] = v
	}
	for (i = 1; i <= n; i++) {
		k = sorted[i]
		bb = (k in b) ? b[k] : "-"
		pp = (k in p) ? p[k] : "-"
		if (pp == "FAIL" && (k in r)) pp = "PASS*"
		printf "%-9s %-9s %s\n", bb, pp, k
		pair[bb " -> " pp]++
	}
	for (k in pair) printf "peers: %d %s\n", pair[k], k
	print "(PASS* = passed in a rerun boot; - = not run)"
}'
