#!/usr/bin/env bash
# Reset the kernel tree to tag "base" and apply patches/series with git am,
# which refuses any patch that does not apply exactly (zero fuzz).
#   usage: apply-series.sh TREE PATCHDIR
set -euo pipefail
tree=$1 patchdir=$(realpath "$2")

patches=()
while read -r line; do
	line=${line%%#*}
	line=$(echo "$line" | tr -d '[:space:]')
	[ -n "$line" ] || continue
	if [ ! -f "$patchdir/$line" ]; then
		echo "apply-series: $patchdir/$line is named in series but missing" >&2
		exit 1
	fi
	patches+=("$patchdir/$line")
done < "$patchdir/series"

cd "$tree"
git am --abort >/dev/null 2>&1 || true

# Already there (the patches were exported from this very tree)? Then
# leave the files, and their timestamps, alone: nothing to recompile.
index=$(mktemp)
trap 'rm -f "$index"' EXIT
if GIT_INDEX_FILE=$index git read-tree base &&
	{ [ ${#patches[@]} -eq 0 ] || GIT_INDEX_FILE=$index git apply --cached "${patches[@]}" 2>/dev/null; } &&
	[ "$(GIT_INDEX_FILE=$index git write-tree)" = "$(git rev-parse 'HEAD^{tree}')" ] &&
	[ "$(git rev-parse --abbrev-ref HEAD)" = work ] &&
	git diff --quiet HEAD && [ "$(git rev-list --count base..HEAD)" -eq ${#patches[@]} ]; then
	echo "apply-series: the tree already has the ${#patches[@]} patches of the series"
	exit 0
fi

git checkout -q work 2>/dev/null || git checkout -q -b work
git reset -q --hard base
if [ ${#patches[@]} -eq 0 ]; then
	echo "apply-series: patches/series is empty; the tree is the base"
	exit 0
fi
echo "apply-series: applying ${#patches[@]} patches with git am"
if ! git am -q --no-3way "${patches[@]}"; then
	echo "apply-series: a patch does not apply cleanly to base; see above" >&2
	git am --abort >/dev/null 2>&1 || true
	exit 1
fi
git log --oneline base..HEAD | sed 's/^/apply-series:   /'
