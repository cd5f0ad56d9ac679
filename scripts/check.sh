#!/usr/bin/env bash
# Boot the patched kernel, run cgroup-tests/ and the kernel's cgroup
# selftests in the guest, and give the verdict (scripts/verdict.sh).
# Progress: one line per test program as the guest runs it.
#   usage: check.sh BZIMAGE INITRD LOGDIR WATCHDOG BASELINE_RECORDS [MODE [APPEND]]
# BOOT_DISK=IMAGE in the environment boots with that disk (boot.sh --disk;
# INITRD - then boots it as the root).
# EXPECT="SUITE:PATH ..." in the environment names the test programs the
# host put into the initramfs (PATH: a directory's executable test_*, or
# one program): the verdict fails for each that did not report.
# MODE is the guest's harness.mode: check (default: every suite),
# check-debug (every suite of the debug kernel) or cgroup-tests (only
# those), ... (qemu-boot/init). APPEND goes on the kernel command line
# (harness.stress=N).
set -uo pipefail
kernel=$1 initrd=$2 logdir=$3 watchdog=$4 baseline=$5 mode=${6:-check} append=${7:-}
here=$(dirname "$(realpath "$0")")
top=$(dirname "$here")
mkdir -p "$logdir"
rm -f "$logdir/verdict.txt"

expect=()
if [ -n "${EXPECT:-}" ]; then
	for spec in $EXPECT; do
		suite=${spec%%:*} path=${spec#*:}
		if [ -d "$path" ]; then
			for f in "$path"/test_*; do
				# a program, or a link to one at its guest path
				{ [ -L "$f" ] || { [ -f "$f" ] && [ -x "$f" ]; }; } &&
					echo "$suite/$(basename "$f")"
			done
		else
			[ -x "$path" ] || echo "check: $path (suite $suite) is not on the host" >&2
			echo "$suite/$(basename "$path")"
		fi
	done > "$logdir/expected.txt"
	expect=(-e "$logdir/expected.txt")
fi

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
# failures are peer selftests (the verdict names the baseline kernel's
# result only for those), rerun those programs in up to 2 new boots
# before calling them regressions. A rerun boot runs in the same mode,
# with the same APPEND, and repeats the stress of the first boot before
# them, so that what the series leaves behind after the stress is there
# again; the guest sees harness.rerun=BOOT.
verdict=("$here/verdict.sh" "${expect[@]}" "$logdir/results.log" "$logdir/console.log" "$status" "$baseline")
reruns=()
stress=$(sed -nE 's/\r$//; s/^(not )?ok [0-9]+ (stress\/[^ ]+).*/\2/p' "$logdir/results.log" | paste -sd, -)
rerun_append=$(sed -E 's/(^| )harness\.only=[^ ]*//g' <<< "$append")
for boot in 2 3; do
	out=$("${verdict[@]}" "${reruns[@]}")
	fails=$(grep -E '^FAIL ' <<< "$out")
	[ -n "$fails" ] || break
	if grep -vqE '^FAIL +[^ ]+/[^ ]+: .*on the baseline kernel\)$' <<< "$fails"; then
		break	# something else failed: no rerun explains it away
	fi
	progs=$(sed -E 's/^FAIL +([^ ]+\/[^:]+):.*/\1/' <<< "$fails" | sort -u | paste -sd, -)
	echo "check: selftests failing here but not on the baseline kernel: $progs; boot $boot reruns them${stress:+ after $stress}"
	"$top/qemu-boot/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode "$mode" \
		--logdir "$logdir/boot$boot" --timeout "$watchdog" \
		--append "$rerun_append harness.rerun=$boot harness.only=${stress:+$stress,}$progs" >/dev/null
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
