#!/usr/bin/env bash
# Prove that the harness can fail: each case below must make the check
# exit non-zero and say why, with the line it names. Host cases feed the
# verdict (scripts/verdict/verdict.sh) made-up results and consoles; guest cases
# boot the kernel, where the behaviour is the guest's. Two controls must
# pass: the reports the verdict allows. Run by `make check-harness`.
#   usage: check-harness.sh --kernel BZIMAGE --initrd BASE_CPIO --logdir DIR
set -uo pipefail
kernel= base= logdir=
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --kernel=kernel --initrd=base --logdir=logdir -- "$@"
no_args
[ -n "$kernel" ] && [ -n "$base" ] && [ -n "$logdir" ] || usage
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
mkdir -p "$logdir"
passed=0 failed=0

# judge NAME EXPECTED_REGEX EXIT_STATUS OUTPUT [ALSO_REGEX]
judge() {
	local name=$1 expect=$2 rc=$3 out=$4 also=${5:-}
	if [ "$rc" -ne 0 ] && grep -qE "$expect" <<< "$out" &&
		{ [ -z "$also" ] || grep -qE "$also" <<< "$out"; }; then
		echo "ok: $name: the check failed (exit $rc) with: $(grep -E "$expect" <<< "$out" | head -n 1)"
		passed=$((passed + 1))
	else
		echo "NOT OK: $name: expected a failing check with '$expect'${also:+ and '$also'}, got exit $rc:"
		sed 's/^/    /' <<< "$out"
		failed=$((failed + 1))
	fi
}

# judge_pass NAME EXPECTED_REGEX EXIT_STATUS OUTPUT: a control, which the
# check must pass, saying EXPECTED_REGEX
judge_pass() {
	local name=$1 expect=$2 rc=$3 out=$4
	if [ "$rc" -eq 0 ] && grep -qE "$expect" <<< "$out"; then
		echo "ok: $name: the check passed, as it must, with: $(grep -E "$expect" <<< "$out" | head -n 1)"
		passed=$((passed + 1))
	else
		echo "NOT OK: $name: expected a passing check with '$expect', got exit $rc:"
		sed 's/^/    /' <<< "$out"
		failed=$((failed + 1))
	fi
}

# --- guest cases ----------------------------------------------------------

# guest_check NAME MODE APPEND BASELINE [WATCHDOG]: boots the kernel with
# the files of LOGDIR/NAME/root added to the initramfs (an overlay on
# base.cpio), runs check.sh in MODE with APPEND on the command line; sets
# out and rc. BOOT_DISK=IMAGE: boot with that disk.
guest_check() {
	local name=$1 mode=$2 append=$3 baseline=$4 watchdog=${5:-300} dir=$logdir/$1
	"$top/scripts/image/build-initramfs.sh" "$dir/overlay.cpio" "$dir/root:/" >/dev/null
	cat "$base" "$dir/overlay.cpio" > "$dir/initrd.cpio"
	out=$("$here/check.sh" --kernel "$kernel" --initrd "$dir/initrd.cpio" --logdir "$dir" \
		--timeout "$watchdog" --baseline "$baseline" ${append:+--append "$append"} \
		${BOOT_DISK:+--disk "$BOOT_DISK"} --no-expect --no-boot-line "$mode" 2>&1)
	rc=$?
}

# script PATH BODY: a /bin/sh program at PATH
script() {
	mkdir -p "$(dirname "$1")"
	printf '#!/bin/sh\n%s\n' "$2" > "$1"
	chmod +x "$1"
}

# case_boot NAME EXPECTED_REGEX TEST_SCRIPT [WATCHDOG]
# Boots the kernel with TEST_SCRIPT as the only cgroup test and expects the
# check to fail with a line matching EXPECTED_REGEX. A guest that did not
# finish must also have had its console log's path printed.
case_boot() {
	local name=$1 expect=$2 body=$3 watchdog=${4:-300} dir=$logdir/$1
	local watchdog_case=
	[ "$name" = failing_test ] || watchdog_case=1	# the guest does not finish
	rm -rf "$dir/root"
	script "$dir/root/opt/cgroup-tests/test_$name" "$body"
	guest_check "$name" cgroup-tests "" /dev/null "$watchdog"
	judge "$name" "$expect" "$rc" "$out" "${watchdog_case:+^boot: console log: }"
}

# the body of a passing test
passing() { echo 'echo "TAP version 13"; echo "1..1"; echo "ok 1 fine"'; }

echo "check-harness: 10 guest boots, 16 host cases and 2 host controls (about 2.5 minutes)"
case_boot failing_test '^FAIL +cgroup-tests/test_failing_test: deliberate_failure' \
	'echo "TAP version 13"; echo "1..1"; echo "not ok 1 deliberate_failure"; exit 1'
