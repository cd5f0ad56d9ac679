#!/usr/bin/env bash
# The peer suites on a baseline (unpatched) kernel, whose failures then
# excuse the same failures of the patched kernel (verdict.sh). Writes
# LOGDIR/records.tsv (scripts/verdict/ktap-records.awk) and
# LOGDIR/known-failures (its FAIL names: the guest does not rerun a
# program whose only failures are these, ktap-run -k), and prints counts.
#   usage: baseline.sh --kernel BZIMAGE --initrd CPIO --logdir DIR --mode MODE
#                      [--timeout SECONDS]
# MODE: selftests (make check's peers) or peers (check-debug's).
set -uo pipefail
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
kernel= initrd= logdir= mode= watchdog=1800
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --kernel=kernel --initrd=initrd --logdir=logdir --mode=mode \
	--timeout=watchdog -- "$@"
no_args
[ -n "$kernel" ] && [ -n "$initrd" ] && [ -n "$logdir" ] && [ -n "$mode" ] || usage
name=$(basename "$logdir")
echo "$name: the peer suites ($mode) on $kernel (about 7 minutes; 25 on a debug kernel)"
"$top/scripts/vm/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode "$mode" \
	--logdir "$logdir" --timeout "$watchdog" >/dev/null
status=$?
if [ $status -ne 0 ] && [ $status -ne 1 ]; then
	echo "$name: the run did not complete (status $status): its missing results excuse nothing"
fi
awk -f "$here/ktap-records.awk" "$logdir/results.log" > "$logdir/records.tsv.tmp" &&
	mv "$logdir/records.tsv.tmp" "$logdir/records.tsv" || exit 1
awk -F'\t' '$1 == "FAIL" { print $2 }' "$logdir/records.tsv" > "$logdir/known-failures"
r=$logdir/records.tsv
echo "$name: $(grep -c '^PASS' "$r") passed, $(grep -c '^FAIL' "$r") failed, $(grep -c '^SKIP' "$r") skipped"
