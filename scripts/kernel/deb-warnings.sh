#!/usr/bin/env bash
# make deb's compiler warnings against the tree without the series: each
# source file the build warned about (a .c, or the .c that included the
# header warned about) is compiled again in the baseline tree with the
# same config, out of tree in OUT/obj-baseline; a warning is "baseline
# too" when the same file gives the same warning there (line numbers
# aside: the series moves lines), else "series only". Writes
# OUT/warnings-baseline.txt, one line a warning; exits 1 when a warning
# is the series' only, 2 when the check itself failed.
#   usage: deb-warnings.sh --tree SRC --baseline-tree SRC --config DOTCONFIG --log BUILD_LOG --out DIR
set -euo pipefail
trap 'echo "deb-warnings: failed at line $LINENO" >&2; exit 2' ERR
tree= base= config= log= out=
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --tree=tree --baseline-tree=base --config=config --log=log --out=out -- "$@"
no_args
[ -n "$tree" ] && [ -n "$base" ] && [ -n "$config" ] && [ -n "$log" ] && [ -n "$out" ] || usage
base=$(realpath "$base") tree=$(realpath "$tree")
result=$out/warnings-baseline.txt
# warning lines, paths relative to the tree: "file:line:col: warning: text"
norm() { sed -e "s|^$tree/||" -e "s|^$base/||"; }
grep -E '^[^ ]+:[0-9]+:[0-9]+: warning: ' "$log" | norm | sort -u > "$out/warnings.all" || true
if [ ! -s "$out/warnings.all" ]; then
	echo "no compiler warning" > "$result"
	echo "deb: no compiler warning"
	exit 0
fi
# the .c files to compile again: those warned about, and for a warning in
# a header the .c file that included it: the last line of the "In file
# included from" chain before it ("                 from x.c:3:")
files=$(awk '
	function file(s) { sub(/[:,]+$/, "", s); sub(/:[0-9]+$/, "", s); return s }
	/^In file included from / { top = file($5); next }
	/^ +from / { top = file($2); next }
	/^[^ ]+:[0-9]+:[0-9]+: warning: / {
		f = $1; sub(/:.*/, "", f)
		if (f ~ /\.c$/) print f; else if (top ~ /\.c$/) print top
		top = ""
	}' "$log" | norm | sort -u)
obj=$out/obj-baseline
mkdir -p "$obj"
cp "$config" "$obj/.config"
echo "deb: $(wc -l < "$out/warnings.all") compiler warnings in $(echo "$files" | wc -w) files; compiling those in the tree without the series"
env -u MAKEFLAGS make -s -C "$base" O="$obj" LOCALVERSION= olddefconfig prepare > "$out/baseline-prepare.log" 2>&1 ||
	{ echo "deb-warnings: the baseline tree's make prepare failed; see $out/baseline-prepare.log" >&2; exit 2; }
: > "$out/warnings.baseline"
for f in $files; do
	rm -f "$obj/${f%.c}.o"	# compiled again, even if an earlier check compiled it
	env -u MAKEFLAGS make -C "$base" O="$obj" LOCALVERSION= "${f%.c}.o" 2>&1 |
		grep -E '^[^ ]+:[0-9]+:[0-9]+: warning: ' | norm >> "$out/warnings.baseline" || true
done
strip() { sed -E 's/^([^:]+):[0-9]+:[0-9]+: /\1: /'; }
# stripped once, into a file: grep -q on a pipe would stop reading at the
# first match, and pipefail would take its writer's SIGPIPE for a miss
strip < "$out/warnings.baseline" > "$out/warnings.baseline.stripped"
status=0
: > "$result"
while IFS= read -r w; do
	if grep -qxF "$(strip <<< "$w")" "$out/warnings.baseline.stripped"; then
		echo "baseline too: $w" >> "$result"
	else
		echo "series only: $w" >> "$result"
		status=1
	fi
done < "$out/warnings.all"
sed 's/^/deb:   /' "$result"
exit $status
