#!/usr/bin/env bash
# make profile: where the patched kernel's extra instructions go. Runs
# tmpfs_bench (one repetition of every workload) on the baseline and on
# the patched kernel under QEMU -icount with a TCG plugin that counts the kernel instructions each
# translation block executes (scripts/measure/insn_profile.c), then
# prints the functions whose instruction counts differ most between the
# two.
#
# CONFIG is a guest configuration of tmpfs_bench (plain, limit1, nest8,
# size, ...), run on both kernels; or a label of make bench whose kernel
# is the patched one (patched, notmpfs, limit-depth8, ...:
# scripts/measure/bench-configs.sh): its guest configuration and command line on
# the patched kernel, those of its reference on the baseline, the pair
# make bench divides.
#
# The plugin is built against qemu-plugin.h of the installed QEMU's
# source package (apt-get source, from the machine's Debian mirror with a
# deb-src entry added for it).
#   usage: profile.sh --kernel BZIMAGE --baseline-kernel BZIMAGE --initrd CPIO
#                     --outdir DIR [--config CONFIG] [--timeout SECONDS]
set -euo pipefail
patched= baseline= initrd= out= config=plain watchdog=1800
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --kernel=patched --baseline-kernel=baseline --initrd=initrd --outdir=out \
	--config=config --timeout=watchdog -- "$@"
no_args
[ -n "$patched" ] && [ -n "$baseline" ] && [ -n "$initrd" ] && [ -n "$out" ] || usage
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")

# what each kernel boots with: "GUEST_CONFIG CMDLINE" (CMDLINE - for none)
. "$here/bench-configs.sh"
bench_run() {	# the runs=() line of a label
	local run
	for run in "${runs[@]}"; do
		[ "${run%% *}" = "$1" ] && { echo "$run"; return 0; }
	done
	return 1
}
boot_patched="$config -" boot_baseline="$config -"
if run=$(bench_run "$config") && [ "$(echo "$run" | cut -d' ' -f2)" = patched ]; then
	read -r _ _ guest cmdline ref <<< "$run"
	boot_patched="$guest $cmdline"
	read -r _ _ guest cmdline _ <<< "$(bench_run "$ref")"
	boot_baseline="$guest $cmdline"
fi
mkdir -p "$out"
out=$(realpath "$out")

# qemu-plugin.h of the QEMU that runs the guests
src_version=$(dpkg-query -W -f='${source:Version}' qemu-system-x86)
header=$( { find "$out/qemu-src" -path '*/include/qemu/qemu-plugin.h' 2>/dev/null || true; } | sed -n 1p)
if [ -z "$header" ] || ! grep -qxF "$src_version" "$out/qemu-src/version" 2>/dev/null; then
	"$top/scripts/image/deb-src.sh" qemu profile
	echo "profile: downloading the source of qemu $src_version (23 MB)"
	rm -rf "$out/qemu-src"
	mkdir -p "$out/qemu-src"
	(cd "$out/qemu-src" && apt-get source --download-only -qq "qemu=$src_version" 2>/dev/null)
	tar -C "$out/qemu-src" -xJf "$out/qemu-src"/qemu_*.orig.tar.xz \
		--wildcards '*/include/qemu/qemu-plugin.h'
	echo "$src_version" > "$out/qemu-src/version"
	header=$(find "$out/qemu-src" -path '*/include/qemu/qemu-plugin.h' | sed -n 1p)
fi
gcc -shared -fPIC -O2 -Wall -Werror -I"$(dirname "$header")" \
	-o "$out/insn_profile.so" "$here/insn_profile.c"

for which in baseline patched; do
	kernel=$patched boot=$boot_patched
	[ $which = baseline ] && kernel=$baseline boot=$boot_baseline
	read -r guest cmdline <<< "$boot"
	append=
	[ "$cmdline" = - ] || append=" $cmdline"
	echo "profile: $which kernel${append:+ ($cmdline)}, tmpfs_bench $guest, one repetition under -icount"
	"$top/scripts/vm/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode bench \
		--logdir "$out/$which" --timeout "$watchdog" --icount \
		--plugin "$out/insn_profile.so,out=$out/$which.tsv" \
		--append "harness.bench=$guest harness.reps=1$append" > /dev/null
	cp "$(dirname "$kernel")/../../../System.map" "$out/$which.map"
done

echo "profile: ns/op (= instructions under -icount) of each workload, baseline and patched"
paste <(grep -E '^bench: .* runs 1 ' "$out/baseline/results.log" | awk '{print $3, $7}') \
      <(grep -E '^bench: .* runs 1 ' "$out/patched/results.log" | awk '{print $7}') |
	awk '{ printf "  %-11s %12.0f %12.0f  %+.2f%%\n", $1, $2, $3, ($3 / $2 - 1) * 100 }'
echo "profile: the kernel functions whose instruction counts differ most (whole run);"
echo "profile: calls = runs of the function's first block, per call = instructions / calls"
printf '  %13s %13s %13s %10s %10s %9s  %s\n' baseline patched difference calls calls "per call" function
"$here/insn-profile.sh" diff "$out/baseline.map" "$out/baseline.tsv" \
	"$out/patched.map" "$out/patched.tsv" 30 |
	awk '{ pc = $4 ? $1 / $4 : 0; if ($5) pc = $2 / $5
	       printf "  %13d %13d %+13d %10d %10d %9.1f  %s\n", $1, $2, $3, $4, $5, pc, $6 }'
