#!/usr/bin/env bash
# The verdict of a `make check` run: one line per test, then
# "N passed, N failed, N skipped". Exits 1 on any failure.
#
# A failed kernel selftest (the peer suites: selftests/ for cgroup, memfd/,
# mm/, cgroup-tmpfs/, and stress-ng/)
# counts as failed unless it fails on the baseline (unpatched) kernel too: then it is reported as KNOWN and counted as
# skipped, since it says nothing about the series. A selftest that passes
# on the baseline and is missing from the patched run fails. The boot's
# own failures (watchdog, no end marker) and every console line with a
# kernel warning, bug, oops, KASAN, lockdep, DEBUG_LIST or kmemleak
# report, a hung task or lockup, or "page_counter underflow" fail the run.
#
# RERUN_DIRs hold the results.log and console.log of later boots that
# reran failing kernel selftests (check.sh): a selftest that passed in one
# of them is reported as PASS, "flaky across boots"; their consoles are
# scanned too.
#
#   usage: verdict.sh RESULTS.log CONSOLE.log BOOT_STATUS BASELINE_RECORDS [RERUN_DIR...]
set -uo pipefail
results=$1 console=$2 boot_status=$3 baseline=$4
shift 4
reruns=("$@")
here=$(dirname "$(realpath "$0")")

records=$(awk -f "$here/ktap-records.awk" "$results")
declare -A rerun_pass
for dir in "${reruns[@]}"; do
	while IFS=$'\t' read -r r name _; do
		[ "$r" = PASS ] && rerun_pass[$name]=$(basename "$dir")
	done < <(awk -f "$here/ktap-records.awk" "$dir/results.log")
done
pass=0 fail=0 skip=0 known=0
# the peer suites: the kernel's cgroup, memfd and mm selftests, the cgroup
# selftests with their cwd on a tmpfs, stress-ng's stressors
peer() { [[ $1 =~ ^(selftests|memfd|mm|cgroup-tmpfs|stress-ng)/ ]]; }
line() { printf '%-5s %s%s\n' "$1" "$2" "${3:+  ($3)}"; }

declare -A base
if [ -f "$baseline" ]; then
	while IFS=$'\t' read -r r name _; do base[$name]=$r; done < "$baseline"
fi
declare -A seen
while IFS=$'\t' read -r r name why; do
	[ -n "$name" ] || continue
	seen[$name]=1
	case "$r" in
	PASS) line PASS "$name"; pass=$((pass + 1)) ;;
	SKIP) line SKIP "$name" "$why"; skip=$((skip + 1)) ;;
	FAIL)
		if peer "$name" && [ "${base[$name]:-}" = FAIL ]; then
			line KNOWN "$name" "fails on the baseline kernel too${why:+; $why}"
			known=$((known + 1))
		elif peer "$name" && [ -n "${rerun_pass[$name]:-}" ]; then
			line PASS "$name" "flaky across boots: failed in the first, passed in ${rerun_pass[$name]}"
			pass=$((pass + 1))
		else
			if peer "$name"; then
				why="${why:+$why; }${base[$name]:-not run} on the baseline kernel"
			fi
			line FAIL "$name" "$why"
			fail=$((fail + 1))
		fi
		;;
	esac
done <<< "$records"

for name in "${!base[@]}"; do
	if [ "${base[$name]}" = PASS ] && [ -z "${seen[$name]:-}" ]; then
		line FAIL "$name" "passes on the baseline kernel, did not run here"
		fail=$((fail + 1))
	fi
done

case "$boot_status" in
124) line FAIL "harness: watchdog" "the guest did not finish in time; see $console"; fail=$((fail + 1)) ;;
125) line FAIL "harness: end marker" "the guest stopped without it; see $console"; fail=$((fail + 1)) ;;
esac
if [ -z "$records" ]; then
	line FAIL "harness: no test ran"
	fail=$((fail + 1))
fi

pattern='WARNING:|BUG:|kernel BUG|Oops|general protection fault|KASAN|UBSAN'
pattern+='|possible circular locking|possible recursive locking|inconsistent lock state'
pattern+='|DEBUG_LOCKS_WARN|list_add corruption|list_del corruption|kmemleak: [0-9]+ new suspected'
pattern+='|INFO: task .* blocked|soft lockup|hard LOCKUP|rcu_sched self-detected stall'
pattern+='|page_counter underflow'
while IFS= read -r l; do
	line FAIL "console" "$l"
	fail=$((fail + 1))
done < <(for c in "$console" "${reruns[@]/%//console.log}"; do
	grep -aE "$pattern" "$c"; done | head -n 20)

if [ $known -gt 0 ]; then
	echo "($known of the skipped are KNOWN: kernel selftests failing on the baseline kernel too)"
fi
echo "$pass passed, $fail failed, $((skip + known)) skipped"
[ $fail -eq 0 ]