case_boot panic '^FAIL +harness: end marker' \
	'echo c > /proc/sysrq-trigger; sleep 60'
case_boot hang '^FAIL +harness: watchdog' \
	'sleep 100000' 40

# The guest's setup fails three ways in one boot, its test passing: there
# is no zram device (zram.num_devices=0), the scratch disk is no ext2
# (zeros), and the kernel brings up 1 of the 2 CPUs (maxcpus=1).
dir=$logdir/setup
rm -rf "$dir/root"
script "$dir/root/opt/cgroup-tests/test_fine" "$(passing)"
truncate -s 0 "$dir/zeros.img" && truncate -s 16M "$dir/zeros.img"
BOOT_DISK=$dir/zeros.img guest_check setup cgroup-tests "zram.num_devices=0 maxcpus=1" /dev/null
judge setup_zram '^FAIL +harness: setup failed +\(zram swap: no /sys/block/zram0\)' "$rc" "$out"
judge setup_mount '^FAIL +harness: setup failed +\(cannot mount the scratch disk' "$rc" "$out"
judge setup_cpus '^FAIL +harness: setup failed +\(the guest brought up 1 of the 2 CPUs' "$rc" "$out"

# Our own kernel selftest is never retried, neither in the guest nor in a
# new boot, though it passes on the baseline kernel: this test_tmpfs fails
# its first run and passes any later one in the same boot, or a new boot.
dir=$logdir/test_tmpfs_not_retried
rm -rf "$dir/root"
mkdir -p "$dir"
script "$dir/root/opt/selftests/test_tmpfs" 'echo "TAP version 13"; echo "1..1"
if [ -e /tmp/test_tmpfs.ran ]; then echo "ok 1 flaky_case"; exit 0; fi
touch /tmp/test_tmpfs.ran; echo "not ok 1 flaky_case"; exit 1'
printf 'PASS\tselftests/test_tmpfs: flaky_case\t\n' > "$dir/baseline.tsv"
guest_check test_tmpfs_not_retried selftests harness.only=selftests/test_tmpfs "$dir/baseline.tsv"
judge test_tmpfs_not_retried '^FAIL +selftests/test_tmpfs: flaky_case( |$)' "$rc" "$out"

# A rerun boot repeats the stress before the selftests it reruns: this
# peer selftest fails in the first boot and passes in a rerun only after
# the stress ran in that boot; the stress fails in a rerun boot, and that
# must fail the check (while the peer is PASS, flaky across boots).
dir=$logdir/rerun_repeats_stress
rm -rf "$dir/root"
mkdir -p "$dir"
script "$dir/root/opt/cgroup-tests/test_unused" "$(passing)"
script "$dir/root/opt/stress/test_stress" 'echo "TAP version 13"; echo "1..1"; touch /tmp/stress.ran
case " $(cat /proc/cmdline) " in *" harness.rerun="*)
	echo "not ok 1 stress_in_rerun # failing in the rerun boot on purpose"; exit 1 ;; esac
echo "ok 1 stress_in_rerun"'
script "$dir/root/opt/selftests/test_rerun" 'echo "TAP version 13"; echo "1..1"
case " $(cat /proc/cmdline) " in *" harness.rerun="*)
	[ -e /tmp/stress.ran ] && { echo "ok 1 needs_stress"; exit 0; } ;; esac
echo "not ok 1 needs_stress # not a rerun boot, or no stress before"; exit 1'
printf 'PASS\tselftests/test_rerun: needs_stress\t\n' > "$dir/baseline.tsv"
guest_check rerun_repeats_stress check harness.only=stress/test_stress,selftests/test_rerun "$dir/baseline.tsv"
judge rerun_repeats_stress '^FAIL +boot2: stress/test_stress: stress_in_rerun' "$rc" "$out" \
	'^PASS +selftests/test_rerun: needs_stress +\(flaky across boots'

# make check's boot with cgroup_disable=memory: its test must fail on a
# kernel that has the memory controller
dir=$logdir/nomemcg_with_memcg
rm -rf "$dir/root"
mkdir -p "$dir/root"
guest_check nomemcg_with_memcg nomemcg "" /dev/null
judge nomemcg_with_memcg '^FAIL +nomemcg/test_nomemcg: memory_controller_disabled' "$rc" "$out"

# make check's boot with cgroup.memory=notmpfs: its test must fail on a
# kernel booted without it (only that program: not the selftests)
dir=$logdir/notmpfs_without_notmpfs
rm -rf "$dir/root"
mkdir -p "$dir/root"
guest_check notmpfs_without_notmpfs notmpfs "harness.only=notmpfs/test_notmpfs" /dev/null
judge notmpfs_without_notmpfs '^FAIL +notmpfs/test_notmpfs: memory_controller_on' "$rc" "$out"

