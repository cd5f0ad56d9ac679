#!/usr/bin/env bash
# The verdict of a `make check` run: one line per test, then
# "N passed, N failed, N skipped". Exits 1 on any failure.
#
# Suites: the peer suites are the kernel's own selftests and stress-ng,
# which we do not own (selftests/ for cgroup, memfd/, mm/, cgroup-tmpfs/
# (the cgroup selftests with their cwd on a tmpfs), stress-ng/). A failed peer subtest counts as
# failed unless it fails on the baseline (unpatched) kernel too, in all
# its runs there or in some (flaky there: test_kmem_basic passes about 1
# run in 6 on either kernel under TCG with 2 CPUs): then it is reported
# as KNOWN and counted as skipped, since it says nothing about the
# series. Every other suite is ours (cgroup-tests/, stress/, both/, ...),
# and so is test_tmpfs, the series' own selftest (in selftests/ and
# cgroup-tmpfs/): their
# failures are never excused, and a test of ours that runs on the
# baseline kernel too (both/, test_tmpfs) and fails there fails here.
#
# Failing besides a failed test:
# - a test that passes on the baseline kernel and did not run here, or
#   was skipped here;
# - with -e EXPECTED (a file, SUITE/PROG a line: the programs the host put
#   into the initramfs), a program that did not report;
# - a program whose KTAP plan "1..N" promised more than it reported, a
#   program that crashed, timed out or exited otherwise than a failing
#   kselftest does, even after failing subtests (scripts/ktap-records.awk);
# - the runner's plan promising more programs than reported; a runner
#   status other than 0, or 1 with a failed program; the watchdog; no end
#   marker;
# - "# harness: setup failed: ..." from the guest's /init (zram, mounts,
#   the memory controller) or boot.sh (fewer CPUs than given), here or
#   in the baseline kernel's run (the results.log beside BASELINE_RECORDS);
# - a console report (scripts/console-reports.awk): a warning, BUG, Oops,
#   KASAN, lockdep, list corruption, kmemleak, page_counter underflow or
#   panic, anywhere; "VM_FAULT_OOM leaked" outside the stress's injected
#   faults; an OOM kill, an RCU stall or a hung task, unless it came
#   during a peer selftest whose baseline run (the console.log beside
#   BASELINE_RECORDS) showed the same kind of report during that program.
#
# RERUN_DIRs hold the results.log and console.log of later boots that
# reran failing kernel selftests (check.sh): a peer selftest that passed in
# one of them is reported as PASS, "flaky across boots"; their consoles
# and setup are checked as the first boot's, and a failure there of a
# program of ours (the stress, which a rerun repeats) fails.
#
#   usage: verdict.sh [-e EXPECTED] RESULTS.log CONSOLE.log BOOT_STATUS BASELINE_RECORDS [RERUN_DIR...]
set -uo pipefail
expected=
if [ "${1:-}" = -e ]; then
	expected=$2
	shift 2
fi
results=$1 console=$2 boot_status=$3 baseline=$4
shift 4
reruns=("$@")
here=$(dirname "$(realpath "$0")")

# Whose each suite is: qemu-boot/suites.list, the one list of suites.
top=$(dirname "$(dirname "$here")")
mapfile -t peer_suites < <("$top/scripts/suites.sh" peers)
# Ours, inside a peer suite: never excused, never retried (init's ktap-run -n).
mapfile -t own_programs < <("$top/scripts/suites.sh" ours)
# Our suites that run on the baseline kernel too, and must pass there.
mapfile -t both_suites < <("$top/scripts/suites.sh" both)

