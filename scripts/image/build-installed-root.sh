#!/usr/bin/env bash
# make check-installed's disk: a Debian bookworm root (debootstrap from the
# machine's Debian mirror, with initramfs-tools, udev and e2fsprogs) where
# apt installs, from the repository of make repo (as README's Install
# says), the packaged kernel and the patched systemd; and, for the control,
# Debian's own unpatched kernel package of the same release from the
# registry. The packages' scripts make each kernel's initramfs with
# initramfs-tools. /tmp on tmpfs (tmp.mount), the harness service and the
# tests; written to an ext4 image. OUT/boot-KERNEL/ gets each kernel's
# vmlinuz and initrd.img from the root's /boot, which QEMU boots.
#   usage: build-installed-root.sh --root DIR --repo DIR --release RELEASE
#                                  --debian-release RELEASE --ktap-run PROGRAM --out DIR
set -euo pipefail
root= repo= release= drelease= ktap_run= out=
here=$(dirname "$(realpath "$0")")
. "$here/../lib.sh"
parse_options --root=root --repo=repo --release=release --debian-release=drelease \
	--ktap-run=ktap_run --out=out -- "$@"
no_args
[ -n "$root" ] && [ -n "$repo" ] && [ -n "$release" ] && [ -n "$drelease" ] && [ -n "$ktap_run" ] &&
	[ -n "$out" ] || usage
top=$(dirname "$(dirname "$here")")
files=$top/qemu-boot/installed
root=$(realpath -m "$root") repo=$(realpath -m "$repo") out=$(realpath -m "$out")
[ -f "$repo/Packages" ] || { echo "installed-root: no repository in $repo (make repo)" >&2; exit 1; }

mirror=$("$here/debian-mirror.sh")
if [ ! -e "$root/.debootstrap-done" ]; then
	command -v debootstrap >/dev/null || { echo "installed-root: debootstrap is missing; run make deps" >&2; exit 1; }
	echo "installed-root: debootstrap bookworm (minbase, systemd-sysv, initramfs-tools, udev) from $mirror (about 4 minutes)"
	for m in proc sys dev/pts dev; do
		! mountpoint -q "$root/$m" || umount -l "$root/$m"
	done
	rm -rf --one-file-system "$root"
	mkdir -p "$(dirname "$root")"
	debootstrap --variant=minbase \
		--include=systemd-sysv,dbus,initramfs-tools,kmod,udev,e2fsprogs,procps,util-linux \
		bookworm "$root" "$mirror" > "$root.debootstrap.log" 2>&1 ||
		{ tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
	touch "$root/.debootstrap-done"
fi
# apt installs into a fresh copy of the debootstrapped root
# (a run killed before its cleanup left its bind mounts: never remove
# through them)
for m in proc sys dev; do
	! mountpoint -q "$root.work/$m" || umount -l "$root.work/$m"
done
rm -rf --one-file-system "$root.work"
cp -a "$root" "$root.work"
root=$root.work

mounted=()
cleanup() {
	for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m"; done
}
trap cleanup EXIT
for m in proc sys dev; do
	mount --bind /$m "$root/$m"
	mounted=("$root/$m" "${mounted[@]}")
done
log=$out/apt.log
mkdir -p "$out"
: > "$log"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive "$@" >> "$log" 2>&1 ||
	{ echo "installed-root: '$*' failed; the end of $log:" >&2; tail -n 25 "$log" >&2; exit 1; }; }

# what README's Install says an operator does
mkdir -p "$root/srv"
cp -a "$repo" "$root/srv/memory-tmpfs"
echo "deb [trusted=yes] file:/srv/memory-tmpfs ./" > "$root/etc/apt/sources.list.d/memory-tmpfs.list"
# the root's fstab first: initramfs-tools puts fsck in by it
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > "$root/etc/fstab"
sys=$(cd "$repo" && for f in *.deb; do dpkg-deb -f "$f" Package; done |
	while read -r p; do
		chroot "$root" dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "$p" 2>/dev/null | sed -n 's/^ii  *//p' ||
			true	# not in the root
	done | paste -sd' ')
echo "installed-root: apt install linux-image-$release $sys (from $repo)"
in_root apt-get update
in_root apt-get install -y "linux-image-$release" $sys
# the control: Debian's own package of the same release, from the registry
echo "installed-root: apt install linux-image-$drelease (Debian's, from the registry)"
rm -rf "$out/debian-kernel"
mkdir -p "$out/debian-kernel"
(cd "$out/debian-kernel" && apt-get download "linux-image-$drelease" >> "$log" 2>&1) ||
	{ echo "installed-root: apt-get download linux-image-$drelease failed; the end of $log:" >&2
	  tail -n 5 "$log" >&2; exit 1; }
cp "$out/debian-kernel"/*.deb "$root/tmp/"
in_root sh -c "apt-get install -y /tmp/linux-image-*.deb"
rm -f "$root"/tmp/*.deb
grep -q TmpfsMax "$(find "$root/usr/lib" -name 'libsystemd-core-*.so' | sed -n 1p)" ||
	{ echo "installed-root: the installed systemd has no TmpfsMax" >&2; exit 1; }
chroot "$root" dpkg-query -W -f='${Package} ${Version}\n' "linux-image-$release" "linux-image-$drelease" \
	systemd udev > "$out/installed.txt"
sed 's/^/installed-root:   /' "$out/installed.txt"

# /tmp on tmpfs, the harness service and the tests
etc=$root/etc/systemd/system
mkdir -p "$etc/local-fs.target.wants" "$etc/multi-user.target.wants"
ln -sf /usr/share/systemd/tmp.mount "$etc/tmp.mount"
ln -sf ../tmp.mount "$etc/local-fs.target.wants/tmp.mount"
install -m 0644 "$files/harness.service" "$etc/harness.service"
ln -sf ../harness.service "$etc/multi-user.target.wants/harness.service"
install -D -m 0755 "$ktap_run" "$root/opt/harness/ktap-run"
install -D -m 0755 "$files/test_installed" "$root/opt/installed-tests/test_installed"
install -m 0644 "$top/qemu-boot/harness/ktap.sh" "$root/opt/harness/ktap.sh"
echo guest > "$root/etc/hostname"
: > "$root/etc/machine-id"
cleanup
mounted=()

for k in patched:$release debian:$drelease; do
	d=$out/boot-${k%%:*}
	rm -rf "$d"
	mkdir -p "$d"
	cp "$root/boot/vmlinuz-${k#*:}" "$d/vmlinuz"
	cp "$root/boot/initrd.img-${k#*:}" "$d/initrd.img"
done
img=$out/root.img
rm -f "$img.tmp"
mke2fs -q -t ext4 -F -d "$root" "$img.tmp" 3G > /dev/null
mv "$img.tmp" "$img"
echo "installed-root: $img ($(du -sh --apparent-size "$root" | cut -f1) of files); /boot: $(ls "$root/boot" | paste -sd' ')"
