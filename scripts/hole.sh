#!/usr/bin/env bash
# make hole: the empty-file hole of memory.tmpfs (issue 13), measured on
# the baseline kernel and then on the patched one, side by side: a cgroup
# with memory.max 64M creates empty files in /tmp (qemu-boot/hole.sh, which
# also says what it checks). Each kernel's output is kept in LOGDIR.
#   usage: hole.sh BZIMAGE BASE_BZIMAGE BASE_CPIO PROGDIR LOGDIR WATCHDOG
set -uo pipefail
bz=$1 basebz=$2 base=$3 progs=$4 logdir=$5 watchdog=$6
here=$(dirname "$(realpath "$0")")
top=$(dirname "$here")
mkdir -p "$logdir"
status=0
for which in baseline patched; do
	echo "hole: booting the $which kernel (about a minute under TCG)"
	"$here/run-guest.sh" "$top/qemu-boot/hole.sh" "$progs" "$which" "$base" \
		"$logdir/$which" "$watchdog" "$bz" "$basebz" | tee "$logdir/$which.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "hole: the $which run failed"; status=1; }
done
exit $status
