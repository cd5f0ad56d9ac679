#!/usr/bin/env bash
# Boot a kernel once per MODE, run that mode's suites in the guest
# (qemu-boot/suites.list) and give the verdict (verdict.sh): one line per
# test, then "N passed, N failed, N skipped"; with several MODEs, each
# boot's verdict and their sum. Progress: a line per program as it runs.
#   usage: check.sh --kernel BZIMAGE --initrd CPIO|- --logdir DIR --guest DIR
#                   [--baseline RECORDS] [--timeout SECONDS] [--append ARGS]
#                   [--disk IMAGE] [--no-expect] [--no-boot-line] MODE...
# --logdir: the first MODE's logs; MODE's after it go to DIR-MODE.
# --guest: build/guest, where the programs the host put into the images
# are (the verdict fails for each expected one that did not report).
# --baseline: the baseline kernel's records (scripts/verdict/baseline.sh):
# the peers' failures there excuse the same ones here.
# --append: on the kernel command line of every boot (harness.stress=N,
# harness.peers=0), after the MODE's own `boot` line of suites.list.
# --disk IMAGE: boot with that disk (scripts/vm/boot.sh --disk; with
# --initrd - the kernel boots it as its root).
# --no-expect: no list of expected programs; --no-boot-line: not the
# MODE's `boot` line (check-harness's made-up guests: their programs are
# not the build's, and its mode's test must fail without that line).
set -uo pipefail
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
kernel= initrd= logdir= guest= baseline=/dev/null watchdog=1800 append= disk= modes=() expect=1 bootline=1
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --kernel=kernel --initrd=initrd --logdir=logdir --guest=guest \
	--baseline=baseline --timeout=watchdog --append=append --disk=disk \
	--no-expect=expect=0 --no-boot-line=bootline=0 -- "$@"
modes=("${ARGS[@]}")
[ -n "$kernel" ] && [ -n "$initrd" ] && [ -n "$logdir" ] && { [ -n "$guest" ] || [ $expect = 0 ]; } &&
	[ ${#modes[@]} -ge 1 ] || usage

if [ ${#modes[@]} -gt 1 ]; then
	status=0 verdicts=()
	for mode in "${modes[@]}"; do
		dir=$logdir
		[ "$mode" = "${modes[0]}" ] || dir=$logdir-$mode
		"$0" --kernel "$kernel" --initrd "$initrd" --logdir "$dir" ${guest:+--guest "$guest"} \
			--baseline "$baseline" --timeout "$watchdog" ${append:+--append "$append"} \
			${disk:+--disk "$disk"} $([ $expect = 1 ] || echo --no-expect) \
			$([ $bootline = 1 ] || echo --no-boot-line) "$mode" || status=1
		verdicts+=("$dir/verdict.txt")
		echo
	done
	"$here/sum-verdicts.sh" "${verdicts[@]}" || status=1
	exit $status
fi
mode=${modes[0]}
if [ $bootline = 1 ]; then
	append=$(echo $("$top/scripts/suites.sh" boot "$mode") $append)
fi
mkdir -p "$logdir"
rm -f "$logdir/verdict.txt"

# the programs this run must hear from, and the baseline kernel's records
# of those only, for the peer table (verdict.sh filters them the same way)
if [ $expect = 1 ]; then
	"$top/scripts/suites.sh" expected "$mode" "$guest" "$append" > "$logdir/expected.txt" || exit 2
	awk -F'\t' 'NR == FNR { want[$1] = 1; next } { p = $2; sub(/: .*/, "", p) } p in want' \
		"$logdir/expected.txt" "$baseline" > "$logdir/peer-baseline.tsv"
	expect=(-e "$logdir/expected.txt")
else
	cat "$baseline" > "$logdir/peer-baseline.tsv"
	expect=()
fi
case "$mode" in
check-debug) took="about 20 minutes under TCG on a debug kernel" ;;
*) took="a few minutes under TCG" ;;
esac
echo "check: booting $kernel ($mode); the tests take $took (watchdog ${watchdog}s)"
start=$(date +%s)
"$top/scripts/vm/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode "$mode" \
	--logdir "$logdir" --timeout "$watchdog" ${append:+--append "$append"} \
	${disk:+--disk "$disk"} |
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
	"$top/scripts/vm/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode "$mode" \
		--logdir "$logdir/boot$boot" --timeout "$watchdog" \
		--append "$rerun_append harness.rerun=$boot harness.only=${stress:+$stress,}$progs" \
		${disk:+--disk "$disk"} >/dev/null
	reruns+=("$logdir/boot$boot")
done
echo
if [ "$mode" != cgroup-tests ] && [ -s "$logdir/peer-baseline.tsv" ]; then
	"$here/peer-table.sh" "$logdir/peer-baseline.tsv" "$logdir/results.log" "${reruns[@]}" > "$logdir/peers.txt"
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
