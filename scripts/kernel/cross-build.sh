#!/usr/bin/env bash
# make cross: build the series for another architecture with Debian's
# cross compiler, W=1, from allnoconfig plus kconfig/cross/common.config
# and kconfig/cross/ARCH.config, in a worktree of the tree (OUT/linux) at
# the series' tip; with --prefixes, every prefix of the series first (as
# make bisect does, incrementally). Each compiler warning of the tip's
# build is checked against the tree without the series, compiled with
# the same config (scripts/kernel/deb-warnings.sh): a warning of the
# series' own fails. Prints a progress line every 30 s and, at the end,
# the minutes and the files compiled.
#   usage: cross-build.sh --tree TREE --baseline-tree BASE --patches DIR
#          --out DIR --arch ARCH [--prefixes]
# ARCH: arm64, arm (armhf), riscv (riscv64), s390 (s390x), powerpc
# (ppc64le).
set -euo pipefail
tree= base= patchdir= outdir= arch= prefixes=
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --tree=tree --baseline-tree=base --patches=patchdir --out=outdir \
	--arch=arch --prefixes=prefixes=1 -- "$@"
no_args
[ -n "$tree" ] && [ -n "$base" ] && [ -n "$patchdir" ] && [ -n "$outdir" ] && [ -n "$arch" ] || usage
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
case "$arch" in
arm64) cross=aarch64-linux-gnu- ;;
arm) cross=arm-linux-gnueabihf- ;;
riscv) cross=riscv64-linux-gnu- ;;
s390) cross=s390x-linux-gnu- ;;
powerpc) cross=powerpc64le-linux-gnu- ;;
*) echo "cross: ARCH=$arch: say arm64, arm, riscv, s390 or powerpc" >&2; exit 2 ;;
esac
command -v "${cross}gcc" >/dev/null || {
	echo "cross: no ${cross}gcc (make deps installs Debian's cross compilers)" >&2
	exit 1
}
frags=("$top/kconfig/cross/common.config" "$top/kconfig/cross/$arch.config")
patchdir=$(realpath "$patchdir")
mkdir -p "$outdir"
outdir=$(realpath "$outdir")
work=$outdir/linux
obj=$outdir/obj
mkdir -p "$obj"
export ARCH=$arch CROSS_COMPILE=$cross KBUILD_EXTRA_WARN=1
cc=${cross}gcc
if [ "${KERNEL_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
	export CCACHE_DIR=${KERNEL_CCACHE_DIR:-/var/cache/memory-tmpfs/ccache}
	export CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=true
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
	mkdir -p "$CCACHE_DIR"
	cc="ccache ${cross}gcc"
fi

mapfile -t patches < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$patchdir/series")
if [ ! -d "$work" ]; then
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$work" base
fi
git -C "$work" am --abort >/dev/null 2>&1 || true
git -C "$work" checkout -q --detach base
git -C "$work" reset -q --hard base

# configure once, for the tip: allnoconfig and the fragments; checked
configure() {
	if ! (cd "$work" && scripts/kconfig/merge_config.sh -n -O "$obj" "${frags[@]}") \
		> "$obj/merge_config.log" 2>&1; then
		cat "$obj/merge_config.log" >&2
		exit 1
	fi
	"$here/assert-config.sh" "$obj/.config" "${frags[@]}" || {
		echo "cross $arch: the config lacks options the fragments ask for (above)" >&2
		exit 1
	}
}

# build NAME: vmlinux, with a progress line every 30 s; the log in $obj/build.log
build() {
	local name=$1 start pid
	start=$(date +%s)
	env -u MAKEFLAGS -u MAKELEVEL make -C "$work" O="$obj" CC="$cc" -j"$(nproc)" vmlinux \
		> "$obj/build.log" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		for _ in $(seq 30); do
			sleep 1
			kill -0 $pid 2>/dev/null || break
		done
		if kill -0 $pid 2>/dev/null; then
			echo "cross $arch: $name: still building, $(( $(date +%s) - start ))s," \
				"$(grep -c '^  CC ' "$obj/build.log" || true) files compiled so far"
		fi
	done
	if ! wait $pid; then
		echo "cross $arch: $name: build failed; see $obj/build.log" >&2
		grep -E 'error|Error' "$obj/build.log" | head -n 20 >&2 || true
		exit 1
	fi
	echo "cross $arch: $name: built in $(( $(date +%s) - start ))s," \
		"$(grep -c '^  CC ' "$obj/build.log" || true) files compiled"
}

start=$(date +%s)
n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	git -C "$work" am -q --no-3way "$patchdir/$p"
	[ $n -eq 1 ] && configure
	if [ -n "$prefixes" ] && [ $n -lt ${#patches[@]} ]; then
		# a prefix's config: what it has of the tip's (olddefconfig)
		env -u MAKEFLAGS make -s -C "$work" O="$obj" olddefconfig > /dev/null
		build "prefix $n/${#patches[@]}"
		# the config of the tip again, for the next prefix's olddefconfig
		configure
	fi
done
[ $n -gt 0 ] || { echo "cross: patches/series is empty" >&2; exit 1; }
# the tip from scratch (through the compiler cache, which replays a
# file's warnings): every file's warnings are in the log
if [ -n "$prefixes" ]; then
	rm -rf "$obj"
	mkdir -p "$obj"
fi
configure
build "the series (${#patches[@]} patches)"
"$here/deb-warnings.sh" --tree "$work" --baseline-tree "$base" --config "$obj/.config" \
	--log "$obj/build.log" --out "$outdir" | sed "s/^deb/cross $arch/"
status=${PIPESTATUS[0]}
echo "cross $arch: done in $(( ($(date +%s) - start + 59) / 60 )) min"
exit "$status"
