# Sourced by the shell tests of make check-integration (test_cgtools,
# test_crun, qemu-boot/systemd/test_tmpfsmax) and make check's nomemcg boot
# (qemu-boot/suites/nomemcg): KTAP results and checks.
n=0 failed=0
# plan N: the KTAP header for N results
plan() {
	echo "TAP version 13"
	echo "1..$1"
}
# result STATUS NAME: "ok" when STATUS is 0, else "not ok" (and the
# script's exit status becomes 1: "exit $failed")
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi
}
# expect WHAT GOT WANTED: prints both, returns whether they match
expect() {
	echo "# $1: '$2' (expected '$3')"
	[ "$2" = "$3" ]
}
# flat FILE: its lines joined by spaces
flat() { tr '\n' ' ' < "$1" 2>/dev/null | sed 's/ *$//'; }
# size FILE: its size in bytes, or "none"
size() { stat -c %s "$1" 2>/dev/null || echo none; }
