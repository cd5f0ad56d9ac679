#!/usr/bin/env bash
# Boot the patched kernel, run cgroup-tests/ and the kernel's cgroup
# selftests in the guest, and give the verdict (scripts/verdict.sh).
# Progress: one line per test program as the guest runs it.
#   usage: check.sh BZIMAGE INITRD LOGDIR WATCHDOG BASELINE_RECORDS [MODE [APPEND]]
# BOOT_DISK=IMAGE in the environment boots with that disk (boot.sh --disk;
# INITRD - then boots it as the root).
# MODE is the guest's harness.mode: check (default: every suite),
# check-debug (every suite of the debug kernel) or cgroup-tests (only
# those). APPEND goes on the kernel command line (harness.stress=N).
set -uo pipefail
kernel=$1 initrd=$2 logdir=$3 watchdog=$4 baseline=$5 mode=${6:-check} append=${7:-}
# the guest mode that reruns peer selftests
case "$mode" in check-debug) rerun_mode=peers ;; *) rerun_mode=selftests ;; esac
here=$(dirname "$(realpath "$0")")
top=$(dirname "$here")

case "$mode" in
check-debug) took="about 20 minutes under TCG on a debug kernel" ;;
*) took="a few minutes under TCG" ;;
esac
echo "check: booting $kernel ($mode); the tests take $took (watchdog ${watchdog}s)"
start=$(date +%s)
"$top/qemu-boot/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode "$mode" \
	--logdir "$logdir" --timeout "$watchdog" ${append:+--append "$append"} \
	${BOOT_DISK:+--disk "$BOOT_DISK"} |
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
	if grep -vqE '^FAIL +(selftests|memfd)/[^ ]+: .*on the baseline kernel\)$' <<< "$fails"; then
		break	# something else failed: no rerun explains it away
	fi
	progs=$(sed -E 's/^FAIL +((selftests|memfd)\/[^:]+):.*/\1/' <<< "$fails" | sort -u | paste -sd, -)
	echo "check: selftests failing here but not on the baseline kernel: $progs; boot $boot reruns them"
	"$top/qemu-boot/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode "$rerun_mode" \
		--logdir "$logdir/boot$boot" --timeout "$watchdog" --append "harness.only=$progs" >/dev/null
	reruns+=("$logdir/boot$boot")
done
echo
if [ "$mode" != cgroup-tests ] && [ -s "$baseline" ]; then
	"$here/peer-table.sh" "$baseline" "$logdir/results.log" "${reruns[@]}" > "$logdir/peers.txt"
	if [ "$mode" = check-debug ]; then
		cat "$logdir/peers.txt"
	else
		grep '^peers: ' "$logdir/peers.txt"
		echo "(subtest by subtest: $logdir/peers.txt)"
	fi
	echo
fi
# kept in LOGDIR/verdict.txt too (scripts/sum-verdicts.sh adds runs up)
"${verdict[@]}" "${reruns[@]}" | tee "$logdir/verdict.txt"
exit "${PIPESTATUS[0]}"
