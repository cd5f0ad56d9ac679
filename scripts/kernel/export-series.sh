#!/usr/bin/env bash
# Regenerate patches/ from the kernel tree's commits base..work: one
# git format-patch file per commit (subject prefix [PATCH vN] from
# patches/version), the cover letter 0000-cover-letter.patch
# with the subject (first line) and text of patches/cover-letter.txt, and
# patches/series listing the patches in order.
#   usage: export-series.sh TREE PATCHDIR
set -euo pipefail
tree=$1 patchdir=$(realpath "$2")
cover=$patchdir/cover-letter.txt
[ -f "$cover" ] || { echo "export-series: $cover is missing" >&2; exit 1; }
if [ -n "$(git -C "$tree" status --porcelain --untracked-files=no)" ]; then
	echo "export-series: $tree has uncommitted changes; commit them first" >&2
	exit 1
fi
n=$(git -C "$tree" rev-list --count base..work)
[ "$n" -gt 0 ] || { echo "export-series: no commits on work after base" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# patches/version: the series' version, v1 when absent ([PATCH v2 n/m])
version=1
[ -f "$patchdir/version" ] && version=$(tr -d ' \n' < "$patchdir/version")
[[ $version =~ ^[0-9]+$ ]] || { echo "export-series: $patchdir/version must be a number" >&2; exit 1; }
prefix=PATCH
[ "$version" -gt 1 ] && prefix="PATCH v$version"
git -C "$tree" format-patch -q --cover-letter --subject-prefix="$prefix" -o "$out" base..work
subject=$(head -n 1 "$cover")
python3 - "$out/0000-cover-letter.patch" "$cover" "$subject" <<'PY'
import sys
path, cover, subject = sys.argv[1:]
text = open(path).read()
blurb = open(cover).read().split('\n', 1)[1].strip('\n')
text = text.replace('*** SUBJECT HERE ***', subject).replace('*** BLURB HERE ***', blurb)
open(path, 'w').write(text)
PY
rm -f "$patchdir"/0*.patch
mv "$out"/*.patch "$patchdir"/
{
	echo "# Patches applied, in order, to linux-source-6.12 by scripts/kernel/apply-series.sh."
	echo "# One file name per line; lines starting with # are comments."
	(cd "$patchdir" && ls 0*.patch | grep -v '^0000-cover-letter.patch$')
} > "$patchdir/series"
echo "export-series: $n patches and the cover letter in $patchdir"
