#!/usr/bin/env bash
# Build every prefix of patches/series (the first patch, the first two,
# ...) in a worktree of its own, so that each commit of the series is
# known to build: bisecting through it never lands on a broken tree.
#   usage: bisect-build.sh --tree TREE --patches DIR --out DIR FRAGMENT...
set -euo pipefail
tree= patchdir= outdir= fragments=()
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --tree=tree --patches=patchdir --out=outdir -- "$@"
fragments=("${ARGS[@]}")
[ -n "$tree" ] && [ -n "$patchdir" ] && [ -n "$outdir" ] || usage
patchdir=$(realpath "$patchdir")
set -- "${fragments[@]}"
here=$(dirname "$(realpath "$0")")
mkdir -p "$outdir"
work=$(realpath -m "$outdir/linux")

mapfile -t patches < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$patchdir/series")
[ ${#patches[@]} -gt 0 ] || { echo "bisect: patches/series is empty"; exit 0; }
if [ ! -d "$work" ]; then
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$work" base
fi
git -C "$work" am --abort >/dev/null 2>&1 || true
git -C "$work" checkout -q --detach base
git -C "$work" reset -q --hard base
for i in "${!patches[@]}"; do
	n=$((i + 1))
	echo "bisect: $n/${#patches[@]}: ${patches[$i]}"
	git -C "$work" am -q --no-3way "$patchdir/${patches[$i]}"
	"$here/build-kernel.sh" --tree "$work" --out "$outdir/kernel" --name "bisect $n/${#patches[@]}" "$@"
done
echo "bisect: every prefix of the series builds"
