#!/usr/bin/env bash
# make bench: qemu-boot/harness/tmpfs_bench under each configuration, the
# patched and the baseline kernel side by side, in one run.
#
# Each configuration boots its kernel under QEMU TCG with
# -icount shift=0,sleep=off: guest time then counts the instructions the
# guest executes, so the ratio of two kernels measures the extra work of
# the code path, free of host noise (and of the host's load). In a boot
# each workload runs REPS times (after one warm-up) and the boot keeps its
# minimum ns/op.
#
# The statistics are paired. A configuration's figures are divided by
# those of its reference (bench-configs.sh) booted in the same round:
# ROUNDS rounds, each booting every reference followed by the
# configurations it is the reference of (baseline, patched, ..., then
# baseline-depth8, limit-depth8), every other round in the reverse order
# (ABBA), so that what drifts with time does not favour either member of a
# pair. Round r gives each configuration and workload the ratio
# (its boot minimum in round r) / (its reference's boot minimum in round r);
# the report is the median of these per-round ratios and their range
# (smallest..largest). baseline-aa, the baseline kernel divided by the
# baseline, is the A/A control: its median and range show how far two
# boots of one kernel disagree, the resolution of every other ratio.
#
# Writes OUT/boots.txt (LABEL ROUND WORKLOAD REPS MIN, a line per boot and
# workload), OUT/results.csv (every boot's minimum, then the per-round
# ratios, then the summary: median, smallest and largest ratio) and
# OUT/table.txt, prints the table, and OUT/ratios.svg (the medians, with
# the range as error bars) when gnuplot is there. The numbers are
# reported, not asserted. ROUNDS=0 redoes only the report, from
# OUT/boots.txt.
#   usage: bench.sh --kernel BZIMAGE --baseline-kernel BZIMAGE --initrd CPIO
#                   --outdir DIR [--rounds N] [--reps N] [--timeout SECONDS]
set -uo pipefail
patched= baseline= initrd= out= rounds=5 reps=5 watchdog=1800
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

# The boot order of a round: each reference, then the configurations it is
# the reference of, those that are references themselves last, each one
# followed by its own (baseline, patched, ..., baseline-depth8,
# limit-depth8). A configuration whose reference is not in the run starts
# a group of its own.
declare -A run_of=() is_ref=()
for run in "${runs[@]}"; do
	read -r label _ _ _ ref <<< "$run"
	run_of[$label]=$run
	is_ref[$ref]=1
done
order=()
add_group() {	# LABEL: it, then the configurations it is the reference of
	local run label ref nested=()
	order+=("$1")
	for run in "${runs[@]}"; do
		read -r label _ _ _ ref <<< "$run"
		[ "$ref" = "$1" ] || continue
		if [ -n "${is_ref[$label]:-}" ]; then nested+=("$label"); else order+=("$label"); fi
	done
	for label in "${nested[@]}"; do add_group "$label"; done
}
for run in "${runs[@]}"; do
	read -r label _ _ _ ref <<< "$run"
	if [ "$ref" = - ] || [ -z "${run_of[$ref]:-}" ]; then add_group "$label"; fi
done

