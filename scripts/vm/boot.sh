#!/usr/bin/env bash
# Boot a kernel under QEMU TCG with the harness initramfs and stream what the
# guest prints on its results port (ttyS1) to stdout. The kernel console
# (ttyS0) goes to LOGDIR/console.log, the results also to LOGDIR/results.log.
# A watchdog kills the VM after --timeout seconds.
#
#   usage: boot.sh --kernel BZIMAGE --initrd CPIO --mode MODE --logdir DIR
#                  [--timeout SECONDS] [--append "ARGS"] [--icount] [--interactive]
#                  [--plugin SO[,ARG=VALUE...]] [--disk IMAGE]
# --icount: guest time counts instructions (-icount shift=0,sleep=off, one
# TCG thread), for make bench. --plugin: a QEMU TCG plugin (make profile).
# --disk: IMAGE is the virtio disk instead of a fresh scratch disk, written
# to a snapshot only; with --initrd - the kernel boots it as its root
# (root=/dev/vda rw, make check-systemd).
# The guest must bring up every vCPU it is given (-smp 2): when its console
# says otherwise, results.log gets "# harness: setup failed: ..." (which
# fails the verdict) and stderr says so.
# Exit status: 0 when the guest printed its end marker with status 0, the
# guest's status when it printed one, 124 when the watchdog fired, 125 when
# the guest ended without the end marker (panic, crash), 2 on bad usage.
set -uo pipefail

smp=2
kernel= initrd= mode= logdir= timeout=1200 append= interactive=0 accel=tcg,thread=multi icount=() plugin=() disk=
usage() { sed -n 's/^#   usage: //p; s/^#                  / /p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	--logdir) logdir=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--interactive) interactive=1; shift ;;
	--icount) accel=tcg,thread=single icount=(-icount shift=0,sleep=off); shift ;;
	--plugin) plugin=(-plugin "$2"); shift 2 ;;
	--disk) disk=$2; shift 2 ;;
	*) echo "boot: unknown argument '$1'" >&2; usage ;;
	esac
done
[ -n "$kernel" ] && [ -n "$initrd" ] && [ -n "$mode" ] && [ -n "$logdir" ] || usage
for f in "$kernel" ${disk:+"$disk"}; do
	[ -f "$f" ] || { echo "boot: $f does not exist" >&2; exit 2; }
done
if [ "$initrd" = - ]; then
	[ -n "$disk" ] || { echo "boot: --initrd - needs --disk" >&2; exit 2; }
elif [ ! -f "$initrd" ]; then
	echo "boot: $initrd does not exist" >&2
	exit 2
fi
case "$timeout" in ''|*[!0-9]*) echo "boot: --timeout wants seconds, got '$timeout'" >&2; exit 2 ;; esac

mkdir -p "$logdir"
console=$logdir/console.log results=$logdir/results.log
: > "$console"
: > "$results"

if [ -n "$disk" ]; then
	drive="file=$disk,if=virtio,format=raw,snapshot=on"
else
	# a fresh 1 GiB scratch ext2 disk for every boot (sparse)
	scratch=$logdir/scratch.ext2
	rm -f "$scratch"
	truncate -s 1G "$scratch"
	mkfs.ext2 -q -F "$scratch"
	drive="file=$scratch,if=virtio,format=raw"
fi

cmdline="console=ttyS0 panic=-1 oops=panic harness.mode=$mode $append"
initrd_args=(-initrd "$initrd")
if [ "$initrd" = - ]; then
	cmdline="root=/dev/vda rw $cmdline"
	initrd_args=()
fi
# -machine q35: its ACPI tables route PCI interrupts from static packages.
# The default i440fx machine's _PRT builds them in an AML While loop that
# a debug kernel (KASAN, lockdep) under TCG ran for 21 s of its 30-second
# limit, and past it on a loaded host: virtio-blk then had no interrupt
# and the first read of the scratch disk hung.
qemu=(qemu-system-x86_64 -accel "$accel" "${icount[@]}" "${plugin[@]}" -machine q35 -cpu max -smp "$smp" -m 1G
	-nodefaults -no-reboot -display none
	-kernel "$kernel" "${initrd_args[@]}" -append "$cmdline"
	-drive "$drive")

if [ $interactive -eq 1 ]; then
	echo "boot: interactive guest; Ctrl-A X quits QEMU, console log: $console"
	exec "${qemu[@]}" -serial mon:stdio -serial "file:$results"
fi

# ttyS0: console to a file; ttyS1: results through stdout
timeout -s KILL "$timeout" "${qemu[@]}" -serial "file:$console" -serial stdio \
	< /dev/null | sed -u 's/\r$//' | tee "$results" | grep --line-buffered -vE '^# harness: (exit status [0-9]+|end)$'
rc=${PIPESTATUS[0]}

# "smp: Brought up 1 node, 2 CPUs" (kernel/smp.c)
cpus=$(sed -nE 's/.*smp: Brought up [0-9]+ nodes?, ([0-9]+) CPUs?\r?$/\1/p' "$console" | tail -n 1)
if [ "${cpus:-0}" -lt "$smp" ]; then
	echo "boot: the guest brought up ${cpus:-no} of the $smp CPUs it was given; see $console" >&2
	echo "# harness: setup failed: the guest brought up ${cpus:-no} of the $smp CPUs it was given" >> "$results"
fi

status=$(sed -n 's/^# harness: exit status \([0-9]*\)$/\1/p' "$results" | tail -n 1)
explain() {
	echo "boot: $1" >&2
	echo "boot: console log: $console; its last lines:" >&2
	tail -n 25 "$console" | sed 's/^/    /' >&2
}
if [ "$rc" -eq 137 ]; then
	explain "watchdog: the guest did not finish within ${timeout}s; QEMU killed"
	exit 124
elif [ "$rc" -ne 0 ]; then
	explain "QEMU failed with exit status $rc"
	exit 125
elif ! grep -qx '# harness: end' "$results" || [ -z "$status" ]; then
	explain "the guest stopped without its end marker (panic or crash?)"
	exit 125
fi
exit "$status"
