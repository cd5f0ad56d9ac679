#!/usr/bin/env bash
# The verdict of several runs: sums the "N passed, N failed, N skipped"
# line that ends each VERDICT file (check.sh's output) and prints it.
# Exits 1 when a run failed or has no such line.
#   usage: sum-verdicts.sh VERDICT...
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: sum-verdicts.sh VERDICT..." >&2; exit 2; }
p=0 f=0 s=0 status=0
for v in "$@"; do
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$v" 2>/dev/null | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL  $v: no verdict (the run did not finish)"
		f=$((f + 1)) status=1
		continue
	fi
	read -r vp _ vf _ vs _ <<< "$line"
	echo "$(basename "$(dirname "$v")"): $line"
	p=$((p + vp)) f=$((f + vf)) s=$((s + vs))
done
[ $f -eq 0 ] || status=1
echo "$p passed, $f failed, $s skipped"
exit $status