program() { echo "${1%%: *}"; }	# SUITE/PROG of "SUITE/PROG: SUBTEST"
peer() {
	local p s
	p=$(program "$1")
	for s in "${own_programs[@]}"; do [ "$p" = "$s" ] && return 1; done
	for s in "${peer_suites[@]}"; do [[ $p == "$s"/* ]] && return 0; done
	return 1
}
both() {
	local s
	for s in "${both_suites[@]}"; do [[ $1 == "$s"/* ]] && return 0; done
	return 1
}
line() { printf '%-5s %s%s\n' "$1" "$2" "${3:+  ($3)}"; }
pass=0 fail=0 skip=0 known=0
failed() { line FAIL "$@"; fail=$((fail + 1)); }

records=$(awk -f "$here/ktap-records.awk" "$results")
declare -A rerun_pass
rerun_fails=()	# NAME<TAB>REASON
for dir in "${reruns[@]}"; do
	while IFS=$'\t' read -r r name why; do
		if [ "$r" = PASS ]; then
			rerun_pass[$name]=$(basename "$dir")
		elif [ "$r" = FAIL ] && ! peer "$name"; then
			# the stress it repeats, or the harness itself
			rerun_fails+=("$(basename "$dir"): $name"$'\t'"$why")
		fi
	done < <(awk -f "$here/ktap-records.awk" "$dir/results.log")
	grep -qx '# harness: end' "$dir/results.log" ||
		rerun_fails+=("$(basename "$dir"): harness: end marker"$'\t'"the guest stopped without it; see $dir/console.log")
done

# the baseline kernel's records of the programs expected here only: a
# program it ran that this run does not (another mode's) excuses nothing
declare -A base base_prog base_why want
if [ -n "$expected" ]; then
	while read -r p; do want[$p]=1; done < "$expected"
fi
if [ -f "$baseline" ]; then
	while IFS=$'\t' read -r r name why; do
		[ -z "$expected" ] || [ -n "${want[$(program "$name")]:-}" ] || continue
		base[$name]=$r
		base_why[$name]=$why
		base_prog[$(program "$name")]=1
	done < "$baseline"
fi
declare -A seen
while IFS=$'\t' read -r r name why; do
	[ -n "$name" ] || continue
	seen[$name]=1
	b=${base[$name]:-}
	case "$r" in
	PASS) line PASS "$name" "$why"; pass=$((pass + 1)) ;;
	SKIP)
		if [ "$b" != PASS ]; then
			line SKIP "$name" "$why"
			skip=$((skip + 1))
		elif peer "$name" && [ -n "${rerun_pass[$name]:-}" ]; then
			line PASS "$name" "flaky across boots: skipped in the first, passed in ${rerun_pass[$name]}"
			pass=$((pass + 1))
		elif peer "$name"; then
			failed "$name" "skipped here${why:+: $why}; PASS on the baseline kernel"
		else
			failed "$name" "skipped here${why:+: $why}, passes on the baseline kernel: ours"
		fi
		;;
	FAIL)
		if peer "$name" && [ "$b" = FAIL ]; then
			line KNOWN "$name" "fails on the baseline kernel too${why:+; $why}"
			known=$((known + 1))
		elif peer "$name" && [ -n "${rerun_pass[$name]:-}" ]; then
			line PASS "$name" "flaky across boots: failed in the first, passed in ${rerun_pass[$name]}"
			pass=$((pass + 1))
		elif peer "$name" && [ "$b" = PASS ] && [[ ${base_why[$name]:-} == flaky:* ]]; then
			# it failed on the baseline kernel too, in the same runs:
			# its failure here says nothing about the series
			line KNOWN "$name" "fails on the baseline kernel too (there: ${base_why[$name]#flaky: })${why:+; $why}"
			known=$((known + 1))
		elif peer "$name"; then
			failed "$name" "${why:+$why; }${b:-not run} on the baseline kernel"
		else
			failed "$name" "$why"
		fi
		;;
	esac
done <<< "$records"

for f in "${rerun_fails[@]}"; do
	failed "${f%%$'\t'*}" "${f#*$'\t'}"
done
for name in "${!base[@]}"; do
	[[ $name == harness:* ]] && continue
	if [ "${base[$name]}" = PASS ] && [ -z "${seen[$name]:-}" ]; then
		failed "$name" "passes on the baseline kernel, did not run here"
	elif [ "${base[$name]}" = FAIL ] && ! peer "$name"; then
		failed "$name" "fails on the baseline kernel${base_why[$name]:+ (${base_why[$name]})}: a test of ours must pass there"
	fi
done
# a test of ours for both kernels that did not run on the baseline one
declare -A both_reported
if [ -s "$baseline" ]; then
	for name in "${!seen[@]}"; do
		p=$(program "$name")
		if both "$p" && [ -z "${base_prog[$p]:-}" ] && [ -z "${both_reported[$p]:-}" ]; then
			both_reported[$p]=1
			failed "$p" "did not run on the baseline kernel"
		fi
	done
fi

# the programs that reported, against those the host put in
declare -A ran
while read -r p; do ran[$p]=1; done < <(sed -nE 's/\r$//; s/^(not )?ok [0-9]+ ([^ ]+).*/\2/p' "$results")
if [ -n "$expected" ]; then
	while read -r p; do
		[ -n "$p" ] && [ -z "${ran[$p]:-}" ] &&
			failed "$p" "did not report: missing from the initramfs, or never run"
	done < "$expected"
fi

case "$boot_status" in
0) ;;
124) failed "harness: watchdog" "the guest did not finish in time; see $console" ;;
125) failed "harness: end marker" "the guest stopped without it; see $console" ;;
1) grep -qE '^not ok [0-9]+ ' "$results" ||
	failed "harness: runner status 1" "no program failed; see $results" ;;
