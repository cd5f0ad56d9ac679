#!/usr/bin/env bash
# Build the kernel's mm selftests that the guest's suite mm runs
# (qemu-boot/suites/mm), statically from the unpacked tree against the
# kernel's uapi headers, into OUTDIR (nothing is written into the tree).
# Only programs whose sources (or this script) changed are rebuilt. Left out: the hugetlb
# tests (no hugetlbfs reservations in the guest), hmm-tests and gup_test
# (test modules), migration and ksm_tests (libnuma, NUMA), protection_keys,
# va_high_addr_switch, virtual_address_range, transhuge-stress (runs until
# killed), compaction_test, on-fault-limit, thuge-gen.
# -O2 as upstream's mm Makefile, without its warnings (not our code); cow
# and gup_longterm with liburing (their io_uring fixed-buffer pins).
#   usage: build-mm-selftests.sh --tree TREE --headers KHDR --out DIR
set -euo pipefail
tree= khdr= out=
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --tree=tree --headers=khdr --out=out -- "$@"
no_args
[ -n "$tree" ] && [ -n "$khdr" ] && [ -n "$out" ] || usage
tree=$(realpath "$tree") khdr=$(realpath "$khdr")
mkdir -p "$out"
out=$(realpath "$out")
dir=$tree/tools/testing/selftests/mm
progs=(madv_populate mremap_test mremap_dontunmap khugepaged split_huge_page_test
	uffd-unit-tests uffd-stress cow ksm_functional_tests memfd_secret mkdirty
	gup_longterm map_populate map_fixed_noreplace mlock2-tests mrelease_test
	droppable mseal_test seal_elf mdwe_test pagemap_ioctl soft-dirty)

# local_config.h (upstream's check_config.sh writes it), outside OUTDIR
inc=$(mktemp -d)
trap 'rm -rf "$inc"' EXIT
echo "#define LOCAL_CONFIG_HAVE_LIBURING 1" > "$inc/local_config.h"	# liburing-dev
rm -f "$out/local_config.h"
built=0
for p in "${progs[@]}"; do
	srcs=("$p.c" vm_util.c thp_settings.c)
	extra=()
	case $p in
	uffd-*) srcs+=(uffd-common.c) ;;
	cow|gup_longterm) extra=(-luring) ;;
	memfd_secret) extra=(-lcap) ;;
	khugepaged) extra=(-include kselftest.h) ;;	# it uses KSFT_SKIP without including it
	esac
	prog=$out/$p
	fresh=1
	[ -f "$prog" ] || fresh=0
	for dep in "${srcs[@]/#/$dir/}" "$dir"/*.h "$khdr" "$0"; do	# and this script's flags
		[ $fresh = 1 ] && [ "$dep" -nt "$prog" ] && fresh=0
	done
	[ $fresh = 1 ] && continue
	# from the tree's directory, as upstream: __FILE__ names a file in
	# the working directory (gup_longterm's "local tmpfile")
	(cd "$dir" && gcc -O2 -w -s -static -pthread -U_FORTIFY_SOURCE -I"$inc" -I"$tree" \
		-I"$tree/tools/testing/selftests" -isystem "$khdr" -isystem "$tree/tools/include/uapi" \
		-o "$prog" "${srcs[@]}" "${extra[@]}" -lrt -lpthread -lm)
	built=$((built + 1))
done
[ $built -eq 0 ] || echo "selftests: built $built mm programs into $out"
