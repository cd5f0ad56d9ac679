#!/usr/bin/env bash
# Boot the patched kernel, run cgroup-tests/ and the kernel's cgroup
# selftests in the guest, and give the verdict (scripts/verdict.sh).
# Progress: one line per test program as the guest runs it.
#   usage: check.sh BZIMAGE INITRD LOGDIR WATCHDOG BASELINE_RECORDS [MODE]
# MODE is the guest's harness.mode: check (default: every suite) or
# cgroup-tests (only those).
set -uo pipefail
kernel=$1 initrd=$2 logdir=$3 watchdog=$4 baseline=$5 mode=${6:-check}
here=$(dirname "$(realpath "$0")")
top=$(dirname "$here")

echo "check: booting $kernel; the tests take about a minute under TCG (watchdog ${watchdog}s)"
start=$(date +%s)
"$top/qemu-boot/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode "$mode" \
	--logdir "$logdir" --timeout "$watchdog" |
	grep --line-buffered -E '^(# ktap-run: .* took|not ok )' | sed -u 's/^# ktap-run: /check: /'
status=${PIPESTATUS[0]}
echo "check: guest done in $(( $(date +%s) - start ))s (status $status); console: $logdir/console.log, results: $logdir/results.log"

# Some kernel selftests fail for a whole boot now and then under TCG
# (test_cgfreezer_migrate, on the baseline kernel too): when the only
# failures are selftests that pass on the baseline kernel, rerun those
# programs in up to 2 new boots before calling them regressions.
verdict=("$here/verdict.sh" "$logdir/results.log" "$logdir/console.log" "$status" "$baseline")
reruns=()
for boot in 2 3; do
	out=$("${verdict[@]}" "${reruns[@]}")
	fails=$(grep -E '^FAIL ' <<< "$out")
	[ -n "$fails" ] || break
	if grep -vqE '^FAIL +selftests/[^ ]+: .*on the baseline kernel\)$' <<< "$fails"; then
		break	# something else failed: no rerun explains it away
	fi
	progs=$(sed -E 's/^FAIL +(selftests\/[^:]+):.*/\1/' <<< "$fails" | sort -u | paste -sd, -)
	echo "check: selftests failing here but not on the baseline kernel: $progs; boot $boot reruns them"
	"$top/qemu-boot/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode selftests \
		--logdir "$logdir/boot$boot" --timeout "$watchdog" --append "harness.only=$progs" >/dev/null
	reruns+=("$logdir/boot$boot")
done
echo
"${verdict[@]}" "${reruns[@]}"
