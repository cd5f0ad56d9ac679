#!/usr/bin/env bash
# make run-guest: boot a kernel with SCRIPT (and the files of FILES) added
# to the initramfs, run SCRIPT as root in the guest, print its output and
# exit with its exit status. SCRIPT is a static program or a /bin/sh
# script (the guest has busybox, no bash); it runs in /run-guest, where
# the files of FILES are.
#   usage: run-guest.sh --script PATH --kernel BZIMAGE --initrd BASE_CPIO
#                       --logdir DIR [--files DIR] [--timeout SECONDS]
set -uo pipefail
script= files= kernel= base= logdir= watchdog=1800
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --script=script --files=files --kernel=kernel --initrd=base \
	--logdir=logdir --timeout=watchdog -- "$@"
no_args
[ -n "$kernel" ] && [ -n "$base" ] && [ -n "$logdir" ] || usage
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
if [ -z "$script" ]; then
	echo "run-guest: say what to run: make run-guest SCRIPT=path [FILES=dir] [KERNEL=baseline]" >&2
	exit 2
fi
[ -f "$script" ] || { echo "run-guest: SCRIPT=$script is not a file" >&2; exit 2; }
if [ -n "$files" ] && [ ! -d "$files" ]; then
	echo "run-guest: FILES=$files is not a directory" >&2
	exit 2
fi
if [ "$(head -c 4 "$script" | tail -c 3)" = ELF ] && ldd "$script" >/dev/null 2>&1; then
	echo "run-guest: warning: $script is dynamically linked; the guest has only the libraries of cgroup-tools" >&2
fi

mkdir -p "$logdir"
specs=()
[ -n "$files" ] && specs+=("$files:/run-guest")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$script" "$stage/script"
specs+=("$stage/script:/run-guest/script")
"$top/scripts/image/build-initramfs.sh" "$logdir/overlay.cpio" "${specs[@]}" >/dev/null || exit 1
cat "$base" "$logdir/overlay.cpio" > "$logdir/initrd.cpio"

echo "run-guest: $script on $kernel" >&2
"$top/scripts/vm/boot.sh" --kernel "$kernel" --initrd "$logdir/initrd.cpio" --mode script \
	--logdir "$logdir" --timeout "$watchdog" | grep -v '^# harness: end$'
status=${PIPESTATUS[0]}
echo "run-guest: exit status $status" >&2
exit "$status"
