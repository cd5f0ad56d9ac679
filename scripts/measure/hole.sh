#!/usr/bin/env bash
# make hole: the empty-file hole of memory.tmpfs, measured on the baseline
# kernel and then on the patched one, side by side: a cgroup with
# memory.max 64M creates empty files in /tmp (qemu-boot/harness/hole-guest.sh,
# which also says what it checks). Each kernel's output is kept in LOGDIR.
#   usage: hole.sh --kernel BZIMAGE --baseline-kernel BZIMAGE --initrd CPIO
#                  --logdir DIR [--timeout SECONDS]
set -uo pipefail
bz= basebz= base= logdir= watchdog=1800
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --kernel=bz --baseline-kernel=basebz --initrd=base --logdir=logdir \
	--timeout=watchdog -- "$@"
no_args
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
