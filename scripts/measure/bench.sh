#!/usr/bin/env bash
# make bench: qemu-boot/harness/tmpfs_bench under each configuration, the
# patched and the baseline kernel side by side, in one run.
#
# Each configuration boots its kernel under QEMU TCG with
# -icount shift=0,sleep=off: guest time then counts the instructions the
# guest executes, so the ratio of two kernels measures the extra work of
# the code path, free of host noise (and of the host's load). Boots are
# interleaved: ROUNDS rounds, each booting every configuration once in
# turn, so that nothing that drifts with time favours one of them. In a
# boot each workload runs REPS times (after one warm-up) and the boot
# keeps its minimum ns/op; a configuration's figure is the minimum over
# its boots, and its spread is (largest boot minimum - smallest) /
# smallest: how far two boots of one kernel disagree, the resolution of
# the ratios.
#
# Writes OUT/results.csv (one line per configuration, workload and boot,
# then the summary lines) and OUT/table.txt, prints the table, and
# OUT/ratios.svg when gnuplot is there. The numbers are reported, not
# asserted. ROUNDS=0 redoes only the report, from OUT/boots.txt.
#   usage: bench.sh --kernel BZIMAGE --baseline-kernel BZIMAGE --initrd CPIO
#                   --outdir DIR [--rounds N] [--reps N] [--timeout SECONDS]
set -uo pipefail
patched= baseline= initrd= out= rounds=3 reps=5 watchdog=1800
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --kernel=patched --baseline-kernel=baseline --initrd=initrd --outdir=out \
	--rounds=rounds --reps=reps --timeout=watchdog -- "$@"
no_args
[ -n "$patched" ] && [ -n "$baseline" ] && [ -n "$initrd" ] && [ -n "$out" ] || usage
here=$(dirname "$(realpath "$0")")
top=$(dirname "$(dirname "$here")")
mkdir -p "$out"
for n in "$rounds" "$reps"; do
	[[ $n =~ ^[0-9]+$ ]] || { echo "bench: ROUNDS and REPS must be numbers, not '$n'" >&2; exit 2; }
done
if [ "$rounds" -gt 0 ] && [ "$reps" -lt 1 ]; then
	echo "bench: REPS must be at least 1" >&2
	exit 2
fi

# the configurations: runs=("LABEL KERNEL CONFIG CMDLINE REFERENCE" ...)
. "$here/bench-configs.sh"

# BENCH_CONFIGS="LABEL ...": only these configurations (and the references
# their ratios need); BENCH_WORKLOADS=a,b: only these workloads
if [ -n "${BENCH_CONFIGS:-}" ]; then
	known=" $(for run in "${runs[@]}"; do echo -n "${run%% *} "; done)"
	want=" "
	for l in $BENCH_CONFIGS; do
		[[ $known == *" $l "* ]] || { echo "bench: BENCH_CONFIGS: no configuration '$l' (known:$known)" >&2; exit 2; }
		want+="$l "
		for run in "${runs[@]}"; do
			read -r label _ _ _ ref <<< "$run"
			[ "$label" = "$l" ] && [ "$ref" != - ] && want+="$ref "
		done
	done
	kept=()
	for run in "${runs[@]}"; do
		[[ $want == *" ${run%% *} "* ]] && kept+=("$run")
	done
	runs=("${kept[@]}")
fi
workloads=${BENCH_WORKLOADS:-}
if [ -n "$workloads" ] && ! [[ $workloads =~ ^[a-z]+(,[a-z]+)*$ ]]; then
	echo "bench: BENCH_WORKLOADS must be names separated by commas, not '$workloads'" >&2
	exit 2
fi

