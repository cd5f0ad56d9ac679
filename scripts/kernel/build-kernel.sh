#!/usr/bin/env bash
# Configure (allnoconfig + the fragments, via the tree's merge_config.sh),
# check the result, and build bzImage and the uapi headers out of tree.
# With --debian-config, the base is that config of Debian's
# (config.*.xz of package linux-config-6.12) with every module turned off,
# instead of allnoconfig; options it does not name take their defaults.
# With --over FRAGMENT, that fragment is merged last over the result
# (alldefconfig: what the first merge set stays, options it makes visible
# take their defaults), for an option such as EXPERT that allnoconfig
# would take as leave to turn off what it only shows (make check's
# PREEMPT_RT kernel).
# Rebuilds are incremental: the config is regenerated only when a fragment
# changed, and kbuild recompiles only what changed.
#   usage: build-kernel.sh --tree SRC --out DIR --name NAME
#          [--debian-config CONFIG.xz] [--over FRAGMENT] FRAGMENT...
set -euo pipefail
src= out= name= debian= over= fragments=()
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --tree=src --out=out --name=name --debian-config=debian --over=over -- "$@"
fragments=("${ARGS[@]}")
[ -n "$src" ] && [ -n "$out" ] && [ -n "$name" ] || usage
[ ${#fragments[@]} -ge 1 ] || usage
src=$(realpath "$src")
mkdir -p "$out"
out=$(realpath "$out")
frags=()
if [ -n "$debian" ]; then
	[ -f "$debian" ] || { echo "$name: no $debian (apt-get install linux-config-6.12, or make deps)" >&2; exit 1; }
	frags+=("$(realpath "$debian")")
fi
[ -z "$over" ] || { over=$(realpath "$over"); fragments+=("$over"); }
for f in "${fragments[@]}"; do frags+=("$(realpath "$f")"); done
skip=${#frags[@]}
skip=$(( skip - ${#fragments[@]} ))	# frags[skip...]: the fragments
nfirst=${#fragments[@]}			# ... of the first merge (not --over's)
[ -z "$over" ] || nfirst=$(( nfirst - 1 ))

regen=0
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.fragments" 2>/dev/null)" != "${frags[*]}" ]; then
	regen=1
else
	for f in "${frags[@]}"; do
		[ "$f" -nt "$out/.config" ] && regen=1
	done
fi
if [ $regen -eq 1 ]; then
	echo "$name: configuring: ${debian:+$(basename "$debian") without modules + }$(for f in "${fragments[@]}"; do printf '%s ' "$(basename "$f")"; done)"
	if [ -n "$debian" ]; then
		# =m to off; the fragments then build in what the guest needs
		xzcat "$debian" | sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' >"$out/debian.config"
		base=("$out/debian.config")
		noconfig=
	else
		base=()
		noconfig=-n
	fi
	if ! (cd "$src" && scripts/kconfig/merge_config.sh $noconfig -O "$out" "${base[@]}" \
		"${frags[@]:$skip:$nfirst}") >"$out/merge_config.log" 2>&1; then
		cat "$out/merge_config.log" >&2
		exit 1
	fi
	if [ -n "$over" ] && ! (cd "$src" && scripts/kconfig/merge_config.sh -O "$out" "$out/.config" "$over") >>"$out/merge_config.log" 2>&1; then
		cat "$out/merge_config.log" >&2
		exit 1
	fi
	echo "${frags[*]}" > "$out/.fragments"
fi
# what --over sets overrides what the first fragments asked for
asserted=("${frags[@]:$skip}")
if [ -n "$over" ]; then
	mkdir -p "$out/asserted"
	syms=$(grep -oE '^(# )?CONFIG_[A-Za-z0-9_]+' "$over" | sed 's/^# //' | paste -sd'|')
	asserted=()
	for f in "${frags[@]:$skip:$nfirst}"; do
		grep -vE "^(# )?($syms)( is not set|=)" "$f" > "$out/asserted/$(basename "$f")" || true
		asserted+=("$out/asserted/$(basename "$f")")
	done
	asserted+=("$over")
fi
"$(dirname "$(realpath "$0")")/assert-config.sh" "$out/.config" "${asserted[@]}" || {
	echo "$name: the config lacks options the fragments ask for (above); see $out/merge_config.log" >&2
	exit 1
}

# A compiler cache outside the checkout, so that another checkout on the
# same machine (CI's fresh clone) recompiles nothing this one compiled:
# KERNEL_CCACHE_DIR (default /var/cache/memory-tmpfs/ccache), paths
# hashed relative to the checkout's top. KERNEL_CCACHE=0: plain gcc.
cc=gcc
if [ "${KERNEL_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
	export CCACHE_DIR=${KERNEL_CCACHE_DIR:-/var/cache/memory-tmpfs/ccache}
	CCACHE_BASEDIR=$(dirname "$(dirname "$(dirname "$(realpath "$0")")")")
	export CCACHE_BASEDIR CCACHE_NOHASHDIR=true
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
	mkdir -p "$CCACHE_DIR"
	cc="ccache gcc"
	ccache -z >/dev/null
fi

log=$out/build.log
jobs=$(nproc)
echo "$name: make bzImage headers (first build about 4 minutes on 2 cores; log: $log)"
start=$(date +%s)
# not -s from a calling make: the progress count reads the CC lines
env -u MAKEFLAGS -u MAKELEVEL make -C "$src" O="$out" CC="$cc" -j"$jobs" bzImage headers >"$log" 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null; do
	for _ in $(seq 30); do
		sleep 1
		kill -0 $pid 2>/dev/null || break
	done
	if kill -0 $pid 2>/dev/null; then
		echo "$name: still building, $(( $(date +%s) - start ))s, $(grep -c '^  CC ' "$log" || true) files compiled so far"
	fi
done
if ! wait $pid; then
	echo "$name: build failed; last lines of $log:" >&2
	grep -E 'error|Error' "$log" | head -n 20 >&2 || true
	tail -n 20 "$log" >&2
	exit 1
fi
if grep -q ' warning: ' "$log"; then
	echo "$name: compiler warnings:"
	grep ' warning: ' "$log" | sort -u | head -n 20
fi
# ccache's calls count every use of the compiler (linker scripts and
# asm-offsets too), and another build on the machine meanwhile
hits=
[ "$cc" = gcc ] || hits="; ccache: $(ccache --print-stats | awk -F'\t' '
	$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
	$1 == "cache_miss" { m += $2 }
	END { printf "%d calls hit, %d missed", h, m }')"
echo "$name: $out/arch/x86/boot/bzImage ($(( $(date +%s) - start ))s, $(grep -c '^  CC ' "$log" || true) files compiled$hits)"
