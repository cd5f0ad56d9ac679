#!/usr/bin/env bash
# make hole: the empty-file hole of memory.tmpfs, measured on the baseline
# kernel and then on the patched one, side by side: a cgroup with
# memory.max 64M creates empty files in /tmp (qemu-boot/harness/hole-guest.sh,
# which also says what it checks). Each kernel's output is kept in LOGDIR.
#   usage: hole.sh --kernel BZIMAGE --baseline-kernel BZIMAGE --initrd CPIO
#                  --logdir DIR [--timeout SECONDS]
set -uo pipefail
bz= basebz= base= logdir= watchdog=1800
usage() { sed -n 's/^#   usage: //p; s/^#                  / /p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) bz=$2; shift 2 ;;
	--baseline-kernel) basebz=$2; shift 2 ;;
	--initrd) base=$2; shift 2 ;;
	--logdir) logdir=$2; shift 2 ;;
	--timeout) watchdog=$2; shift 2 ;;
	*) echo "hole: unknown argument '$1'" >&2; usage ;;
	esac
done
[ -n "$bz" ] && [ -n "$basebz" ] && [ -n "$base" ] && [ -n "$logdir" ] || usage
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
mkdir -p "$logdir"
status=0
for which in baseline patched; do
	kernel=$bz
	[ $which = patched ] || kernel=$basebz
	echo "hole: booting the $which kernel (about a minute under TCG)"
	"$top/scripts/vm/run-guest.sh" --script "$top/qemu-boot/harness/hole-guest.sh" \
		--kernel "$kernel" --initrd "$base" --logdir "$logdir/$which" --timeout "$watchdog" |
		tee "$logdir/$which.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "hole: the $which run failed"; status=1; }
done
exit $status
