#!/usr/bin/env bash
# Build a guest initramfs (newc cpio). With --base: busybox-static, the
# /init of qemu-boot/, cgroup-tools with the shared libraries ldd names,
# /etc/passwd with an unprivileged user, /etc/hosts. Without: only the
# files given, an overlay to concatenate after a base archive.
#   usage: build-initramfs.sh [--base] OUT.cpio SRC:DEST...
# SRC:DEST copies file or directory SRC to DEST inside the guest (a
# directory's contents go into DEST); +SRC:DEST copies a dynamic program
# and the shared libraries ldd names for it (at their host paths). OUT is
# replaced only when its contents change, so what depends on it is not
# redone for nothing.
set -euo pipefail
base=0
if [ "${1:-}" = --base ]; then
	base=1
	shift
fi
[ $# -ge 1 ] || { echo "usage: build-initramfs.sh [--base] OUT.cpio SRC:DEST..." >&2; exit 2; }
out=$1
shift
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
stage=$(mktemp -d)
trap 'rm -rf "$stage" "$out.tmp"' EXIT
chmod 0755 "$stage"	# the guest's /: mktemp made it 0700

# copy_with_libs PROG [DEST]: a dynamic program (at DEST, default its own
# path) with the shared libraries ldd names for it
copy_with_libs() {
	local prog=$1 dest=${2:-$1} lib
	install -D -m 0755 "$prog" "$stage$dest"
	for lib in $(ldd "$prog" | grep -oE '/[^ ]+'); do
		[ -e "$stage$lib" ] || install -D -m 0755 "$(realpath "$lib")" "$stage$lib"
	done
}

for spec in "$@"; do
	src=${spec%%:*} dest=${spec#*:}
	if [ "${src#+}" != "$src" ]; then
		src=${src#+}
		[ -f "$src" ] || { echo "initramfs: $src does not exist" >&2; exit 1; }
		ldd "$src" >/dev/null 2>&1 || { echo "initramfs: $src is not a dynamic program" >&2; exit 1; }
		copy_with_libs "$src" "$dest"
	elif [ -d "$src" ]; then
		mkdir -p "$stage$dest"
		cp -a "$src"/. "$stage$dest"/
	elif [ -f "$src" ]; then
		install -D -m "$(stat -c %a "$src")" "$src" "$stage$dest"
	else
		echo "initramfs: $src does not exist" >&2
		exit 1
	fi
done

if [ $base -eq 1 ]; then

mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root,mnt,opt,home/user}
chmod 1777 "$stage/tmp"

# busybox: the static one from busybox-static
bb=/bin/busybox
if ldd "$bb" >/dev/null 2>&1; then	# ldd fails on a static program
	echo "initramfs: $bb is not static; install busybox-static" >&2
	exit 1
fi
cp "$bb" "$stage/bin/busybox"
for applet in $("$bb" --list-full); do
	[ -e "$stage/$applet" ] || ln -s /bin/busybox "$stage/$applet"
done

for prog in cgcreate cgset cgget cgexec cgdelete cgclassify lscgroup lssubsys; do
	p=$(command -v "$prog") || { echo "initramfs: $prog not found; install cgroup-tools" >&2; exit 1; }
	copy_with_libs "$p"
done
# getaddrinfo("localhost") in the static selftests loads the files module
copy_with_libs /lib/x86_64-linux-gnu/libnss_files.so.2
printf 'passwd: files\ngroup: files\nhosts: files\n' > "$stage/etc/nsswitch.conf"

cat > "$stage/etc/passwd" <<'PW'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:unprivileged test user:/home/user:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PW
cat > "$stage/etc/group" <<'GR'
root:x:0:
user:x:1000:
nogroup:x:65534:
GR
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost\n127.0.1.1\tguest\n' > "$stage/etc/hosts"
echo guest > "$stage/etc/hostname"

install -m 0755 "$top/qemu-boot/init" "$stage/init"
fi

# same inputs, same bytes: fixed timestamps, sorted names, root owner
find "$stage" -exec touch -h -d @0 {} +
(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc -R 0:0 --reproducible --quiet) > "$out.tmp"
if cmp -s "$out.tmp" "$out"; then
	exit 0
fi
mv "$out.tmp" "$out"
echo "initramfs: $out ($(du -h "$out" | cut -f1))"
