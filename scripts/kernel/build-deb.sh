#!/usr/bin/env bash
# make deb: the kernel's own bindeb-pkg builds linux-image and linux-headers
# packages of the patched tree from Debian's config of a flavour
# (config.*.xz of package linux-config-6.12, read here, never committed),
# the fragment kconfig/deb.config over it, then olddefconfig. The release
# says it carries the series: 6.12.118+memtmpfs-FLAVOUR.
# The packages are cached outside the checkout, keyed by their inputs
# (flavour, Debian's config, the tree's content, which must be committed,
# the series and its version, the fragment, the compiler, the scripts
# that decide the result): another checkout on the same machine (CI's
# fresh clone) builds nothing. A build starts from an empty object
# directory, through the compiler cache, so that its log holds every
# warning. DEB_CACHE_DIR (default
# /var/cache/memory-tmpfs/deb); empty: no cache. The compiler cache is
# build-kernel.sh's.
#   usage: build-deb.sh --tree SRC --baseline-tree SRC --patches DIR --flavour FLAVOUR --out DIR
#                       [--cached-only]
#       --baseline-tree: the tree without the series, where deb-warnings.sh
#       compiles again each file the build warned about
#       --cached-only: take the packages from the cache or fail (exit 3),
#       never build (CI: make check-installed runs only on cached packages)
#       FLAVOUR: cloud-amd64, amd64 or rt-amd64; OUT/debs gets the packages,
#       OUT/warnings-baseline.txt the compiler's warnings, each found in the
#       baseline tree too or not (a warning of the series' own fails the
#       build), OUT/config-diff.txt what differs from Debian's config
set -euo pipefail
src= base= patches= flavour= out= cached_only=0
here=$(dirname "$(realpath "$0")")
. "$here/../lib.sh"
parse_options --tree=src --baseline-tree=base --patches=patches --flavour=flavour --out=out --cached-only=cached_only=1 -- "$@"
no_args
[ -n "$src" ] && [ -n "$base" ] && [ -n "$patches" ] && [ -n "$flavour" ] && [ -n "$out" ] || usage
top=$(dirname "$(dirname "$here")")
case "$flavour" in
cloud-amd64) debian=config.amd64_none_cloud-amd64.xz ;;
amd64) debian=config.amd64_none_amd64.xz ;;
rt-amd64) debian=config.amd64_rt_amd64.xz ;;
*) echo "deb: FLAVOUR=$flavour: say cloud-amd64, amd64 or rt-amd64" >&2; exit 2 ;;
esac
debian=/usr/src/linux-config-6.12/$debian
[ -f "$debian" ] || { echo "deb: no $debian (apt-get install linux-config-6.12, or make deps)" >&2; exit 1; }
src=$(realpath "$src")
fragment=$top/kconfig/deb.config
mkdir -p "$out"
out=$(realpath "$out")
obj=$out/obj
stamp=$out/debs/.built

