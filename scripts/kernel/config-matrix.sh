#!/usr/bin/env bash
# Build the patched tree with CONFIG_MEMCG, CONFIG_SWAP and CONFIG_SHMEM
# each turned off (the series' stubs must hold), each in build/matrix/NAME.
# The fragments are those of the check kernel, minus the options that the
# variant turns off or that depend on them.
#   usage: config-matrix.sh --tree TREE --out DIR FRAGMENT...
set -euo pipefail
tree= outdir= fragments=()
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --tree=tree --out=outdir -- "$@"
fragments=("${ARGS[@]}")
[ -n "$tree" ] && [ -n "$outdir" ] || usage
set -- "${fragments[@]}"
here=$(dirname "$(realpath "$0")")
mkdir -p "$outdir"

# variant: options to drop from the fragments | lines to add
variants=(
	"no-memcg|MEMCG PAGE_COUNTER|# CONFIG_MEMCG is not set"
	"no-swap|SWAP ZRAM ZRAM_BACKEND_LZO ZSMALLOC|# CONFIG_SWAP is not set"
	"no-shmem|SHMEM TMPFS TMPFS_XATTR TMPFS_QUOTA QUOTA MEMFD_CREATE|CONFIG_EXPERT=y
# CONFIG_SHMEM is not set"
)
failed=()
for v in "${variants[@]}"; do
	name=${v%%|*}
	rest=${v#*|}
	drop=${rest%%|*}
	add=${rest#*|}
	frag=$outdir/$name.config
	pattern=$(echo "$drop" | sed 's/ /|/g')
	{
		echo "# Help: the check kernel without ${name#no-}"
		cat "$@" | grep -vE "^(CONFIG_($pattern)=|# CONFIG_($pattern) is not set)" | grep -v '^# Help:'
		echo "$add"
	} > "$frag.tmp"
	cmp -s "$frag.tmp" "$frag" && rm "$frag.tmp" || mv "$frag.tmp" "$frag"
	echo "config-matrix: $name (a full build takes about 5 minutes)"
	if ! "$here/build-kernel.sh" --tree "$tree" --out "$outdir/$name" --name "$name" "$frag"; then
		failed+=("$name")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "config-matrix: FAILED: ${failed[*]}"
	exit 1
fi
echo "config-matrix: the series builds with MEMCG, SWAP and SHMEM each off"