if [ "$rounds" -gt 0 ]; then
	: > "$out/boots.txt"
	total=$((rounds * ${#runs[@]})) i=0
	for round in $(seq "$rounds"); do
		for run in "${runs[@]}"; do
			read -r label which config cmdline _ <<< "$run"
			kernel=$patched
			[ "$which" = baseline ] && kernel=$baseline
			append="harness.bench=$config harness.reps=$reps${workloads:+ harness.workloads=$workloads}"
			[ "$cmdline" = - ] || append="$append $cmdline"
			i=$((i + 1))
			start=$(date +%s)
			extra=${cmdline#-}
			echo "bench: boot $i of $total: round $round, $label ($which kernel, $config${extra:+ $extra}, $reps repetitions)"
			dir=$out/$label-$round
			"$top/scripts/vm/boot.sh" --kernel "$kernel" --initrd "$initrd" --mode bench \
				--logdir "$dir" --timeout "$watchdog" --icount \
				--append "$append" > /dev/null 2> "$dir.err"
			status=$?
			if [ $status -ne 0 ]; then
				echo "bench: $label, round $round failed (status $status); see $dir/" >&2
				cat "$dir.err" >&2
				grep '^bench: .*: ' "$dir/results.log" | tail -n 3 >&2
				exit 1
			fi
			if [ "$cmdline" != - ] && ! grep -qw -- "$cmdline" "$dir/console.log"; then
				echo "bench: $label, round $round: the console does not show '$cmdline'" >&2
				exit 1
			fi
			# "bench: WORKLOAD icount runs N min MIN median MED max MAX"
			n=$(grep -cE '^bench: [a-z0-9]+ [a-z]+ runs ' "$dir/results.log")
			if [ "$n" -eq 0 ]; then
				echo "bench: $label, round $round: no result in $dir/results.log" >&2
				exit 1
			fi
			grep -E '^bench: [a-z0-9]+ [a-z]+ runs ' "$dir/results.log" |
				awk -v l="$label" -v r="$round" '{ print l, r, $3, $5, $7 }' >> "$out/boots.txt"
			echo "bench: $label, round $round done in $(( $(date +%s) - start ))s"
		done
	done
fi
[ -s "$out/boots.txt" ] || { echo "bench: no $out/boots.txt to report" >&2; exit 1; }

# boots.txt: LABEL ROUND WORKLOAD REPS MIN
refs=$(for run in "${runs[@]}"; do read -r label _ _ _ ref <<< "$run"; echo "$label $ref"; done)
awk -v out="$out/results.csv" -v table="$out/table.txt" -v svgdata="$out/ratios.dat" -v refs="$refs" '
BEGIN {
	n = split(refs, r, "\n")
	for (i = 1; i <= n; i++) { split(r[i], f, " "); ref[f[1]] = f[2]; order[i] = f[1] }
	nl = n
	print "workload,config,round,reps,min_ns" > out
}
{
	key = $1 SUBSEP $3
	print $3 "," $1 "," $2 "," $4 "," $5 > out
	if (!(key in lo) || $5 < lo[key]) lo[key] = $5
	if (!(key in hi) || $5 > hi[key]) hi[key] = $5
	boots[key]++
	if (!($3 in wseen)) { wseen[$3] = 1; worder[++nw] = $3 }
}
END {
	print "" > out
	print "workload,config,boots,min_ns,max_boot_min_ns,spread,reference,ratio" > out
	hdr = sprintf("%-11s", "workload")
	for (l = 2; l <= nl; l++) hdr = hdr sprintf(" %16s", order[l])
	print "ratio of minimum ns/op to the reference configuration (spread across boots)" > table
	print hdr > table
	labels = "labels:"; for (l = 2; l <= nl; l++) labels = labels " " order[l]
	for (i = 1; i <= nw; i++) {
		wl = worder[i]
		line = sprintf("%-11s", wl); dat = wl
		for (l = 1; l <= nl; l++) {
			k = order[l] SUBSEP wl
			rk = ref[order[l]] SUBSEP wl
			spread = lo[k] > 0 ? (hi[k] - lo[k]) / lo[k] : 0
			ratio = (ref[order[l]] != "-" && lo[rk] > 0) ? lo[k] / lo[rk] : 1
			printf "%s,%s,%d,%.1f,%.1f,%.4f,%s,%.4f\n", wl, order[l], boots[k], lo[k], hi[k], spread, ref[order[l]], ratio > out
			if (l == 1) line = sprintf("%-11s", wl " (" sprintf("%.0f", lo[k]) " ns, " sprintf("%.2f", spread * 100) "%)")
			else { line = line sprintf(" %8.4f (%.2f%%)", ratio, spread * 100); dat = dat " " ratio }
		}
		print line > table
		print dat > svgdata
	}
	print "references: limit-depth8 to baseline-depth8, every other one to baseline" > table
	print labels > (svgdata ".labels")
}' "$out/boots.txt"
cat "$out/table.txt"

if command -v gnuplot > /dev/null; then
	labels=$(awk 'NR == 1 { $1 = ""; print }' "$out/ratios.dat.labels")
	n=$(wc -w <<< "$labels")
	{
		echo "set terminal svg size 1000,520 dynamic font 'sans,11'"
		echo "set output '$out/ratios.svg'"
		echo "set title 'tmpfs cost relative to the unpatched kernel (min ns/op, QEMU -icount)'"
		echo "set style data histograms; set style histogram clustered gap 1"
		echo "set style fill solid 0.8 border -1; set boxwidth 0.9"
		echo "set ylabel 'ratio to its reference'; set yrange [0.98:*]; set grid ytics"
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
echo "bench: $out/results.csv, $out/table.txt"
