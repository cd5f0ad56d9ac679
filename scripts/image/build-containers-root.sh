#!/usr/bin/env bash
# make check-containers' disk: a Debian bookworm root made with debootstrap
# from the machine's Debian mirror, with Debian's container tools as their
# users install them (podman with crun and runc, lxc, docker.io with
# containerd), busybox-static (the images and the LXC template are made
# from it), the harness's init and the tests; written to an ext2 image
# the kernel boots as its root (init=/opt/harness/containers-init).
# Two steps, so that .ci/run can fetch while the kernels build:
#   usage: build-containers-root.sh fetch ROOTDIR
#          build-containers-root.sh image ROOTDIR KTAP_RUN OUT.img
set -euo pipefail
step=$1 root=$2
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
files=$top/qemu-boot/containers
packages=(podman crun runc conmon lxc docker.io containerd busybox-static)

mirror=$("$here/debian-mirror.sh")

# a mount left below the root (an interrupted run) would be copied into
# the image or removed with it: undo it first
unmount_below() {
	local m
	local m r
	r=$(realpath -m "$root")/
	awk -v r="$r" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r |
		while read -r m; do
			echo "containers-root: unmounting $m, left by an earlier run"
			umount -l "$m"
		done
}

fetch() {
	# the packages installed, recorded in the marker: a change refetches
	[ "$(cat "$root/.packages-done" 2>/dev/null)" = "${packages[*]}" ] && return 0
	unmount_below
	if [ ! -e "$root/.debootstrap-done" ]; then
		command -v debootstrap >/dev/null ||
			{ echo "containers-root: debootstrap is missing; run make deps" >&2; exit 1; }
		echo "containers-root: debootstrap bookworm (minbase) from $mirror (about 3 minutes)"
		rm -rf --one-file-system "$root"
		mkdir -p "$(dirname "$root")"
		debootstrap --variant=minbase bookworm "$root" "$mirror" \
			> "$root.debootstrap.log" 2>&1 ||
			{ tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
		touch "$root/.debootstrap-done"
	fi
	echo "containers-root: apt-get install ${packages[*]} (about 3 minutes)"
	# no service starts in the chroot
	printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
	chmod 0755 "$root/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	mount -t proc proc "$root/proc"
	trap 'umount "$root/proc" 2>/dev/null' EXIT
	local status=0
	{
		chroot "$root" apt-get update &&
			DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y \
				--no-install-recommends "${packages[@]}" &&
			chroot "$root" apt-get clean
	} > "$root.apt.log" 2>&1 || status=$?
	umount "$root/proc"
	trap - EXIT
	if [ "$status" -ne 0 ]; then
		tail -n 20 "$root.apt.log" >&2
		exit 1
	fi
	rm -f "$root/usr/sbin/policy-rc.d"
	echo "${packages[*]}" > "$root/.packages-done"
	echo "containers-root: $(chroot "$root" dpkg-query -W -f='${Package} ${Version}\n' \
		podman crun runc lxc docker.io | paste -sd, - | sed 's/,/, /g')"
}

image() {
	local ktap_run=$1 out=$2 b
	fetch
	unmount_below
	# the harness: its init, the test, ktap-run and ktap.sh
	install -D -m 0755 "$files/containers-init" "$root/opt/harness/containers-init"
	install -D -m 0755 "$ktap_run" "$root/opt/harness/ktap-run"
	rm -rf "$root/opt/containers-tests"
	install -D -m 0755 "$files/test_containers" "$root/opt/containers-tests/test_containers"
	install -m 0644 "$top/qemu-boot/harness/ktap.sh" "$root/opt/harness/ktap.sh"
	# the tools' configuration: vfs storage, the cgroupfs manager, no network
	install -D -m 0644 "$files/containers.conf" "$root/etc/containers/containers.conf"
	install -D -m 0644 "$files/storage.conf" "$root/etc/containers/storage.conf"
	install -D -m 0644 "$files/daemon.json" "$root/etc/docker/daemon.json"
	# the image every tool imports: a busybox root as a tar
	b=$(mktemp -d)
	mkdir -p "$b/bin" "$b/dev" "$b/proc" "$b/sys" "$b/tmp" "$b/etc"
	cp "$root/bin/busybox" "$b/bin/busybox"
	for a in $("$b/bin/busybox" --list); do
		[ "$a" = busybox ] || ln -s busybox "$b/bin/$a"
	done
	echo 'root:x:0:0:root:/:/bin/sh' > "$b/etc/passwd"
	echo 'root:x:0:' > "$b/etc/group"
	tar -C "$b" --numeric-owner --owner=0 --group=0 -cf "$root/opt/containers-tests/busybox.tar" .
	rm -rf "$b"
	echo guest > "$root/etc/hostname"
	rm -f "$out.tmp"
	mke2fs -q -t ext2 -F -d "$root" "$out.tmp" 3G
	mv "$out.tmp" "$out"
	echo "containers-root: $out ($(du -sh --apparent-size "$root" | cut -f1) of files)"
}

case "$step" in
fetch) fetch ;;
image) image "$3" "$4" ;;
*) echo "usage: build-containers-root.sh fetch|image ROOTDIR [KTAP_RUN OUT.img]" >&2; exit 2 ;;
esac
