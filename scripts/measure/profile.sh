#!/usr/bin/env bash
# make profile: where the patched kernel's extra instructions go. Runs
# tmpfs_bench (one repetition of every workload, after its warm-up one,
# both counted, with the boot) on the baseline and on
# the patched kernel under QEMU -icount with a TCG plugin that counts the
# kernel instructions, and the locked ones (LOCK-prefixed, or XCHG with
# memory: the atomics that take a shared cache line), each translation
# block executes (scripts/measure/insn_profile.c), then prints the
# functions whose instruction counts differ most between the two.
#
# CONFIG is a guest configuration of tmpfs_bench (plain, limit1, nest8,
# limit8, size, ...), run on both kernels; or a label of make bench whose
# kernel is the patched one (patched, notmpfs, limit-depth8, ...:
# scripts/measure/bench-configs.sh): its guest configuration and command
# line on the patched kernel, those of its reference on the baseline, the
# pair make bench divides.
#
# --workloads W,... (or PROFILE_WORKLOADS=W,...; with it CONFIG may be a
# comma-separated list): per workload instead of the whole run. (limit1
# and limit8 write memory.tmpfs.max, which the baseline kernel lacks: for
# them give the labels limit-depth1, limit-depth8.) A boot
# runs one warm-up repetition and then harness.reps timed ones, after the
# boot and the setup (cgroups, mounts), so a boot with reps=1 runs the
# workload twice. Each kernel is booted twice per workload and CONFIG,
# with harness.workloads=W and harness.reps=1, then 3, and the counts of
# the first boot are subtracted from the second's: what is left is two
# timed repetitions, without the boot, the setup, the warm-up and the
# shutdown; divided by 2 and by tmpfs_bench's OPS, it is per op (4 boots
# per workload and CONFIG). Printed per op: kernel instructions, locked
# instructions, calls of the page_counter_* functions (runs of their
# first block: a tail call or a call between them counts too, e.g.
# page_counter_uncharge calls page_counter_cancel for each level), for
# each kernel and patched - baseline; then the locked instructions the
# baseline kernel executes per op, all and in the memcg code (what
# memory.current's charge pays), beside what the patched kernel adds
# (what memory.tmpfs costs); then each page_counter_* function. What is
# left of the boots' own background (timers, RCU, kworkers) differs
# between two boots by a little: read the last digits as noise.
#
# The guests boot with nokaslr: the plugin's addresses are System.map's.
# The kernels and their System.map are copied to DIR first, so a kernel
# rebuilt meanwhile does not mix into the run. The plugin is built
# against qemu-plugin.h of the installed QEMU's source package
# (apt-get source, from the machine's Debian mirror with a deb-src entry
# added for it).
#   usage: profile.sh --kernel BZIMAGE --baseline-kernel BZIMAGE --initrd CPIO
#                     --outdir DIR [--config CONFIG] [--workloads W,...] [--timeout SECONDS]
set -euo pipefail
patched= baseline= initrd= out= config=plain watchdog=1800 workloads=${PROFILE_WORKLOADS:-}
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --kernel=patched --baseline-kernel=baseline --initrd=initrd --outdir=out \
	--config=config --workloads=workloads --timeout=watchdog -- "$@"
no_args
[ -n "$patched" ] && [ -n "$baseline" ] && [ -n "$initrd" ] && [ -n "$out" ] || usage
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
all_workloads="append mmap fallocate smallfiles emptyfiles huge swap parallel remotefree alternate"
all_workloads+=" shmseg edquot tmpfsread extread"
if [ -z "$workloads" ] && [[ $config == *,* ]]; then
	echo "profile: several configurations want --workloads" >&2
	exit 2