# --- host cases -----------------------------------------------------------
# The verdict on made-up results.log and console.log of LOGDIR/NAME. The
# run: cgroup-tests/test_fine, both/test_both, stress/test_stress,
# selftests/test_peer (a peer selftest), each one passing subtest; the
# baseline kernel (baseline/records.tsv, baseline/console.log) passed
# both/ and test_peer.

# results [PLAN]: the results of that run; RESULT_<prog> overrides a
# program's lines (its KTAP, then its "ok N" line)
program() {	# program N NAME: the default lines of a passing program
	printf '# ktap-run: %s\n    TAP version 13\n    1..1\n    ok 1 one\nok %s %s\n' "$2" "$1" "$2"
}
results() {
	printf 'KTAP version 1\n1..%s\n' "${1:-4}"
	echo "${RESULT_fine:-$(program 1 cgroup-tests/test_fine)}"
	echo "${RESULT_both:-$(program 2 both/test_both)}"
	echo "${RESULT_stress:-$(program 3 stress/test_stress)}"
	echo "${RESULT_peer:-$(program 4 selftests/test_peer)}"
	printf '# harness: exit status %s\n# harness: end\n' "${STATUS:-0}"
}
# console PROGRAM LINE...: a console where LINEs came during PROGRAM (or,
# PROGRAM "end", after the guest's end)
console() {
	local prog=$1 p
	shift
	echo '[    0.50] smp: Brought up 1 node, 2 CPUs'
	for p in cgroup-tests/test_fine both/test_both stress/test_stress selftests/test_peer; do
		echo "[    1.00] ktap-run: start $p"
		[ "$p" = "$prog" ] && printf '%s\n' "$@"
		echo "[    1.50] ktap-run: end $p"
	done
	echo '[    2.00] harness: done, status 0'
	[ "$prog" = end ] && printf '%s\n' "$@"
	echo '[    2.10] reboot: Restarting system'
}
# host_case NAME [VERDICT_OPTIONS]: the verdict on LOGDIR/NAME, whose
# files the caller wrote after host_dir NAME; sets out and rc
host_dir() {
	dir=$logdir/$1
	rm -rf "$dir"
	mkdir -p "$dir/baseline"
	results > "$dir/results.log"
	console - > "$dir/console.log"
	printf 'PASS\tboth/test_both: one\t\nPASS\tselftests/test_peer: one\t\n' > "$dir/baseline/records.tsv"
	console - > "$dir/baseline/console.log"
}
host_case() {
	local name=$1 status
	shift
	status=$(sed -n 's/^# harness: exit status //p' "$logdir/$name/results.log")
	out=$("$here/verdict.sh" "$@" "$logdir/$name/results.log" "$logdir/$name/console.log" \
		"$status" "$logdir/$name/baseline/records.tsv" $(ls -d "$logdir/$name"/boot[0-9] 2>/dev/null) 2>&1)
	rc=$?
}

# a kernel warning on the console fails a run whose tests all passed
host_dir console_warning
echo '[    1.0] WARNING: CPU: 0 PID: 1 at mm/page_counter.c:60 page_counter_cancel+0x0/0x10' >> "$dir/console.log"
host_case console_warning
judge console_warning '^FAIL +console' "$rc" "$out"

host_dir skipped_here
RESULT_peer=$(program 4 selftests/test_peer | sed 's/ok 1 one/ok 1 one # SKIP not here/') results > "$dir/results.log"
host_case skipped_here
judge skipped_here '^FAIL +selftests/test_peer: one +\(skipped here: not here; PASS on the baseline kernel\)' "$rc" "$out"

host_dir killed_after_known
RESULT_peer=$(printf '# ktap-run: selftests/test_peer\n    TAP version 13\n    1..2\n    not ok 1 one\nnot ok 4 selftests/test_peer # killed by signal 9\n') \
	STATUS=1 results > "$dir/results.log"
printf 'PASS\tboth/test_both: one\t\nFAIL\tselftests/test_peer: one\t\n' > "$dir/baseline/records.tsv"
host_case killed_after_known
judge killed_after_known '^FAIL +selftests/test_peer +\(killed by signal 9' "$rc" "$out" \
	'^KNOWN +selftests/test_peer: one'

host_dir missing_program
printf 'cgroup-tests/test_fine\ncgroup-tests/test_absent\nstress/test_stress\n' > "$dir/expected.txt"
host_case missing_program -e "$dir/expected.txt"
judge missing_program '^FAIL +cgroup-tests/test_absent +\(did not report' "$rc" "$out"

host_dir runner_plan
results 5 > "$dir/results.log"
host_case runner_plan
judge runner_plan '^FAIL +harness: runner plan +\(plan 1\.\.5, 4 programs reported\)' "$rc" "$out"

