#!/usr/bin/env bash
# Build Debian bookworm's systemd with patches/systemd/*.patch added to its
# debian/patches: the source package comes from the machine's Debian mirror
# (apt-get source; a deb-src entry is added for it when missing), the
# build-dependencies are installed, and dpkg-buildpackage builds the binary
# packages without the udebs and the test suite into OUT/debs.
# The packages are cached outside the checkout, keyed by their inputs (the
# patches, the source package's version, this script): another checkout
# on the same machine (CI's fresh clone) builds nothing.
# The packages' version is Debian's with +memtmpfs1 appended.
# SYSTEMD_CACHE_DIR (default /var/cache/memory-tmpfs/systemd); empty: no
# cache.
#   usage: build-systemd.sh PATCHDIR OUT
set -euo pipefail
patchdir=$(realpath "$1")
out=$2
mkdir -p "$out"
out=$(realpath "$out")
stamp=$out/debs/.built

patches=("$patchdir"/*.patch)
[ -e "${patches[0]}" ] || { echo "systemd: no patches in $patchdir" >&2; exit 1; }
"$(dirname "$(realpath "$0")")/deb-src.sh" systemd systemd
# the version apt-get source fetches: the candidate's source version
srcver=$(apt-cache showsrc systemd | sed -n 's/^Version: //p' | sort -V | tail -n 1)
SYSTEMD_VERSION_SUFFIX=+memtmpfs1
key=$({ echo "$srcver"; cat "${patches[@]}" "$0"; } | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
	touch "$stamp"
	exit 0
fi
cache=${SYSTEMD_CACHE_DIR-/var/cache/memory-tmpfs/systemd}
if [ -n "$cache" ]; then
	if [ -f "$cache/$key/.built" ]; then
		rm -rf "$out/debs"
		mkdir -p "$out/debs"
		cp "$cache/$key"/*.deb "$out/debs/"
		echo "$key" > "$stamp"
		echo "systemd: $(ls "$out/debs" | wc -l) packages of systemd $srcver with ${#patches[@]} patch(es) from the cache ($cache/$key)"
		exit 0
	fi
fi
version=$(dpkg-query -W -f='${Version}' systemd 2>/dev/null || true)
echo "systemd: source package (installed systemd: ${version:-none}); build-dependencies"
DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq systemd > "$out/build-dep.log" 2>&1 ||
	{ tail -n 20 "$out/build-dep.log" >&2; exit 1; }

rm -rf "$out/src"
mkdir -p "$out/src"
(cd "$out/src" && apt-get source -qq systemd > /dev/null 2>&1)
src=$(find "$out/src" -mindepth 1 -maxdepth 1 -type d -name 'systemd-*')
[ -n "$src" ] || { echo "systemd: apt-get source systemd gave no source tree in $out/src" >&2; exit 1; }
for p in "${patches[@]}"; do
	cp "$p" "$src/debian/patches/"
	basename "$p" >> "$src/debian/patches/series"
done
# a version above Debian's, so that apt installs these over it (make repo)
{
	printf 'systemd (%s) bookworm; urgency=medium\n\n' "$srcver$SYSTEMD_VERSION_SUFFIX"
	for p in "${patches[@]}"; do printf '  * debian/patches/%s\n' "$(basename "$p")"; done
	printf '\n -- memory.tmpfs <memory-tmpfs@localhost>  %s\n\n' \
		"$(cd "$src" && dpkg-parsechangelog -S Date)"
	cat "$src/debian/changelog"
} > "$src/debian/changelog.new"
mv "$src/debian/changelog.new" "$src/debian/changelog"

echo "systemd: dpkg-buildpackage $(basename "$src") with ${#patches[@]} patch(es) (about 15 minutes on 2 cores; log: $out/build.log)"
start=$(date +%s)
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" DEB_BUILD_PROFILES="noudeb nocheck" \
	dpkg-buildpackage -b -uc -us) > "$out/build.log" 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null; do
	sleep 60
	kill -0 $pid 2>/dev/null && echo "systemd: still building, $(( $(date +%s) - start ))s, $(grep -c '^\[[0-9]*/[0-9]*\]' "$out/build.log" || true) ninja steps"
done
wait $pid || { echo "systemd: dpkg-buildpackage failed; the end of $out/build.log:" >&2; tail -n 30 "$out/build.log" >&2; exit 1; }
rm -rf "$out/debs"
mkdir -p "$out/debs"
mv "$out/src"/*.deb "$out/debs/"
echo "$key" > "$stamp"
echo "systemd: $(ls "$out/debs" | wc -l) packages in $out/debs ($(( $(date +%s) - start ))s)"
if [ -n "$cache" ]; then
	rm -rf "$cache/$key.tmp"
	mkdir -p "$cache/$key.tmp"
	cp "$out/debs"/*.deb "$cache/$key.tmp/"
	touch "$cache/$key.tmp/.built"
	rm -rf "$cache/$key"
	mv "$cache/$key.tmp" "$cache/$key"
	echo "systemd: cached in $cache/$key"
fi
