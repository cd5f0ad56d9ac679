#!/usr/bin/env bash
# make bench: cgroup-tests/tmpfs_bench under each configuration, the
# patched and the baseline kernel side by side, in one run.
#
# Each configuration boots its kernel under QEMU TCG with
# -icount shift=0,sleep=off: guest time then counts the instructions the
# guest executes, so the ratio of two kernels measures the extra work of
# the code path, free of host noise. Each workload runs REPS times in a
# boot (after one warm-up); configurations are compared by their minimum
# ns/op. A second boot per configuration without -icount gives plain TCG
# times (host wall clock, noisy): a secondary column.
#
# Writes OUT/results.csv and OUT/ratios.svg (gnuplot), prints the table.
# The numbers are reported, not asserted. REPS=0 and TCG_REPS=0 redo only
# the report, from the last run's OUT/summary.txt.
#   usage: bench.sh BZIMAGE BASE_BZIMAGE INITRD OUTDIR REPS TCG_REPS WATCHDOG
set -uo pipefail
patched=$1 baseline=$2 initrd=$3 out=$4 reps=$5 tcg_reps=$6 watchdog=$7
here=$(dirname "$(realpath "$0")")
top=$(dirname "$here")
mkdir -p "$out"

# label  kernel  guest config  (the first is the reference of the ratios;
# "baseline again" checks that identical configurations agree)
runs=(
	"baseline baseline plain"
	"baseline-again baseline plain"
	"patched patched plain"
	"limit-depth1 patched limit1"
	"limit-depth8 patched limit8"
	"baseline-depth8 baseline nest8"
	"usrquota baseline usrquota"
	"size baseline size"
)

[ "$reps" -eq 0 ] && [ "$tcg_reps" -eq 0 ] || : > "$out/summary.txt"
for run in "${runs[@]}"; do
	read -r label which config <<< "$run"
	kernel=$patched
	[ "$which" = baseline ] && kernel=$baseline
	for mode in icount tcg; do
		n=$reps flag=--icount
		[ $mode = tcg ] && n=$tcg_reps flag=
		[ "$n" -gt 0 ] || continue
		start=$(date +%s)
		echo "bench: $label ($which kernel, $config, $mode, $n repetitions)"
		"$top/qemu-boot/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode bench \
			--logdir "$out/$label-$mode" --timeout "$watchdog" $flag \
			--append "harness.bench=$config harness.reps=$n" > /dev/null 2> "$out/$label-$mode.err"
		status=$?
		if [ $status -ne 0 ]; then
			echo "bench: $label ($mode) failed (status $status); see $out/$label-$mode/" >&2
			cat "$out/$label-$mode.err" >&2
			grep '^bench: .*: ' "$out/$label-$mode/results.log" | tail -n 3 >&2
			exit 1
		fi
		grep -E '^bench: [a-z0-9]+ [a-z]+ runs ' "$out/$label-$mode/results.log" |
			sed "s/^bench: [a-z0-9]* /$label $mode /" >> "$out/summary.txt"
		echo "bench: $label ($mode) done in $(( $(date +%s) - start ))s"
	done
done

# summary.txt: LABEL MODE WORKLOAD runs N min MIN median MED max MAX
awk -v out="$out/results.csv" -v svgdata="$out/ratios.dat" '
{ key = $1 SUBSEP $3; w[$3] = 1
  if ($2 == "icount") { runs[key] = $5; mn[key] = $7; md[key] = $9; mx[key] = $11 }
  else tcg[key] = $7
  if (!($1 in seen)) { seen[$1] = 1; order[++nl] = $1 }
  if (!($3 in wseen)) { wseen[$3] = 1; worder[++nw] = $3 } }
END {
	print "workload,config,runs,min_ns,median_ns,max_ns,ratio,tcg_min_ns,tcg_ratio" > out
	printf "%-11s", "ratio (min)" ; for (l = 2; l <= nl; l++) printf " %15s", order[l]; printf "\n"
	for (i = 1; i <= nw; i++) {
		wl = worder[i]; b = mn["baseline" SUBSEP wl]; bt = tcg["baseline" SUBSEP wl]
		printf "%-11s", wl
		line = wl
		for (l = 1; l <= nl; l++) {
			k = order[l] SUBSEP wl
			r = (b > 0) ? mn[k] / b : 0
			rt = (bt > 0 && tcg[k] > 0) ? tcg[k] / bt : 0
			printf "%s,%s,%d,%.3f,%.3f,%.3f,%.4f,%.1f,%.3f\n", wl, order[l], runs[k], mn[k], md[k], mx[k], r, tcg[k], rt > out
			if (l > 1) { printf " %15.4f", r; line = line " " r }
		}
		printf "\n"
		print line > svgdata
	}
	labels = "labels:"; for (l = 2; l <= nl; l++) labels = labels " " order[l]
	print labels > (svgdata ".labels")
}' "$out/summary.txt"

if command -v gnuplot > /dev/null; then
	labels=$(awk 'NR == 1 { $1 = ""; print }' "$out/ratios.dat.labels")
	n=$(wc -w <<< "$labels")
	{
		echo "set terminal svg size 1000,520 dynamic font 'sans,11'"
		echo "set output '$out/ratios.svg'"
		echo "set title 'tmpfs cost relative to the unpatched kernel (min ns/op, QEMU -icount)'"
		echo "set style data histograms; set style histogram clustered gap 1"
		echo "set style fill solid 0.8 border -1; set boxwidth 0.9"
		echo "set ylabel 'ratio to baseline'; set yrange [0.9:*]; set grid ytics"
		echo "set key outside right; set xtics rotate by -30"
		printf "plot "
		i=2
		for l in $labels; do
			printf "'%s' using %d:xtic(1) title '%s'" "$out/ratios.dat" "$i" "$l"
			i=$((i + 1))
			[ $i -le $((n + 1)) ] && printf ", "
		done
		echo
	} > "$out/ratios.gp"
	gnuplot "$out/ratios.gp" && echo "bench: chart $out/ratios.svg"
else
	echo "bench: gnuplot is missing (make deps installs it): no chart"
fi
echo "bench: $out/results.csv"
