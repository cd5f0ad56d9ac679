#!/usr/bin/env bash
# Prove that the harness can fail: each case below must make the check
# exit non-zero and say why. Run by `make check-harness`.
#   usage: check-harness.sh BZIMAGE INITRAMFS_DIR LOGDIR
set -uo pipefail
kernel=$1 initramfs=$2 logdir=$3
here=$(dirname "$(realpath "$0")")
top=$(dirname "$here")
mkdir -p "$logdir"
passed=0 failed=0

# case_boot NAME EXPECTED_REGEX TEST_SCRIPT [WATCHDOG]
# Boots the kernel with TEST_SCRIPT as the only cgroup test and expects the
# check to fail with a line matching EXPECTED_REGEX. A guest that did not
# finish must also have had its console log's path printed.
case_boot() {
	local name=$1 expect=$2 body=$3 watchdog=${4:-300} dir=$logdir/$1 out rc
	local watchdog_case=
	[ "$name" = failing_test ] || watchdog_case=1	# the guest does not finish
	mkdir -p "$dir/tests"
	printf '#!/bin/sh\n%s\n' "$body" > "$dir/tests/test_$name"
	chmod +x "$dir/tests/test_$name"
	"$top/qemu-boot/build-initramfs.sh" "$dir/overlay.cpio" "$dir/tests:/opt/cgroup-tests" >/dev/null
	cat "$initramfs/base.cpio" "$dir/overlay.cpio" > "$dir/initrd.cpio"
	out=$("$here/check.sh" "$kernel" "$dir/initrd.cpio" "$dir" "$watchdog" /dev/null cgroup-tests 2>&1)
	rc=$?
	judge "$name" "$expect" "$rc" "$out" "${watchdog_case:+^boot: console log: }"
}

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

echo "check-harness: 3 guest boots and 1 host case (about 2 minutes)"
case_boot failing_test '^FAIL +cgroup-tests/test_failing_test: deliberate_failure' \
	'echo "TAP version 13"; echo "1..1"; echo "not ok 1 deliberate_failure"; exit 1'
case_boot panic '^FAIL +harness: end marker' \
	'echo c > /proc/sysrq-trigger; sleep 60'
case_boot hang '^FAIL +harness: watchdog' \
	'sleep 100000' 40

# a kernel warning on the console fails a run whose tests all passed
dir=$logdir/console_warning
mkdir -p "$dir"
printf 'KTAP version 1\n1..1\nok 1 cgroup-tests/test_fine\n# harness: exit status 0\n# harness: end\n' > "$dir/results.log"
printf '[    1.0] WARNING: CPU: 0 PID: 1 at mm/page_counter.c:60 page_counter_cancel+0x0/0x10\n' > "$dir/console.log"
out=$("$here/verdict.sh" "$dir/results.log" "$dir/console.log" 0 /dev/null 2>&1)
judge console_warning '^FAIL +console' $? "$out"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