*) failed "harness: runner status $boot_status" "see $results" ;;
esac
if [ -z "$records" ]; then
	failed "harness: no test ran"
fi
while IFS= read -r l; do
	failed "harness: setup failed" "${l#*# harness: setup failed: }"
done < <(for r in "$results" "${reruns[@]/%//results.log}"; do
	sed 's/\r$//' "$r" | grep -a '^# harness: setup failed: '; done)
# the baseline kernel's run excuses nothing when its own setup failed
if [ -f "$baseline" ] && [ -f "$(dirname "$baseline")/results.log" ]; then
	while IFS= read -r l; do
		failed "baseline: harness: setup failed" "${l#*# harness: setup failed: }"
	done < <(sed 's/\r$//' "$(dirname "$baseline")/results.log" | grep -a '^# harness: setup failed: ')
fi

# console reports: KIND PROGRAM LINE (scripts/console-reports.awk)
declare -A base_kinds
base_console=$(dirname "$baseline")/console.log
if [ -f "$baseline" ] && [ -f "$base_console" ]; then
	while IFS=$'\t' read -r kind prog _; do
		base_kinds[$prog/$kind]=1
	done < <(awk -f "$here/console-reports.awk" "$base_console")
fi
# A report is a line of its own (a warning's lines differ); an OOM kill,
# a stall or a hung task prints several: one line per program and kind,
# with the first and a count.
declare -A excused first count
order=()
while IFS=$'\t' read -r kind prog l; do
	case "$kind" in
	oom|"rcu stall"|"hung task")
		if [ "$prog" != - ] && peer "$prog" && [ -n "${base_kinds[$prog/$kind]:-}" ]; then
			excused[$prog/$kind]=$(( ${excused[$prog/$kind]:-0} + 1 ))
			continue
		fi
		key=$prog/$kind
		[ -n "${count[$key]:-}" ] || { order+=("$key"); first[$key]=$l; }
		count[$key]=$(( ${count[$key]:-0} + 1 ))
		continue
		;;
	esac
	order+=("$prog/$kind/${#order[@]}")
	first[$prog/$kind/$((${#order[@]} - 1))]=$l
done < <(for c in "$console" "${reruns[@]/%//console.log}"; do
	[ -f "$c" ] && awk -f "$here/console-reports.awk" "$c"; done)
shown=0 more=0
for key in "${order[@]}"; do
	[ $shown -lt 20 ] || { more=$((more + 1)); continue; }
	shown=$((shown + 1))
	if [ -n "${count[$key]:-}" ]; then	# PROG/KIND
		prog=${key%/*} kind=${key##*/} l=${first[$key]}
		n=${count[$key]}
		[ "$n" -eq 1 ] || l="$n lines, the first: $l"
		l="$kind: $l"
	else	# PROG/KIND/N
		prog=${key%/*} prog=${prog%/*} kind=${key%/*} kind=${kind##*/} l=${first[$key]}
		[ "$kind" = report ] || l="$kind: $l"
	fi
	what=console
	[ "$prog" = - ] || what="console during $prog"
	failed "$what" "$l"
done
if [ $more -gt 0 ]; then
	failed "console" "$more more reports; see $console"
fi
for k in "${!excused[@]}"; do
	echo "(console: ${excused[$k]} ${k##*/} lines during ${k%/*}, as on the baseline kernel)"
done

if [ $known -gt 0 ]; then
	echo "($known of the skipped are KNOWN: kernel selftests failing on the baseline kernel too)"
fi
echo "$pass passed, $fail failed, $((skip + known)) skipped"
[ $fail -eq 0 ]
