# memory.tmpfs: build the patched linux-source-6.12 kernel and prove it in
# QEMU. `make help` lists the targets; README.md says what they show.

SHELL := /bin/bash
.DEFAULT_GOAL := demo
.DELETE_ON_ERROR:

BUILD      := build
TARBALL    := /usr/src/linux-source-6.12.tar.xz
TREE       := $(BUILD)/linux
BASE_TREE  := $(BUILD)/linux-baseline
KOUT       := $(BUILD)/kernel
BASE_KOUT  := $(BUILD)/kernel-baseline
BZIMAGE    := $(KOUT)/arch/x86/boot/bzImage
BASE_BZIMAGE := $(BASE_KOUT)/arch/x86/boot/bzImage
STAMPS     := $(BUILD)/stamps
GUEST      := $(BUILD)/guest
INITRAMFS  := $(BUILD)/initramfs
INTEGRATION_CPIO := $(INITRAMFS)/integration.cpio
RUNS       := $(BUILD)/runs

# The check kernel: allnoconfig plus these fragments; check-debug adds
# debug.config. containers.config (what podman, LXC and docker need for
# make check-containers) costs the boot nothing measurable (README), so
# every kernel has it and check-containers boots the check kernel.
FRAGMENTS  := kconfig/guest.config kconfig/memcg-tmpfs.config kconfig/containers.config
DEBUG_FRAGMENTS := $(FRAGMENTS) kconfig/debug.config
DKOUT      := $(BUILD)/kernel-debug
BASE_DKOUT := $(BUILD)/kernel-debug-baseline
DEBUG_BZIMAGE := $(DKOUT)/arch/x86/boot/bzImage
BASE_DEBUG_BZIMAGE := $(BASE_DKOUT)/arch/x86/boot/bzImage
# the code patches (the cover letter changes nothing to build)
PATCHES    := patches/series $(filter-out patches/0000-%,$(wildcard patches/*.patch))

# Seconds before the watchdog kills a guest.
WATCHDOG   ?= 1800
# ... and before a debug kernel's guest is (KASAN and lockdep slow it down)
DEBUG_WATCHDOG ?= 3600
# Seconds of tmpfs_stress (empty: 30 in check, 60 in check-debug)
STRESS_SECONDS ?=
STRESS_APPEND := $(if $(STRESS_SECONDS),harness.stress=$(STRESS_SECONDS))
# check-debug PEERS=0: without the kernel's selftests, so without the
# baseline debug kernel either (CI's bounded run)
PEERS      ?= 1
# check-debug FAULTS=0: without the stress under injected faults
FAULTS     ?= 1
DEBUG_APPEND := $(if $(filter 0,$(FAULTS)),harness.faults=0) $(STRESS_APPEND)
# make bench: rounds of interleaved boots (every configuration once a
# round), and repetitions of each workload in a boot, under -icount
BENCH_ROUNDS ?= 3
BENCH_REPS ?= 5
# BENCH_CONFIGS="patched limit-depth1": only these configurations (and their
# references); BENCH_WORKLOADS=smallfiles,emptyfiles: only these workloads
export BENCH_CONFIGS BENCH_WORKLOADS
# make profile: the tmpfs_bench configuration profiled
PROFILE_CONFIG ?= plain
# run-guest: SCRIPT to run as root, FILES to add, KERNEL=patched|baseline
SCRIPT     ?=
FILES      ?=
KERNEL     ?= patched

help:
	@echo "make deps         install the Debian packages the harness needs"
	@echo "make kernel       unpack the tree, apply patches/series, build bzImage"
	@echo "make baseline     the same kernel without the series"
	@echo "make demo         boot the patched kernel and show memory.tmpfs (default)"
	@echo "make hole         a cgroup (memory.max 64M) creating empty files in /tmp, on the"
	@echo "                  baseline and the patched kernel (memory.tmpfs.inodes.max 20000)"
	@echo "make check        run every test on the patched kernel; N passed, N failed"
	@echo "make shell        interactive guest on the patched kernel"
	@echo "make run-guest SCRIPT=path [FILES=dir] [KERNEL=baseline]"
	@echo "                  run your program as root in the guest"
	@echo "make check-debug  check, stress with injected faults, memfd selftests and a"
	@echo "                  kmemleak scan on KASAN/lockdep kernels [STRESS_SECONDS=60]"
	@echo "make check-integration  memory.tmpfs.max from cgroup-tools, libcgroup's API,"
	@echo "                  crun (OCI unified) and systemd's TmpfsMax=, on the patched kernel"
	@echo "                  (check-tools: the first three, check-systemd: the last)"
	@echo "                  and from podman (crun, runc), LXC and docker (check-containers)"
	@echo "make check-containers  podman --cgroup-conf with crun and runc, LXC's"
	@echo "                  lxc.cgroup2.*, docker --cgroup-parent; on both kernels"
	@echo "make bench        tmpfs workloads on both kernels under QEMU -icount, interleaved"
	@echo "                  boots: ratios, build/bench/results.csv [BENCH_ROUNDS=3 BENCH_REPS=5]"
	@echo "                  [BENCH_CONFIGS=\"label ...\"] [BENCH_WORKLOADS=name,...]"
	@echo "make profile      instructions per kernel function, baseline vs patched, under"
	@echo "                  a QEMU plugin (where the charge's cost goes) [PROFILE_CONFIG=plain|LABEL]"
	@echo "make check-harness  prove that check fails on a failing test, a panic, a hang"
	@echo "make print-kernel print the path of the patched bzImage"
	@echo "make export-series  write patches/ from the commits of build/linux"
	@echo "make bisect       build every prefix of the series"
	@echo "make config-matrix  build the series with MEMCG, SWAP, SHMEM each off"
	@echo "make clean        remove the builds, keep the unpacked tree"
	@echo "make distclean    remove all of $(BUILD)/"

deps:
	@scripts/deps.sh

# --- kernel trees and builds ------------------------------------------------

$(STAMPS)/tree: | deps
	@scripts/prepare-tree.sh $(TARBALL) $(TREE) $(BASE_TREE)
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/series: $(PATCHES) $(STAMPS)/tree
	@scripts/apply-series.sh $(TREE) patches
	@touch $@

# kbuild decides what to recompile, so this always asks it.
kernel: $(STAMPS)/series | deps
	@scripts/build-kernel.sh $(TREE) $(KOUT) kernel $(FRAGMENTS)

$(BASE_BZIMAGE): $(STAMPS)/tree $(FRAGMENTS) scripts/build-kernel.sh scripts/check-config.sh | deps
	@scripts/build-kernel.sh $(BASE_TREE) $(BASE_KOUT) baseline $(FRAGMENTS)
	@touch $@	# up to date even when kbuild had nothing to do

baseline: $(BASE_BZIMAGE)

# check-debug's kernels: the same, with kconfig/debug.config
kernel-debug: $(STAMPS)/series | deps
	@scripts/build-kernel.sh $(TREE) $(DKOUT) kernel-debug $(DEBUG_FRAGMENTS)

$(BASE_DEBUG_BZIMAGE): $(STAMPS)/tree $(DEBUG_FRAGMENTS) scripts/build-kernel.sh scripts/check-config.sh | deps
	@scripts/build-kernel.sh $(BASE_TREE) $(BASE_DKOUT) baseline-debug $(DEBUG_FRAGMENTS)
	@touch $@

baseline-debug: $(BASE_DEBUG_BZIMAGE)

print-kernel:
	@echo $(abspath $(BZIMAGE))

# every prefix of the series builds (about 4 minutes a patch)
bisect: $(STAMPS)/tree | deps
	@scripts/bisect-build.sh $(TREE) patches $(BUILD)/bisect $(FRAGMENTS)

# the series builds with MEMCG, SWAP and SHMEM each off (about 15 minutes)
config-matrix: $(STAMPS)/series | deps
	@scripts/config-matrix.sh $(TREE) $(BUILD)/matrix $(FRAGMENTS)

# patches/ from the commits base..work of build/linux, after you commit there
export-series: $(STAMPS)/tree
	@scripts/export-series.sh $(TREE) patches
	@touch $(STAMPS)/series

# --- guest programs and initramfs ---------------------------------------------
# The sub-builds are incremental and the archives are rewritten only when
# their contents change, so runs that depend on them are not redone for
# nothing.

guest-programs: kernel
	@$(MAKE) -s --no-print-directory -C cgroup-tests O=$(abspath $(GUEST)/cgroup-tests) \
		RUNNER=$(abspath $(GUEST)/harness/ktap-run) \
		STRESS=$(abspath $(GUEST)/harness/tmpfs_stress) \
		BENCH=$(abspath $(GUEST)/harness/tmpfs_bench) \
		HOLE=$(abspath $(GUEST)/hole/tmpfs_hole) \
		INTEGRATION=$(abspath $(GUEST)/integration) \
		BOTH=$(abspath $(GUEST)/both) \
		KSRC=$(abspath $(TREE)) KHDR=$(abspath $(KOUT)/usr/include)
	@scripts/build-selftests.sh $(TREE) $(KOUT)/usr/include $(GUEST)/selftests
	@scripts/build-selftests.sh $(TREE) $(KOUT)/usr/include $(GUEST)/memfd memfd
	@scripts/build-selftests.sh $(TREE) $(KOUT)/usr/include $(GUEST)/cgroup-tmpfs cgroup-tmpfs
	@scripts/build-mm-selftests.sh $(TREE) $(KOUT)/usr/include $(GUEST)/mm

$(INITRAMFS)/base.cpio: guest-programs FORCE
	@mkdir -p $(INITRAMFS)
	@qemu-boot/build-initramfs.sh --base $@ \
		$(GUEST)/harness/ktap-run:/opt/harness/ktap-run \
		$(GUEST)/harness/tmpfs_stress:/opt/harness/tmpfs_stress \
		$(GUEST)/harness/tmpfs_bench:/opt/harness/tmpfs_bench \
		qemu-boot/demo.sh:/opt/harness/demo.sh \
		$(GUEST)/selftests:/opt/selftests \
		$(GUEST)/memfd:/opt/memfd \
		$(GUEST)/both:/opt/both \
		qemu-boot/suites/stress:/opt/stress \
		qemu-boot/suites/stress-faults:/opt/stress-faults \
		qemu-boot/suites/leaks:/opt/leaks \
		qemu-boot/suites/nomemcg:/opt/nomemcg \
		qemu-boot/suites/integration/ktap.sh:/opt/nomemcg/ktap.sh \
		qemu-boot/suites/notmpfs:/opt/notmpfs \
		qemu-boot/suites/integration/ktap.sh:/opt/notmpfs/ktap.sh \
		qemu-boot/suites/cgroup-tmpfs:/opt/cgroup-tmpfs \
		$(GUEST)/cgroup-tmpfs:/opt/cgroup-tmpfs \
		qemu-boot/suites/cgroup-tmpfs-quick:/opt/cgroup-tmpfs-quick \
		qemu-boot/suites/mm:/opt/mm \
		$(GUEST)/mm:/opt/mm/bin \
		qemu-boot/suites/mm-quick:/opt/mm-quick \
		qemu-boot/suites/stress-ng:/opt/stress-ng \
		+$$(command -v stress-ng):/usr/bin/stress-ng

$(INITRAMFS)/cgroup-tests.cpio: guest-programs FORCE
	@mkdir -p $(INITRAMFS)
	@qemu-boot/build-initramfs.sh $@ $(GUEST)/cgroup-tests:/opt/cgroup-tests

# make check-integration: libcgroup's test, crun with its libraries, the
# scripts for cgroup-tools and crun
$(INTEGRATION_CPIO): guest-programs FORCE
	@mkdir -p $(INITRAMFS)
	@command -v crun >/dev/null || { echo "check-integration: crun is missing; run make deps" >&2; exit 1; }
	@qemu-boot/build-initramfs.sh $@ \
		+$(GUEST)/integration/test_libcgroup:/opt/integration/test_libcgroup \
		qemu-boot/suites/integration:/opt/integration \
		+$$(command -v crun):/usr/bin/crun

# Failures of the kernel's selftests on the baseline kernel: the guest does
# not rerun a program whose only failures are these (ktap-run -k).
$(INITRAMFS)/known-failures.cpio: $(RUNS)/baseline/records.tsv
	@mkdir -p $(INITRAMFS)
	@awk -F'\t' '$$1 == "FAIL" { print $$2 }' $< > $(INITRAMFS)/known-failures
	@qemu-boot/build-initramfs.sh $@ $(INITRAMFS)/known-failures:/opt/harness/known-failures

# The same for check-debug, from the baseline debug kernel's run.
$(INITRAMFS)/known-failures-debug.cpio: $(RUNS)/baseline-debug/records.tsv
	@mkdir -p $(INITRAMFS)/debug
	@awk -F'\t' '$$1 == "FAIL" { print $$2 }' $< > $(INITRAMFS)/debug/known-failures
	@qemu-boot/build-initramfs.sh $@ $(INITRAMFS)/debug/known-failures:/opt/harness/known-failures

$(INITRAMFS)/tests.cpio: $(INITRAMFS)/base.cpio $(INITRAMFS)/cgroup-tests.cpio
	@cat $^ > $@

$(INITRAMFS)/check.cpio: $(INITRAMFS)/tests.cpio $(INITRAMFS)/known-failures.cpio
	@cat $^ > $@

$(INITRAMFS)/check-debug.cpio: $(INITRAMFS)/tests.cpio $(INITRAMFS)/known-failures-debug.cpio
	@cat $^ > $@

initramfs: $(INITRAMFS)/tests.cpio

# --- runs ---------------------------------------------------------------------

# The kernel's cgroup selftests on the baseline kernel, redone only when
# that kernel or the guest's base archive changes.
$(RUNS)/baseline/records.tsv: $(BASE_BZIMAGE) $(INITRAMFS)/base.cpio qemu-boot/boot.sh scripts/ktap-records.awk
	@echo "baseline: running the kernel's cgroup selftests and the peer suites on the baseline kernel (about 7 minutes)"
	@qemu-boot/boot.sh --kernel $(BASE_BZIMAGE) --initrd $(INITRAMFS)/base.cpio \
		--mode selftests --logdir $(RUNS)/baseline --timeout $(WATCHDOG) >/dev/null; \
	status=$$?; \
	if [ $$status -ne 0 ] && [ $$status -ne 1 ]; then \
		echo "baseline: the baseline run did not complete (status $$status): its missing results excuse nothing"; fi
	@awk -f scripts/ktap-records.awk $(RUNS)/baseline/results.log > $@.tmp && mv $@.tmp $@
	@echo "baseline: $$(grep -c '^PASS' $@) passed, $$(grep -c '^FAIL' $@) failed, $$(grep -c '^SKIP' $@) skipped"

baseline-selftests: $(RUNS)/baseline/records.tsv

# The peer suites (cgroup and memfd selftests) on the baseline debug kernel.
$(RUNS)/baseline-debug/records.tsv: $(BASE_DEBUG_BZIMAGE) $(INITRAMFS)/base.cpio qemu-boot/boot.sh scripts/ktap-records.awk
	@echo "baseline-debug: the peer suites on the baseline debug kernel (the cgroup, memfd and mm selftests, stress-ng, the cgroup selftests on a tmpfs)"
	@qemu-boot/boot.sh --kernel $(BASE_DEBUG_BZIMAGE) --initrd $(INITRAMFS)/base.cpio \
		--mode peers --logdir $(RUNS)/baseline-debug --timeout $(DEBUG_WATCHDOG) >/dev/null; \
	status=$$?; \
	if [ $$status -ne 0 ] && [ $$status -ne 1 ]; then \
		echo "baseline-debug: the run did not complete (status $$status): its missing results excuse nothing"; fi
	@awk -f scripts/ktap-records.awk $(RUNS)/baseline-debug/results.log > $@.tmp && mv $@.tmp $@
	@echo "baseline-debug: $$(grep -c '^PASS' $@) passed, $$(grep -c '^FAIL' $@) failed, $$(grep -c '^SKIP' $@) skipped"

# The test programs each run must hear from, as SUITE:PATH (PATH: a
# directory of test_* programs or one program, as put into the
# initramfs); check.sh's EXPECT. A suite added to a mode of
# qemu-boot/init goes here too.
CHECK_EXPECT := cgroup-tests:$(GUEST)/cgroup-tests both:$(GUEST)/both stress:qemu-boot/suites/stress \
	selftests:$(GUEST)/selftests cgroup-tmpfs:qemu-boot/suites/cgroup-tmpfs-quick \
	mm:qemu-boot/suites/mm-quick stress-ng:qemu-boot/suites/stress-ng
DEBUG_EXPECT := cgroup-tests:$(GUEST)/cgroup-tests both:$(GUEST)/both stress:qemu-boot/suites/stress \
	$(if $(filter 0,$(FAULTS)),,stress:qemu-boot/suites/stress-faults) \
	$(if $(filter 0,$(PEERS)),,selftests:$(GUEST)/selftests memfd:$(GUEST)/memfd \
		cgroup-tmpfs:$(GUEST)/cgroup-tmpfs mm:qemu-boot/suites/mm stress-ng:qemu-boot/suites/stress-ng) \
	leaks:qemu-boot/suites/leaks

# the suites, then a small boot with cgroup_disable=memory (the patched
# kernel without the memory controller: qemu-boot/suites/nomemcg), a boot
# with cgroup.memory=notmpfs (qemu-boot/suites/notmpfs, and the kernel's
# cgroup selftests but test_tmpfs, compared with the baseline kernel's
# run), one with cgroup.memory=nokmem (test_tmpfs_inodes), and the sum of
# the four verdicts
check: kernel $(INITRAMFS)/check.cpio
	@EXPECT="$(CHECK_EXPECT)" scripts/check.sh $(BZIMAGE) $(INITRAMFS)/check.cpio $(RUNS)/check \
		$(WATCHDOG) $(RUNS)/baseline/records.tsv check $(STRESS_APPEND); \
	EXPECT=nomemcg:qemu-boot/suites/nomemcg scripts/check.sh $(BZIMAGE) $(INITRAMFS)/check.cpio \
		$(RUNS)/check-nomemcg $(WATCHDOG) /dev/null nomemcg cgroup_disable=memory; \
	EXPECT="notmpfs:qemu-boot/suites/notmpfs $$(for f in $(GUEST)/selftests/test_*; do \
		[ "$${f##*/}" = test_tmpfs ] || echo "selftests:$$f"; done)" \
	awk -F'\t' '$$2 ~ /^selftests\// && $$2 !~ /^selftests\/test_tmpfs($$|:)/' $(RUNS)/baseline/records.tsv \
		> $(RUNS)/baseline/records-notmpfs.tsv; \
	scripts/check.sh $(BZIMAGE) $(INITRAMFS)/check.cpio $(RUNS)/check-notmpfs $(WATCHDOG) \
		$(RUNS)/baseline/records-notmpfs.tsv notmpfs cgroup.memory=notmpfs; \
	EXPECT=nokmem:$(GUEST)/cgroup-tests/test_tmpfs_inodes scripts/check.sh $(BZIMAGE) \
		$(INITRAMFS)/check.cpio $(RUNS)/check-nokmem $(WATCHDOG) /dev/null nokmem cgroup.memory=nokmem; \
	echo; scripts/sum-verdicts.sh $(RUNS)/check/verdict.txt $(RUNS)/check-nomemcg/verdict.txt \
		$(RUNS)/check-notmpfs/verdict.txt $(RUNS)/check-nokmem/verdict.txt

ifeq ($(PEERS),0)
check-debug: kernel-debug $(INITRAMFS)/tests.cpio
	@EXPECT="$(DEBUG_EXPECT)" scripts/check.sh $(DEBUG_BZIMAGE) $(INITRAMFS)/tests.cpio $(RUNS)/check-debug \
		$(DEBUG_WATCHDOG) /dev/null check-debug "harness.peers=0 $(DEBUG_APPEND)"
else
check-debug: kernel-debug $(INITRAMFS)/check-debug.cpio
	@EXPECT="$(DEBUG_EXPECT)" scripts/check.sh $(DEBUG_BZIMAGE) $(INITRAMFS)/check-debug.cpio $(RUNS)/check-debug \
		$(DEBUG_WATCHDOG) $(RUNS)/baseline-debug/records.tsv check-debug "$(DEBUG_APPEND)"
endif

# make check-integration: the limit set from cgroup-tools, libcgroup's API
# and crun (one boot of the usual initramfs), and from systemd's TmpfsMax=
# (a boot of a Debian root with the patched systemd as PID 1)
check-integration: check-tools check-systemd check-containers
	@scripts/sum-verdicts.sh $(RUNS)/check-tools/verdict.txt $(RUNS)/check-systemd/verdict.txt \
		$(RUNS)/check-containers/verdict.txt $(RUNS)/check-containers-baseline/verdict.txt

check-tools: kernel $(INITRAMFS)/base.cpio $(INTEGRATION_CPIO)
	@cat $(INITRAMFS)/base.cpio $(INTEGRATION_CPIO) > $(INITRAMFS)/check-tools.cpio
	@EXPECT="integration:qemu-boot/suites/integration integration:$(GUEST)/integration/test_libcgroup" \
		scripts/check.sh $(BZIMAGE) $(INITRAMFS)/check-tools.cpio $(RUNS)/check-tools \
		$(WATCHDOG) /dev/null integration

# Debian's systemd with patches/systemd/, built once (about 15 minutes)
SYSTEMD_DEBS := $(BUILD)/systemd-pkg/debs/.built
$(SYSTEMD_DEBS): $(wildcard patches/systemd/*.patch) scripts/build-systemd.sh | deps
	@scripts/build-systemd.sh patches/systemd $(BUILD)/systemd-pkg

SYSTEMD_IMG := $(BUILD)/systemd-root.img
$(SYSTEMD_IMG): $(SYSTEMD_DEBS) $(wildcard qemu-boot/systemd/*) qemu-boot/suites/integration/ktap.sh \
		scripts/build-systemd-root.sh guest-programs
	@scripts/build-systemd-root.sh $(BUILD)/systemd-root/root $(BUILD)/systemd-pkg/debs \
		$(GUEST)/harness/ktap-run $@

check-systemd: kernel $(SYSTEMD_IMG)
	@BOOT_DISK=$(SYSTEMD_IMG) scripts/check.sh $(BZIMAGE) - $(RUNS)/check-systemd \
		$(WATCHDOG) /dev/null systemd

# make check-containers: a Debian root with podman, crun, runc, LXC and
# docker (the packages fetched once: about 2 minutes), booted on the
# patched kernel, where the limits must hold, and on the baseline kernel,
# where each tool must refuse the keys with its own error
CONTAINERS_ROOT := $(BUILD)/containers-root/root
CONTAINERS_IMG := $(BUILD)/containers-root.img
CONTAINERS_BOOT := init=/opt/harness/containers-init
containers-fetch: | deps
	@scripts/build-containers-root.sh fetch $(CONTAINERS_ROOT)

$(CONTAINERS_IMG): $(wildcard qemu-boot/containers/*) qemu-boot/suites/integration/ktap.sh \
		scripts/build-containers-root.sh guest-programs | deps
	@scripts/build-containers-root.sh image $(CONTAINERS_ROOT) $(GUEST)/harness/ktap-run $@

check-containers: kernel baseline $(CONTAINERS_IMG)
	@BOOT_DISK=$(CONTAINERS_IMG) EXPECT="containers:qemu-boot/containers" scripts/check.sh \
		$(BZIMAGE) - $(RUNS)/check-containers $(WATCHDOG) /dev/null containers \
		"$(CONTAINERS_BOOT) harness.kernel=patched"; \
	BOOT_DISK=$(CONTAINERS_IMG) EXPECT="containers:qemu-boot/containers" scripts/check.sh \
		$(BASE_BZIMAGE) - $(RUNS)/check-containers-baseline $(WATCHDOG) /dev/null containers \
		"$(CONTAINERS_BOOT) harness.kernel=baseline"; \
	echo; scripts/sum-verdicts.sh $(RUNS)/check-containers/verdict.txt \
		$(RUNS)/check-containers-baseline/verdict.txt

demo: kernel $(INITRAMFS)/base.cpio
	@qemu-boot/boot.sh --kernel $(BZIMAGE) --initrd $(INITRAMFS)/base.cpio \
		--mode demo --logdir $(RUNS)/demo --timeout $(WATCHDOG)

shell: kernel initramfs
	@qemu-boot/boot.sh --kernel $(BZIMAGE) --initrd $(INITRAMFS)/tests.cpio \
		--mode shell --logdir $(RUNS)/shell --interactive

run-guest: $(if $(filter baseline,$(KERNEL)),$(BASE_BZIMAGE)) $(INITRAMFS)/base.cpio
	@scripts/run-guest.sh "$(SCRIPT)" "$(FILES)" "$(KERNEL)" $(INITRAMFS)/base.cpio \
		$(RUNS)/run-guest $(WATCHDOG) $(BZIMAGE) $(BASE_BZIMAGE)

# make profile: instructions per kernel function, baseline against patched
profile: kernel $(BASE_BZIMAGE) $(INITRAMFS)/base.cpio
	@scripts/profile.sh $(BZIMAGE) $(BASE_BZIMAGE) $(INITRAMFS)/base.cpio $(BUILD)/profile \
		$(PROFILE_CONFIG) $(WATCHDOG)

# what the charge costs: ratios to the baseline kernel, side by side
# the empty-file hole, before (baseline) and after (memory.tmpfs.inodes.max)
hole: kernel $(BASE_BZIMAGE) $(INITRAMFS)/base.cpio
	@scripts/hole.sh $(BZIMAGE) $(BASE_BZIMAGE) $(INITRAMFS)/base.cpio $(GUEST)/hole \
		$(RUNS)/hole $(WATCHDOG)

bench: kernel $(BASE_BZIMAGE) $(INITRAMFS)/base.cpio
	@scripts/bench.sh $(BZIMAGE) $(BASE_BZIMAGE) $(INITRAMFS)/base.cpio $(BUILD)/bench \
		$(BENCH_ROUNDS) $(BENCH_REPS) $(WATCHDOG)

check-harness: kernel initramfs
	@scripts/check-harness.sh $(BZIMAGE) $(INITRAMFS) $(RUNS)/check-harness

clean:
	rm -rf $(KOUT) $(BASE_KOUT) $(DKOUT) $(BASE_DKOUT) $(GUEST) $(INITRAMFS) $(RUNS) $(STAMPS)/series

distclean:
	rm -rf $(BUILD)

FORCE:

.PHONY: help deps kernel baseline kernel-debug baseline-debug check-debug check-integration check-tools check-systemd check-containers containers-fetch bench profile print-kernel export-series bisect config-matrix guest-programs initramfs \
	baseline-selftests check demo hole shell run-guest check-harness clean distclean FORCE
