#!/usr/bin/env bash
# Unpack Debian's linux-source-6.12 into a git tree whose first commit,
# tagged "base", is the pristine source; and a worktree of "base" for the
# baseline kernel.
#   usage: prepare-tree.sh --tarball TARBALL --tree DIR --baseline-tree DIR
set -euo pipefail
tarball= tree= baseline=
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --tarball=tarball --tree=tree --baseline-tree=baseline -- "$@"
no_args
[ -n "$tarball" ] && [ -n "$tree" ] && [ -n "$baseline" ] || usage

if [ ! -f "$tarball" ]; then
	echo "prepare-tree: $tarball not found (run 'make deps')" >&2
	exit 1
fi

identity="$(basename "$tarball") $(stat -c '%s %Y' "$tarball")"
if git -C "$tree" rev-parse -q --verify base >/dev/null 2>&1 &&
	[ "$(cat "$tree/.git/harness-tarball" 2>/dev/null)" != "$identity" ]; then
	echo "prepare-tree: $tarball changed since $tree was unpacked from it;" >&2
	echo "prepare-tree: save your work in $tree, then 'make distclean'" >&2
	exit 1
fi

if ! git -C "$tree" rev-parse -q --verify base >/dev/null 2>&1; then
	echo "prepare-tree: unpacking $tarball into $tree (about 1 minute)"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$tarball" -C "$tree.tmp" --strip-components=1
	echo "prepare-tree: committing the pristine tree as tag 'base' (about 1 minute)"
	(
		cd "$tree.tmp"
		git init -q -b work
		git config user.name "memory.tmpfs harness"
		git config user.email "harness@localhost"
		git config gc.auto 0
		# -f: Debian's top-level .gitignore ignores every top-level entry
		git add -A -f
		version=$(make -s kernelversion)
		git commit -q -m "Linux $version from $(basename "$tarball")"
		git tag base
	)
	echo "$identity" > "$tree.tmp/.git/harness-tarball"
	mv "$tree.tmp" "$tree"
fi

if [ ! -f "$baseline/Makefile" ]; then
	echo "prepare-tree: checking out 'base' into $baseline for the baseline kernel"
	rm -rf "$baseline"
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$(realpath -m "$baseline")" base
fi
