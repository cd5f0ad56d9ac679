#!/usr/bin/env bash
# Build the kernel's own cgroup selftests (tools/testing/selftests/cgroup,
# every test_*.c) statically from the unpacked tree, against the kernel's
# uapi headers. Only programs whose sources changed are rebuilt.
# No -O2, as upstream's Makefile: gcc would fold the tests' allocations away.
#   usage: build-selftests.sh TREE KHDR OUTDIR
set -euo pipefail
tree=$(realpath "$1") khdr=$(realpath "$2")
mkdir -p "$3"
out=$(realpath "$3")
dir=$tree/tools/testing/selftests/cgroup

built=0
for src in "$dir"/test_*.c; do
	prog=$out/$(basename "$src" .c)
	if [ -f "$prog" ] && [ "$prog" -nt "$src" ] && [ "$prog" -nt "$dir/cgroup_util.c" ] &&
		[ "$prog" -nt "$dir/cgroup_util.h" ] && [ "$prog" -nt "$khdr" ]; then
		continue
	fi
	gcc -Wall -pthread -static -isystem "$khdr" -I"$tree/tools/testing/selftests" \
		-o "$prog" "$src" "$dir/cgroup_util.c"
	built=$((built + 1))
done
# programs whose source is gone (a test dropped by the series)
for prog in "$out"/test_*; do
	[ -e "$prog" ] || continue
	[ -f "$dir/$(basename "$prog").c" ] || rm -f "$prog"
done
[ $built -eq 0 ] || echo "selftests: built $built programs into $out"
