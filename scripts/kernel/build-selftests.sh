#!/usr/bin/env bash
# Build the kernel's own selftests that make check and check-debug run,
# statically from the unpacked tree, against the kernel's uapi headers.
# Only programs whose sources changed are rebuilt.
#   cgroup: tools/testing/selftests/cgroup, every test_*.c
#   memfd:  tools/testing/selftests/memfd/memfd_test.c, as test_memfd (its
#           fuse_test needs libfuse and FUSE, and run_hugetlbfs_test.sh
#           hugetlbfs: neither is in the guest)
#   cgroup-tmpfs: builds nothing; a link test_NAME -> on-tmpfs for each
#           cgroup program, the suite cgroup-tmpfs/ that runs them again
#           with their working directory on a tmpfs
#           (qemu-boot/suites/cgroup-tmpfs/on-tmpfs)
# No -O2, as upstream's Makefiles: gcc would fold the tests' allocations away.
#   usage: build-selftests.sh --tree TREE --headers KHDR --out DIR
#                             [--suite cgroup|memfd|cgroup-tmpfs]
set -euo pipefail
suite=cgroup
tree= khdr= out=
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --tree=tree --headers=khdr --out=out --suite=suite -- "$@"
no_args
[ -n "$tree" ] && [ -n "$khdr" ] && [ -n "$out" ] || usage
tree=$(realpath "$tree") khdr=$(realpath "$khdr")
mkdir -p "$out"
out=$(realpath "$out")

if [ "$suite" = memfd ]; then
	dir=$tree/tools/testing/selftests/memfd
	prog=$out/test_memfd
	if [ ! -f "$prog" ] || [ "$dir/memfd_test.c" -nt "$prog" ] || [ "$dir/common.c" -nt "$prog" ] ||
		[ "$khdr" -nt "$prog" ]; then
		gcc -Wall -pthread -static -D_FILE_OFFSET_BITS=64 -isystem "$khdr" \
			-o "$prog" "$dir/memfd_test.c" "$dir/common.c"
		echo "selftests: built test_memfd into $out"
	fi
	exit 0
fi
if [ "$suite" = cgroup-tmpfs ]; then
	rm -f "$out"/test_*
	for src in "$tree"/tools/testing/selftests/cgroup/test_*.c; do
		ln -s on-tmpfs "$out/$(basename "$src" .c)"
	done
	exit 0
fi
[ "$suite" = cgroup ] || { echo "build-selftests: unknown suite '$suite'" >&2; exit 2; }
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