fi
for w in ${workloads//,/ }; do
	[[ " $all_workloads " == *" $w "* ]] ||
		{ echo "profile: unknown workload '$w' ($all_workloads)" >&2; exit 2; }
done

# what each kernel boots with, for CONFIG $1: boot_patched and
# boot_baseline, "GUEST_CONFIG CMDLINE" (CMDLINE - for none)
. "$here/bench-configs.sh"
bench_run() {	# the runs=() line of a label
	local run
	for run in "${runs[@]}"; do
		[ "${run%% *}" = "$1" ] && { echo "$run"; return 0; }
	done
	return 1
}
boots_of() {
	local run guest cmdline ref
	boot_patched="$1 -" boot_baseline="$1 -"
	if run=$(bench_run "$1") && [ "$(echo "$run" | cut -d' ' -f2)" = patched ]; then
		read -r _ _ guest cmdline ref <<< "$run"
		boot_patched="$guest $cmdline"
		read -r _ _ guest cmdline _ <<< "$(bench_run "$ref")"
		boot_baseline="$guest $cmdline"
	fi
}
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

# the kernels as they are now, each with its System.map
for which in baseline patched; do
	kernel=$patched
	[ $which = baseline ] && kernel=$baseline
	cp "$kernel" "$out/$which.bzImage"
	cp "$(dirname "$kernel")/../../../System.map" "$out/$which.map"
done

args_of() {	# " (CMDLINE)", or nothing for -
	[ "$1" = - ] || echo " ($1)"
}

# profile_boot WHICH BOOT REPS WORKLOADS DIR: one boot of kernel WHICH as
# BOOT ("GUEST CMDLINE"); its results in DIR/results.log, the plugin's
# counts in DIR/profile.tsv
profile_boot() {
	local which=$1 guest cmdline append= only=
	read -r guest cmdline <<< "$2"
	[ "$cmdline" = - ] || append=" $cmdline"
	[ -z "$4" ] || only=" harness.workloads=$4"
	"$top/scripts/vm/boot.sh" --kernel "$out/$which.bzImage" --initrd "$initrd" --mode bench \
		--logdir "$5" --timeout "$watchdog" --icount \
		--plugin "$out/insn_profile.so,out=$5/profile.tsv" \
		--append "nokaslr harness.bench=$guest harness.reps=$3$only$append" > /dev/null ||
		{ echo "profile: the $which kernel's boot failed: $5/results.log" >&2; exit 1; }
}

if [ -z "$workloads" ]; then
	boots_of "$config"
	for which in baseline patched; do
		boot=$boot_patched
		[ $which = baseline ] && boot=$boot_baseline
		read -r guest cmdline <<< "$boot"
		echo "profile: $which kernel$(args_of "$cmdline"), tmpfs_bench $guest, one repetition under -icount"
		profile_boot $which "$boot" 1 "" "$out/$which"
		mv "$out/$which/profile.tsv" "$out/$which.tsv"
	done

	echo "profile: ns/op (= instructions under -icount) of each workload, baseline and patched"
	paste <(grep -E '^bench: .* runs 1 ' "$out/baseline/results.log" | awk '{print $3, $7}') \
	      <(grep -E '^bench: .* runs 1 ' "$out/patched/results.log" | awk '{print $7}') |
		awk '{ printf "  %-11s %12.0f %12.0f  %+.2f%%\n", $1, $2, $3, ($3 / $2 - 1) * 100 }'
	echo "profile: the kernel functions whose instruction counts differ most (whole run);"
	echo "profile: calls = runs of the function's first block, per call = instructions / calls,"
	echo "profile: locked = locked instructions (LOCK prefix, XCHG with memory), patched - baseline"
	printf '  %13s %13s %13s %10s %10s %9s %9s  %s\n' baseline patched difference calls calls \
		"per call" locked function
	"$here/insn-profile.sh" diff "$out/baseline.map" "$out/baseline.tsv" \
		"$out/patched.map" "$out/patched.tsv" 30 |
		awk '{ pc = $4 ? $1 / $4 : 0; if ($5) pc = $2 / $5
		       printf "  %13d %13d %+13d %10d %10d %9.1f %+9d  %s\n", $1, $2, $3, $4, $5, pc,
			      $7 - $6, $8 }'
	exit 0
fi