if [ "$rounds" -gt 0 ]; then
	: > "$out/boots.txt"
	total=$((rounds * ${#order[@]})) i=0
	for round in $(seq "$rounds"); do
		# ABBA: the odd rounds in order, the even ones reversed
		this=("${order[@]}")
		if [ $((round % 2)) -eq 0 ]; then
			this=()
			for ((k = ${#order[@]} - 1; k >= 0; k--)); do this+=("${order[k]}"); done
		fi
		for label in "${this[@]}"; do
			read -r _ which config cmdline _ <<< "${run_of[$label]}"
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

# boots.txt: LABEL ROUND WORKLOAD REPS MIN; runs: LABEL KERNEL CONFIG CMDLINE REFERENCE
awk -v out="$out/results.csv" -v table="$out/table.txt" -v svgdata="$out/ratios.dat" \
	-v runs="$(printf '%s\n' "${runs[@]}")" '
function median(a, n,    i, j, t) {	# sorts a[1..n]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
BEGIN {
	n = split(runs, r, "\n")
	for (i = 1; i <= n; i++) {
		split(r[i], f, " ")
		order[i] = f[1]; ref[f[1]] = f[5]; boot[f[1]] = f[2] " " f[3] " " f[4]
	}
	nl = n
	print "workload,config,round,reps,min_ns" > out
}
{
	print $3 "," $1 "," $2 "," $4 "," $5 > out
	ns[$1, $2, $3] = $5
	if (!($3 in wseen)) { wseen[$3] = 1; worder[++nw] = $3 }
	if (!($2 in rseen)) { rseen[$2] = 1; rounds[++nr] = $2 + 0 }
}
END {
	median(rounds, nr)	# sorts the rounds
	print "" > out
	print "workload,config,round,reference,ratio" > out
	for (i = 1; i <= nw; i++) {
		wl = worder[i]
		for (l = 1; l <= nl; l++) {
			c = order[l]; rf = ref[c]
			if (rf == "-") continue
			for (k = 1; k <= nr; k++) {
				rd = rounds[k]
				if (!((c, rd, wl) in ns) || !((rf, rd, wl) in ns) || ns[rf, rd, wl] <= 0) continue
				v = ns[c, rd, wl] / ns[rf, rd, wl]
				printf "%s,%s,%d,%s,%.6f\n", wl, c, rd, rf, v > out
				cnt[c, wl]++; vals[c, wl, cnt[c, wl]] = v
			}
		}
	}
	print "" > out
	print "workload,config,rounds,median_ratio,min_ratio,max_ratio,reference" > out
	maxn = 0; ncols = 0
	for (l = 1; l <= nl; l++) {
		c = order[l]
		if (ref[c] == "-") continue
		for (i = 1; i <= nw; i++) if ((c, worder[i]) in cnt) break
		if (i <= nw) { cols[++ncols] = c; cw = length(c) > cw ? length(c) : cw }
	}
	for (i = 1; i <= nw; i++) {
		wl = worder[i]
		for (j = 1; j <= ncols; j++) {
			c = cols[j]
			m = cnt[c, wl] + 0
			if (m == 0) { cell[c, wl] = "-"; continue }
			delete a
			for (k = 1; k <= m; k++) a[k] = vals[c, wl, k]
			med[c, wl] = median(a, m)
			printf "%s,%s,%d,%.6f,%.6f,%.6f,%s\n", wl, c, m, med[c, wl], a[1], a[m], ref[c] > out
			cell[c, wl] = sprintf("%.4f [%.4f..%.4f]", med[c, wl], a[1], a[m])
			rmin[c, wl] = a[1]; rmax[c, wl] = a[m]; num[c, wl] = m
			if (m > maxn) maxn = m
		}
		# the first column: the first configuration, median of its boot minima
		delete a; m = 0
		for (k = 1; k <= nr; k++) if ((order[1], rounds[k], wl) in ns) a[++m] = ns[order[1], rounds[k], wl]
		base[wl] = m ? sprintf("%.0f", median(a, m)) : "-"
	}
	printf "median of per-round paired ratios to the reference [min..max], %d round%s\n",
		maxn, maxn == 1 ? "" : "s" > table
	# columns in blocks, one under the other, to keep the lines within 100
	bh = order[1] " ns/op"; bw = length(bh)
	for (i = 1; i <= nw; i++) if (length(base[worder[i]]) > bw) bw = length(base[worder[i]])
	ww = 10; for (i = 1; i <= nw; i++) if (length(worder[i]) > ww) ww = length(worder[i])
	cellw = 23; if (cw > cellw) cellw = cw
	per = int((100 - ww - 1 - bw) / (cellw + 2)); if (per < 1) per = 1
	for (b = 1; b <= ncols; b += per) {
		print "" > table
		line = sprintf("%-" ww "s %" bw "s", "workload", bh)
		for (j = b; j < b + per && j <= ncols; j++) line = line sprintf("  %-" cellw "s", cols[j])
		sub(/ +$/, "", line); print line > table
		for (i = 1; i <= nw; i++) {
			wl = worder[i]
			line = sprintf("%-" ww "s %" bw "s", wl, base[wl])
			for (j = b; j < b + per && j <= ncols; j++) line = line sprintf("  %-" cellw "s", cell[cols[j], wl])
			sub(/ +$/, "", line); print line > table
		}
	}
	print "" > table
	# the references: the most common one, then the exceptions (or each
	# one, when no two columns share one)
	for (j = 1; j <= ncols; j++) if (++nref[ref[cols[j]]] > best) { best = nref[ref[cols[j]]]; common = ref[cols[j]] }
	line = ""
	for (j = 1; j <= ncols; j++)
		if (best < 2 || ref[cols[j]] != common) line = line sprintf(", %s to %s", cols[j], ref[cols[j]])
	if (ncols == 0) print "no ratios: no configuration has its reference in the boots" > table
	else if (best < 2) print "references: " substr(line, 3) > table
	else print "references: " substr(line, 3) (line == "" ? "every one to " : ", every other one to ") common > table
	for (j = 1; j <= ncols; j++)
		if (boot[cols[j]] == boot[ref[cols[j]]])
			print cols[j] ": the A/A control, " ref[cols[j]] " booted again and divided by itself" > table
	line = ""
	for (i = 1; i <= nw; i++) for (j = 1; j <= ncols; j++)
		if (cell[cols[j], worder[i]] != "-" && num[cols[j], worder[i]] < maxn)
			line = line sprintf(" %s/%s (%d)", worder[i], cols[j], num[cols[j], worder[i]])
	if (line != "") print "fewer rounds:" line > table
	labels = "labels:"
	for (j = 1; j <= ncols; j++) labels = labels " " cols[j]
	print labels > (svgdata ".labels")
	# ratios.dat: WORKLOAD, then MEDIAN MIN MAX of each column (- when none)
	for (i = 1; i <= nw; i++) {
		wl = worder[i]; dat = wl
		for (j = 1; j <= ncols; j++)
			dat = dat ((cols[j], wl) in med ? sprintf(" %.6f %.6f %.6f", med[cols[j], wl], rmin[cols[j], wl], rmax[cols[j], wl]) : " - - -")
		print dat > svgdata
	}
}' "$out/boots.txt"
cat "$out/table.txt"

labels=$(awk 'NR == 1 { $1 = ""; print }' "$out/ratios.dat.labels")
n=$(wc -w <<< "$labels")
if [ "$n" -eq 0 ]; then
	echo "bench: no ratio: no chart"
elif command -v gnuplot > /dev/null; then
	{
		echo "set terminal svg size 1000,520 dynamic font 'sans,11'"
		echo "set output '$out/ratios.svg'"
		echo "set title 'tmpfs cost: median of per-round paired ratios to the reference, bars min..max (QEMU -icount)'"
		echo "set datafile missing '-'"
		echo "set style data histograms; set style histogram errorbars gap 1 lw 1"
		echo "set style fill solid 0.8 border -1; set boxwidth 0.9"
		echo "set ylabel 'ratio to its reference'; set yrange [0.98:*]; set grid ytics"
		echo "set key outside right; set xtics rotate by -30"
		printf "plot "
		i=2
		for l in $labels; do
			printf "'%s' using %d:%d:%d:xtic(1) title '%s'" "$out/ratios.dat" "$i" $((i + 1)) $((i + 2)) "$l"
			i=$((i + 3))
			[ $i -le $((3 * n + 1)) ] && printf ", "
		done
		echo
	} > "$out/ratios.gp"
	gnuplot "$out/ratios.gp" && echo "bench: chart $out/ratios.svg"
else
	echo "bench: gnuplot is missing (make deps installs it): no chart"
fi
echo "bench: $out/results.csv, $out/table.txt"
