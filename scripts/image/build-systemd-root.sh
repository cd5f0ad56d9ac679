#!/usr/bin/env bash
# make check-systemd's disk: a Debian bookworm root made with debootstrap
# from the machine's Debian mirror, the systemd packages built with
# patches/systemd/ installed over Debian's, tmp.mount enabled (/tmp on
# tmpfs), the test slice, the harness service and its tests; written to
# an ext2 image the patched kernel boots as its root.
#   usage: build-systemd-root.sh --root DIR --debs DIR --ktap-run PROGRAM --out IMAGE
set -euo pipefail
root= debs= ktap_run= out=
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --root=root --debs=debs --ktap-run=ktap_run --out=out -- "$@"
no_args
[ -n "$root" ] && [ -n "$debs" ] && [ -n "$ktap_run" ] && [ -n "$out" ] || usage
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
files=$top/qemu-boot/systemd

mirror=$("$here/debian-mirror.sh")
if [ ! -e "$root/.debootstrap-done" ]; then
	command -v debootstrap >/dev/null || { echo "systemd-root: debootstrap is missing; run make deps" >&2; exit 1; }
	echo "systemd-root: debootstrap bookworm (minbase + systemd-sysv, dbus) from $mirror (about 3 minutes)"
	rm -rf "$root"
	mkdir -p "$(dirname "$root")"
	debootstrap --variant=minbase --include=systemd-sysv,dbus bookworm "$root" "$mirror" \
		> "$root.debootstrap.log" 2>&1 ||
		{ tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
	touch "$root/.debootstrap-done"
fi

# the patched packages, over those the root has
install=()
for deb in "$debs"/*.deb; do
	pkg=$(dpkg-deb -f "$deb" Package)
	if chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null | grep -q '^ii'; then
		install+=("/tmp/debs/$(basename "$deb")")
	fi
done
[ ${#install[@]} -gt 0 ] || { echo "systemd-root: no package of $debs is in the root" >&2; exit 1; }
rm -rf "$root/tmp/debs"
mkdir -p "$root/tmp/debs"
cp "$debs"/*.deb "$root/tmp/debs/"
echo "systemd-root: installing the patched ${install[*]##*/}"
chroot "$root" dpkg -i "${install[@]}" > "$root.dpkg.log" 2>&1 ||
	{ tail -n 20 "$root.dpkg.log" >&2; exit 1; }
rm -rf "$root/tmp/debs"
core=$(find "$root/usr/lib" -name 'libsystemd-core-*.so' | sed -n 1p)
[ -n "$core" ] && grep -q TmpfsMax "$core" && grep -q TmpfsInodesMax "$core" ||
	{ echo "systemd-root: the installed systemd has no TmpfsMax or TmpfsInodesMax (${core:-no libsystemd-core})" >&2; exit 1; }

# /tmp on tmpfs, the test slice, the harness service and the tests
etc=$root/etc/systemd/system
mkdir -p "$etc/local-fs.target.wants" "$etc/multi-user.target.wants"
ln -sf /usr/share/systemd/tmp.mount "$etc/tmp.mount"
ln -sf ../tmp.mount "$etc/local-fs.target.wants/tmp.mount"
install -m 0644 "$files/tmpfstest.slice" "$etc/tmpfstest.slice"
install -m 0644 "$files/harness.service" "$etc/harness.service"
ln -sf ../harness.service "$etc/multi-user.target.wants/harness.service"
rm -rf "$etc/tmpfstest.slice.d" "$root/etc/systemd/system.control"
install -D -m 0755 "$ktap_run" "$root/opt/harness/ktap-run"
install -D -m 0755 "$files/test_tmpfsmax" "$root/opt/systemd-tests/test_tmpfsmax"
install -m 0644 "$top/qemu-boot/harness/ktap.sh" "$root/opt/harness/ktap.sh"
echo guest > "$root/etc/hostname"
: > "$root/etc/machine-id"

rm -f "$out.tmp"
mke2fs -q -t ext2 -F -d "$root" "$out.tmp" 1G
mv "$out.tmp" "$out"
echo "systemd-root: $out ($(du -sh --apparent-size "$root" | cut -f1) of files)"