# per workload: boots with reps=$lo and reps=$hi, the difference divided by
# ($hi - $lo) * OPS
lo=1 hi=3
pw=$out/per-workload
for c in ${config//,/ }; do
	boots_of "$c"
	for w in ${workloads//,/ }; do
		for which in baseline patched; do
			boot=$boot_patched
			[ $which = baseline ] && boot=$boot_baseline
			read -r guest cmdline <<< "$boot"
			for reps in $lo $hi; do
				echo "profile: $c $w: $which kernel$(args_of "$cmdline"), tmpfs_bench $guest, reps=$reps under -icount"
				d=$pw/$c/$w/$which-reps$reps
				rm -rf "$d"
				profile_boot $which "$boot" $reps $w "$d"
				"$here/insn-profile.sh" funcs "$out/$which.map" "$d/profile.tsv" > "$d/funcs"
			done
		done
	done
done

# per_op DIR WHICH: "OPS INSNS LOCKED PC_CALLS MEMCG_LOCKED" per op, then
# "FUNCTION CALLS LOCKED" per op of each page_counter_* function run
memcg_code='mem_cgroup|memcg|^page_counter_|obj_cgroup|^(consume|refill|drain)_stock$|^uncharge_(batch|folio)$|^commit_charge$'
per_op() {
	local ops n
	ops=$(awk -v w="$(basename "$1")" '$1 == "bench:" && $3 == w && $4 == "rep" { print $7 }' \
		"$1/$2-reps$hi/results.log" | sort -u)
	n=$(echo "$ops" | wc -w)
	[ "$n" = 1 ] && [ "$ops" -gt 0 ] ||
		{ echo "profile: no single OPS in $1/$2-reps$hi/results.log" >&2; exit 1; }
	awk -v div=$(( (hi - lo) * ops )) -v ops="$ops" -v re="$memcg_code" '
		FNR == 1 { s = NR == 1 ? -1 : 1 }	# the reps=$lo boot, then the reps=$hi one
		{ I += s * $1; L += s * $3
		  if ($4 ~ /^page_counter_/) { P += s * $2; pc[$4] += s * $2; pl[$4] += s * $3 }
		  if ($4 ~ re) M += s * $3 }
		END { printf "%d %.2f %.3f %.4f %.3f\n", ops, I / div, L / div, P / div, M / div
		      for (f in pc) if (pc[f] || pl[f]) printf "%s %.4f %.3f\n", f, pc[f] / div, pl[f] / div }' \
		"$1/$2-reps$lo/funcs" "$1/$2-reps$hi/funcs"
}

declare -A what=(
	[append]="an op: a 4 KiB page appended (then the file unlinked)"
	[mmap]="an op: a 4 KiB page faulted in through MAP_SHARED"
	[fallocate]="an op: a 2 MiB fallocate or hole punch, 512 small pages (2 ops a 2 MiB)"
	[smallfiles]="an op: a file created, 4 KiB written (one page), closed, unlinked"
	[emptyfiles]="an op: an empty file created, closed, unlinked (no page)"
	[huge]="an op: a 2 MiB write on huge=always, a huge page"
	[swap]="an op: a 4 KiB page written, reclaimed to zram, read back"
	[parallel]="an op: a 4 KiB page appended, by either of two writers in sibling cgroups"
	[remotefree]="an op: a 4 KiB page freed by a task of a sibling cgroup on the other CPU"
	[alternate]="an op: a 4 KiB page appended, two cgroups in turn on one CPU"
	[shmseg]="an op: a 64 KiB /dev/shm segment opened, mapped, written, unlinked"
	[edquot]="an op: a 4 KiB write failing at the limit (ENOSPC at size= on the baseline)"
	[tmpfsread]="an op: a 4 KiB page read from tmpfs's page cache"
	[extread]="an op: a 4 KiB page read from ext2's page cache"
)
echo
echo "profile: per op, boots with reps=$hi minus boots with reps=$lo, divided by $((hi - lo)) * OPS"
for w in ${workloads//,/ }; do
	printf '  %-11s %s\n' "$w" "${what[$w]}"
done
echo "  locked: LOCK-prefixed instructions and XCHG with memory, kernel only"
echo "  pc calls: runs of the first block of page_counter_* functions"
printf '  %-11s %-13s %-16s %6s %11s %10s %10s\n' workload config kernel OPS insns/op locked/op "pc calls/op"
for c in ${config//,/ }; do
	for w in ${workloads//,/ }; do
		per_op "$pw/$c/$w" baseline > "$pw/$c/$w/baseline.per-op"
		per_op "$pw/$c/$w" patched > "$pw/$c/$w/patched.per-op"
		paste -d' ' <(sed -n 1p "$pw/$c/$w/baseline.per-op") <(sed -n 1p "$pw/$c/$w/patched.per-op") |
			awk -v w=$w -v c=$c '
			{ f = "  %-11s %-13s %-16s %6d %11.1f %10.2f %10.4f\n"
			  printf f, w, c, "baseline", $1, $2, $3, $4
			  printf f, w, c, "patched", $6, $7, $8, $9
			  printf "  %-11s %-13s %-16s %6s %+11.1f %+10.2f %+10.4f\n", w, c,
				 "patched-baseline", "", $7 - $2, $8 - $3, $9 - $4 }'
	done
done

echo
echo "profile: locked instructions per op: what the baseline kernel executes (all, and in the memcg"
echo "profile: code: memory.current's charge and uncharge) against what the patched kernel adds"
echo "  memcg code: functions matching /$memcg_code/"
printf '  %-11s %-13s %14s %14s %18s %18s\n' workload config "baseline all" "baseline memcg" \
	"patched-base all" "patched-base memcg"
for c in ${config//,/ }; do
	for w in ${workloads//,/ }; do
		paste -d' ' <(sed -n 1p "$pw/$c/$w/baseline.per-op") <(sed -n 1p "$pw/$c/$w/patched.per-op") |
			awk -v w=$w -v c=$c '{ printf "  %-11s %-13s %14.2f %14.2f %+18.2f %+18.2f\n",
						w, c, $3, $5, $8 - $3, $10 - $5 }'
	done
done

echo
echo "profile: each page_counter_* function: calls per op, and locked instructions per op in it"
for c in ${config//,/ }; do
	for w in ${workloads//,/ }; do
		for which in baseline patched; do
			printf '  %-11s %-13s %-8s' $w $c $which
			sed 1d "$pw/$c/$w/$which.per-op" | sort |
				awk '{ printf " %s %s/op (%s locked)", substr($1, 14), $2, $3 } END { print "" }'
		done
	done
done

echo
echo "profile: per op, the 20 kernel functions whose instructions differ most, patched - baseline"
echo "profile: (the page allocator's and the boots' own background differ between two boots too)"
for c in ${config//,/ }; do
	for w in ${workloads//,/ }; do
		read -r ops _ < "$pw/$c/$w/baseline.per-op"	# per_op()'s first line
		printf '  %-11s %-13s %11s %11s %10s  %s\n' workload config baseline patched difference function
		awk -v div=$(( (hi - lo) * ops )) '
			FNR == 1 { f++ }	# baseline lo, baseline hi, patched lo, patched hi
			{ v = (f % 2 ? -$1 : $1); if (f <= 2) b[$4] += v; else p[$4] += v; seen[$4] = 1 }
			END { for (k in seen) { d = (p[k] - b[k]) / div
				printf "%f %.1f %.1f %+.1f %s\n", d < 0 ? -d : d, b[k] / div, p[k] / div, d, k } }' \
			"$pw/$c/$w/baseline-reps$lo/funcs" "$pw/$c/$w/baseline-reps$hi/funcs" \
			"$pw/$c/$w/patched-reps$lo/funcs" "$pw/$c/$w/patched-reps$hi/funcs" |
			sort -gr | head -n 20 |
			awk -v w=$w -v c=$c '{ printf "  %-11s %-13s %11s %11s %10s  %s\n", w, c, $2, $3, $4, $5 }'
	done
done