host_dir program_plan
RESULT_fine=$(program 1 cgroup-tests/test_fine | sed 's/1\.\.1/1..3/') results > "$dir/results.log"
host_case program_plan
judge program_plan '^FAIL +cgroup-tests/test_fine +\(plan 1\.\.3, 1 reported\)' "$rc" "$out"

host_dir runner_status
STATUS=2 results > "$dir/results.log"
host_case runner_status
judge runner_status '^FAIL +harness: runner status 2' "$rc" "$out"

host_dir rcu_info
console selftests/test_peer '[    1.20] rcu: INFO: rcu_sched self-detected stall on CPU' > "$dir/console.log"
host_case rcu_info
judge rcu_info '^FAIL +console during selftests/test_peer +\(rcu stall: .*rcu: INFO' "$rc" "$out"

host_dir detected_stalls
console selftests/test_peer '[    1.20] rcu_preempt detected stalls on CPUs/tasks:' > "$dir/console.log"
host_case detected_stalls
judge detected_stalls '^FAIL +console during selftests/test_peer +\(rcu stall: .*detected stalls' "$rc" "$out"

# an OOM kill during a peer selftest that had none on the baseline kernel
host_dir out_of_memory
console selftests/test_peer '[    1.20] Out of memory: Killed process 99 (test_peer) total-vm:1000kB' > "$dir/console.log"
host_case out_of_memory
judge out_of_memory '^FAIL +console during selftests/test_peer +\(oom: .*Out of memory' "$rc" "$out"

# an OOM kill during a test of ours, even one the baseline kernel had too
host_dir oom_kill_ours
line='[    1.20] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),task=test_both,pid=99'
console both/test_both "$line" > "$dir/console.log"
console both/test_both "$line" > "$dir/baseline/console.log"
host_case oom_kill_ours
judge oom_kill_ours '^FAIL +console during both/test_both +\(oom: .*oom-kill' "$rc" "$out"

host_dir vm_fault_oom
console stress/test_stress '[    1.20] Huh VM_FAULT_OOM leaked out to the #PF handler. Retrying PF' > "$dir/console.log"
host_case vm_fault_oom
judge vm_fault_oom '^FAIL +console during stress/test_stress +\(VM_FAULT_OOM leaked' "$rc" "$out"

host_dir panic_after_end
console end '[    2.05] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000000' > "$dir/console.log"
host_case panic_after_end
judge panic_after_end '^FAIL +console +\(.*Kernel panic' "$rc" "$out"

# BUG: is never excused, not even during a peer selftest whose baseline
# run shows the same line, nor in the middle of a line
host_dir bug_anywhere
line='[    1.20] test_peer: BUG: Bad page state in process test_peer  pfn:01234'
console selftests/test_peer "$line" > "$dir/console.log"
console selftests/test_peer "$line" > "$dir/baseline/console.log"
host_case bug_anywhere
judge bug_anywhere '^FAIL +console during selftests/test_peer +\(.*BUG: Bad page state' "$rc" "$out"

# an Oops in a rerun boot's console
host_dir oops_in_rerun
mkdir -p "$dir/boot2"
printf 'KTAP version 1\n1..1\n%s\n# harness: exit status 0\n# harness: end\n' \
	"$(program 1 selftests/test_peer)" > "$dir/boot2/results.log"
console selftests/test_peer '[    1.20] Oops: general protection fault, probably for non-canonical address' > "$dir/boot2/console.log"
host_case oops_in_rerun
judge oops_in_rerun '^FAIL +console during selftests/test_peer +\(.*Oops' "$rc" "$out"

# a test of ours that fails on the baseline kernel is broken
host_dir both_fails_on_baseline
printf 'FAIL\tboth/test_both: one\t\nPASS\tselftests/test_peer: one\t\n' > "$dir/baseline/records.tsv"
host_case both_fails_on_baseline
judge both_fails_on_baseline '^FAIL +both/test_both: one +\(fails on the baseline kernel' "$rc" "$out"

# controls: what the verdict allows
host_dir control_oom_as_baseline
line='[    1.20] Memory cgroup out of memory: Killed process 99 (test_peer)'
console selftests/test_peer "$line" > "$dir/console.log"
console selftests/test_peer "$line" > "$dir/baseline/console.log"
host_case control_oom_as_baseline
judge_pass control_oom_as_baseline '^\(console: 1 oom lines during selftests/test_peer, as on the baseline kernel\)' \
	"$rc" "$out"

host_dir control_vm_fault_oom_injected
console stress/test_stress '[    1.10] harness: injected faults on' \
	'[    1.20] Huh VM_FAULT_OOM leaked out to the #PF handler. Retrying PF' \
	'[    1.30] harness: injected faults off' > "$dir/console.log"
host_case control_vm_fault_oom_injected
judge_pass control_vm_fault_oom_injected '^4 passed, 0 failed, 0 skipped$' "$rc" "$out"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