if [ -n "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	echo "deb: $src has uncommitted changes: commit them (make export-series) first" >&2
	exit 1
fi
version=$(make -s -C "$src" kernelversion)
release=$version+memtmpfs-$flavour
series_version=$(tr -d ' \n' < "$patches/version" 2>/dev/null || echo 1)
pkgversion=$version-1+memtmpfs.v$series_version
key=$({ echo "$flavour $version $pkgversion"; git -C "$src" rev-parse 'HEAD^{tree}'; gcc --version | head -n 1
	xzcat "$debian"; grep -vE '^(#|$)' "$patches/series" | while read -r p; do cat "$patches/$p"; done
	cat "$fragment" "$0" "$here/deb-warnings.sh" "$here/assert-config.sh"; } | sha256sum | cut -c1-16)
cache=${DEB_CACHE_DIR-/var/cache/memory-tmpfs/deb}
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
	echo "deb: $flavour packages are up to date in $out/debs"
	exit 0
fi
if [ -n "$cache" ] && [ -f "$cache/$key/.built" ]; then
	rm -rf "$out/debs"
	mkdir -p "$out/debs"
	cp "$cache/$key"/*.deb "$out/debs/"
	cp "$cache/$key"/*.txt "$out/" 2>/dev/null || true
	echo "$key" > "$stamp"
	echo "deb: $(ls "$out/debs" | wc -l) packages of $release from the cache ($cache/$key)"
	exit 0
fi
if [ $cached_only = 1 ]; then
	echo "deb: no cached $flavour packages of this series (key $key in ${cache:-no cache}); make deb builds them"
	exit 3
fi

# Debian's config, the fragment, olddefconfig
echo "deb: configuring $release: $(basename "$debian") + kconfig/deb.config, olddefconfig"
rm -rf "$obj"
mkdir -p "$obj"
xzcat "$debian" > "$obj/.config"
(cd "$src" && scripts/kconfig/merge_config.sh -O "$obj" "$obj/.config" "$fragment") > "$out/merge_config.log" 2>&1 ||
	{ cat "$out/merge_config.log" >&2; exit 1; }
"$src/scripts/config" --file "$obj/.config" --set-str LOCALVERSION "+memtmpfs-$flavour" --disable LOCALVERSION_AUTO
make -s -C "$src" O="$obj" olddefconfig > /dev/null
"$here/assert-config.sh" "$obj/.config" "$fragment"
# what differs from Debian's config after the same olddefconfig
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
xzcat "$debian" > "$tmp/.config"
make -s -C "$src" O="$tmp" olddefconfig > /dev/null
diff <(grep -E '^(CONFIG_|# CONFIG_)' "$tmp/.config" | sort) <(grep -E '^(CONFIG_|# CONFIG_)' "$obj/.config" | sort) |
	sed -n 's/^< /debian: /p; s/^> /deb:    /p' > "$out/config-diff.txt" || true
echo "deb: $(grep -c '^debian: ' "$out/config-diff.txt") lines of Debian's config differ ($out/config-diff.txt)"

cc=gcc
if [ "${KERNEL_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
	export CCACHE_DIR=${KERNEL_CCACHE_DIR:-/var/cache/memory-tmpfs/ccache}
	export CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=true
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
	# ccache runs gcc on paths relative to CCACHE_BASEDIR: warnings keep
	# the absolute ones (deb-warnings.sh reads them)
	export CCACHE_ABSSTDERR=true
	mkdir -p "$CCACHE_DIR"
	cc="ccache gcc"
fi
log=$out/build.log
builtin=$(grep -c '=y$' "$obj/.config")
modules=$(grep -c '=m$' "$obj/.config")
echo "deb: make bindeb-pkg ($builtin options built in, $modules modules; about 90 minutes on 2 cores from scratch; log: $log)"
start=$(date +%s)
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
env -u MAKEFLAGS -u MAKELEVEL make -C "$src" O="$obj" CC="$cc" -j"$(nproc)" LOCALVERSION= \
	KDEB_PKGVERSION="$pkgversion" KBUILD_BUILD_USER=memtmpfs KBUILD_BUILD_HOST=deb \
	DPKG_FLAGS=-d bindeb-pkg > "$log" 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null; do
	for _ in $(seq 60); do
		sleep 1
		kill -0 $pid 2>/dev/null || break
	done
	kill -0 $pid 2>/dev/null &&
		echo "deb: still building, $(( ($(date +%s) - start) / 60 )) min, $(grep -c '^  CC ' "$log" || true) files compiled, $(grep -c '^  LD \[M\]' "$log" || true) module objects linked"
done
if ! wait $pid; then
	echo "deb: bindeb-pkg failed; last lines of $log:" >&2
	grep -E 'error|Error' "$log" | head -n 20 >&2 || true
	tail -n 20 "$log" >&2
	exit 1
fi
secs=$(( $(date +%s) - start ))
# the compiler's warnings, each compiled again without the series
warned=0
"$here/deb-warnings.sh" --tree "$src" --baseline-tree "$base" --config "$obj/.config" --log "$log" --out "$out" ||
	warned=$?
[ $warned -le 1 ] || { echo "deb: checking the warnings against the baseline tree failed" >&2; exit 1; }
rm -rf "$out/debs"
mkdir -p "$out/debs"
mv "$out"/linux-image-*.deb "$out"/linux-headers-*.deb "$out/debs/"
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
echo "build seconds: $secs" > "$out/build-time.txt"
echo "deb: $(ls "$out/debs" | tr '\n' ' ')in $(( secs / 60 )) min"
if [ $warned = 1 ]; then
	echo "deb: the series adds compiler warnings (series only, above; $out/warnings-baseline.txt)" >&2
	exit 1
fi
if [ -n "$cache" ]; then
	rm -rf "$cache/$key.tmp"
	mkdir -p "$cache/$key.tmp"
	cp "$out/debs"/*.deb "$out/warnings-baseline.txt" "$out/config-diff.txt" "$out/build-time.txt" "$cache/$key.tmp/"
	touch "$cache/$key.tmp/.built"
	rm -rf "$cache/$key"
	mv "$cache/$key.tmp" "$cache/$key"
	echo "deb: cached in $cache/$key"
fi
echo "$key" > "$stamp"
