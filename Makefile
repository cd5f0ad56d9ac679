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
RUNS       := $(BUILD)/runs

# The check kernel: allnoconfig plus these fragments; check-debug adds
# debug.config. containers.config (what podman, LXC and docker need for
# make check-containers) costs the boot nothing measurable (docs/performance.md), so
# every kernel has it and check-containers boots the check kernel.
FRAGMENTS  := kconfig/guest.config kconfig/memcg-tmpfs.config kconfig/containers.config
DEBUG_FRAGMENTS := $(FRAGMENTS) kconfig/debug.config
# The patched test kernels (not the baselines, which lack the option, nor
# make deb's and make bench's): the series' debug delay, which
# test_tmpfs_exact uses to force its races (kconfig/tmpfs-delay.config)
DELAY_FRAGMENT := kconfig/tmpfs-delay.config
DKOUT      := $(BUILD)/kernel-debug
BASE_DKOUT := $(BUILD)/kernel-debug-baseline
DEBUG_BZIMAGE := $(DKOUT)/arch/x86/boot/bzImage
BASE_DEBUG_BZIMAGE := $(BASE_DKOUT)/arch/x86/boot/bzImage
# make check's PREEMPT_RT boot: the check kernel with kconfig/rt.config over it
RT_FRAGMENT := kconfig/rt.config
RKOUT      := $(BUILD)/kernel-rt
RT_BZIMAGE := $(RKOUT)/arch/x86/boot/bzImage
# make bench's and make profile's kernels: Debian's cloud-amd64 config
# without modules, plus kconfig/bench.config (docs/performance.md)
DEBIAN_CONFIG := /usr/src/linux-config-6.12/config.amd64_none_cloud-amd64.xz
BENCH_FRAGMENTS := kconfig/bench.config
BKOUT      := $(BUILD)/kernel-bench
BASE_BKOUT := $(BUILD)/kernel-bench-baseline
BENCH_BZIMAGE := $(BKOUT)/arch/x86/boot/bzImage
BASE_BENCH_BZIMAGE := $(BASE_BKOUT)/arch/x86/boot/bzImage
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
DEBUG_APPEND := $(if $(filter 0,$(PEERS)),harness.peers=0) $(if $(filter 0,$(FAULTS)),harness.faults=0) $(STRESS_APPEND)
# make bench: rounds of paired boots (every configuration once a round,
# next to its reference), and repetitions of each workload in a boot,
# under -icount
BENCH_ROUNDS ?= 5
BENCH_REPS ?= 5
# BENCH_CONFIGS="patched limit-depth1": only these configurations (and their
# references); BENCH_WORKLOADS=smallfiles,emptyfiles: only these workloads
export BENCH_CONFIGS BENCH_WORKLOADS
# make profile: the tmpfs_bench configuration profiled
PROFILE_CONFIG ?= plain
# make profile PROFILE_WORKLOADS=append,smallfiles: per workload, locked
# instructions and page_counter calls per operation (PROFILE_CONFIG may
# then be a list: plain,limit-depth8)
export PROFILE_WORKLOADS
# run-guest: SCRIPT to run as root, FILES to add; KERNEL=patched|baseline
# (run-guest, check-harness)
SCRIPT     ?=
FILES      ?=
KERNEL     ?= patched
KERNEL_BZIMAGE := $(if $(filter baseline,$(KERNEL)),$(BASE_BZIMAGE),$(BZIMAGE))
# the programs of qemu-boot/suites.list's dir lines for an image
specs = $(shell scripts/suites.sh specs $(1) $(GUEST))
CHECK := scripts/verdict/check.sh --guest $(GUEST)

help:
	@echo "make deps         install the Debian packages the harness needs"
	@echo "make kernel       unpack the tree, apply patches/series, build bzImage"
	@echo "make baseline     the same kernel without the series"
	@echo "make kernel-bench, make baseline-bench  both, configured like Debian's (bench, profile)"
	@echo "make demo         boot the patched kernel and show memory.tmpfs (default)"
	@echo "make check        every suite on the patched kernel (4 boots), ours on PREEMPT_RT (1)"
	@echo "make check-debug  the same on KASAN/lockdep kernels, the stress with injected"
	@echo "                  faults, a kmemleak scan [PEERS=0] [FAULTS=0] [STRESS_SECONDS=60]"
	@echo "make check-integration  memory.tmpfs.max set by cgroup-tools, libcgroup, crun,"
	@echo "                  systemd's TmpfsMax= (check-tools, check-systemd), podman, LXC"
	@echo "                  and docker (check-containers, on both kernels)"
	@echo "make deb          linux-image and linux-headers packages of the series from Debian's"
	@echo "                  config [FLAVOUR=cloud-amd64|amd64|rt-amd64] (about 90 minutes)"
	@echo "make repo         an apt repository: those and the patched systemd's packages"
	@echo "make check-installed  install them with apt in a Debian root, boot it; the same"
	@echo "                  root on Debian's own kernel package (the control)"
	@echo "make check-harness  prove that check fails on a failing test, a panic, a hang"
	@echo "make shell        interactive guest on the patched kernel"
	@echo "make run-guest SCRIPT=path [FILES=dir] [KERNEL=baseline]"
	@echo "                  run your program as root in the guest"
	@echo "make hole         empty files in /tmp under memory.max 64M, on both kernels"
	@echo "make bench        tmpfs workloads on both kernels (Debian's config) under QEMU -icount"
	@echo "                  [BENCH_ROUNDS=5 BENCH_REPS=5] [BENCH_CONFIGS=\"label ...\"]"
	@echo "                  [BENCH_WORKLOADS=name,...]"
	@echo "make profile      instructions per kernel function, baseline vs patched"
	@echo "                  [PROFILE_CONFIG=plain|LABEL] [PROFILE_WORKLOADS=name,...]"
	@echo "make bisect       build every prefix of the series"
	@echo "make cross        build the series W=1 for arm64, armhf, riscv64, s390x, ppc64le"
	@echo "                  (every prefix for arm64 and armhf) [CROSS_ARCHES=...] [CROSS_PREFIXES=...]"
	@echo "make config-matrix  build the series with MEMCG, SWAP, SHMEM each off"
	@echo "make export-series  write patches/ from the commits of build/linux"
	@echo "make print-kernel print the path of the patched bzImage"
	@echo "make clean        remove the builds, keep the unpacked tree"
	@echo "make distclean    remove all of $(BUILD)/"

deps:
	@scripts/deps.sh

# --- kernel trees and builds (scripts/kernel/) --------------------------------

$(STAMPS)/tree: | deps
	@scripts/kernel/prepare-tree.sh --tarball $(TARBALL) --tree $(TREE) --baseline-tree $(BASE_TREE)
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/series: $(PATCHES) $(STAMPS)/tree
	@scripts/kernel/apply-series.sh $(TREE) patches
	@touch $@

# kbuild decides what to recompile, so this always asks it.
kernel: $(STAMPS)/series | deps
	@scripts/kernel/build-kernel.sh --tree $(TREE) --out $(KOUT) --name kernel $(FRAGMENTS) $(DELAY_FRAGMENT)

$(BASE_BZIMAGE): $(STAMPS)/tree $(FRAGMENTS) scripts/kernel/build-kernel.sh scripts/kernel/assert-config.sh | deps
	@scripts/kernel/build-kernel.sh --tree $(BASE_TREE) --out $(BASE_KOUT) --name baseline $(FRAGMENTS)
	@touch $@	# up to date even when kbuild had nothing to do

baseline: $(BASE_BZIMAGE)

# check-debug's kernels: the same, with kconfig/debug.config
kernel-debug: $(STAMPS)/series | deps
	@scripts/kernel/build-kernel.sh --tree $(TREE) --out $(DKOUT) --name kernel-debug $(DEBUG_FRAGMENTS) $(DELAY_FRAGMENT)

$(BASE_DEBUG_BZIMAGE): $(STAMPS)/tree $(DEBUG_FRAGMENTS) scripts/kernel/build-kernel.sh scripts/kernel/assert-config.sh | deps
	@scripts/kernel/build-kernel.sh --tree $(BASE_TREE) --out $(BASE_DKOUT) --name baseline-debug $(DEBUG_FRAGMENTS)
	@touch $@

baseline-debug: $(BASE_DEBUG_BZIMAGE)

# make check's PREEMPT_RT kernel
kernel-rt: $(STAMPS)/series | deps
	@scripts/kernel/build-kernel.sh --tree $(TREE) --out $(RKOUT) --name kernel-rt --over $(RT_FRAGMENT) $(FRAGMENTS) $(DELAY_FRAGMENT)

# make bench's kernels (about 35 minutes each from scratch on 2 cores)
kernel-bench: $(STAMPS)/series | deps
	@scripts/kernel/build-kernel.sh --tree $(TREE) --out $(BKOUT) --name kernel-bench \
		--debian-config $(DEBIAN_CONFIG) $(BENCH_FRAGMENTS)

$(BASE_BENCH_BZIMAGE): $(STAMPS)/tree $(BENCH_FRAGMENTS) scripts/kernel/build-kernel.sh scripts/kernel/assert-config.sh | deps
	@scripts/kernel/build-kernel.sh --tree $(BASE_TREE) --out $(BASE_BKOUT) --name baseline-bench \
		--debian-config $(DEBIAN_CONFIG) $(BENCH_FRAGMENTS)
	@touch $@

baseline-bench: $(BASE_BENCH_BZIMAGE)

print-kernel:
	@echo $(abspath $(BZIMAGE))

# make cross: the series built W=1 for other architectures with Debian's
# cross compilers (kconfig/cross/), every prefix too for CROSS_PREFIXES;
# a compiler warning of the series' own fails (scripts/kernel/cross-build.sh)
CROSS_ARCHES ?= arm64 arm riscv s390 powerpc
CROSS_PREFIXES ?= arm64 arm
cross: $(STAMPS)/series | deps
	@for a in $(CROSS_ARCHES); do \
		case " $(CROSS_PREFIXES) " in *" $$a "*) p=--prefixes ;; *) p= ;; esac; \
		scripts/kernel/cross-build.sh --tree $(TREE) --baseline-tree $(BASE_TREE) --patches patches \
			--out $(BUILD)/cross/$$a --arch $$a $$p || exit; \
	done; echo "cross: $(CROSS_ARCHES): every build passed"

# every prefix of the series builds (about 4 minutes a patch)
bisect: $(STAMPS)/tree | deps
	@scripts/kernel/bisect-build.sh --tree $(TREE) --patches patches --out $(BUILD)/bisect $(FRAGMENTS)

# the series builds with MEMCG, SWAP and SHMEM each off (about 15 minutes)
config-matrix: $(STAMPS)/series | deps
	@scripts/kernel/config-matrix.sh --tree $(TREE) --out $(BUILD)/matrix $(FRAGMENTS)

# patches/ from the commits base..work of build/linux, after you commit there
export-series: $(STAMPS)/tree
	@scripts/kernel/export-series.sh $(TREE) patches
	@touch $(STAMPS)/series

# make deb: linux-image and linux-headers packages of the series from
# Debian's config of FLAVOUR (cloud-amd64, amd64, rt-amd64), built by the
# kernel's bindeb-pkg and cached outside the checkout (docs/install.md);
# DEB_CACHED_ONLY=1: from the cache or fail, never build (CI)
FLAVOUR ?= cloud-amd64
DEB_OUT = $(BUILD)/deb/$(FLAVOUR)
DEB_STAMP = $(DEB_OUT)/debs/.built
deb: $(DEB_STAMP)
$(DEB_STAMP): $(STAMPS)/series kconfig/deb.config scripts/kernel/build-deb.sh scripts/kernel/deb-warnings.sh \
		scripts/kernel/assert-config.sh | deps
	@scripts/kernel/build-deb.sh --tree $(TREE) --baseline-tree $(BASE_TREE) --patches patches --flavour $(FLAVOUR) --out $(DEB_OUT) \
		$(if $(filter 1,$(DEB_CACHED_ONLY)),--cached-only)

# --- guest programs and images (scripts/image/) -------------------------------
# What goes where: the `dir` lines of qemu-boot/suites.list. The builds
# are incremental and an archive is rewritten only when its contents
# change, so what depends on it is not redone for nothing.

guest-programs: kernel
	@$(MAKE) -s --no-print-directory -C cgroup-tests O=$(abspath $(GUEST)) \
		KSRC=$(abspath $(TREE)) KHDR=$(abspath $(KOUT)/usr/include)
	@$(MAKE) -s --no-print-directory -C qemu-boot/harness O=$(abspath $(GUEST)/harness) \
		KSRC=$(abspath $(TREE)) KHDR=$(abspath $(KOUT)/usr/include)
	@for s in selftests:cgroup memfd:memfd cgroup-tmpfs:cgroup-tmpfs; do scripts/kernel/build-selftests.sh \
		--tree $(TREE) --headers $(KOUT)/usr/include --out $(GUEST)/$${s%:*} --suite $${s#*:} || exit; done
	@scripts/kernel/build-mm-selftests.sh --tree $(TREE) --headers $(KOUT)/usr/include --out $(GUEST)/mm

# the initramfs of every boot (base), cgroup-tests' own (tests), make
# check-tools' (integration)
$(INITRAMFS)/%.cpio: guest-programs FORCE
	@mkdir -p $(INITRAMFS)
	@scripts/image/build-initramfs.sh $(if $(filter base,$*),--base) $@ $(call specs,$*)

# The baseline kernel's failures of the peers (scripts/verdict/baseline.sh):
# they excuse the same failures of the patched kernel, which does not
# rerun a program whose only failures are these (known-failures).
$(RUNS)/baseline/records.tsv: $(BASE_BZIMAGE) $(INITRAMFS)/base.cpio scripts/vm/boot.sh scripts/verdict/ktap-records.awk
	@scripts/verdict/baseline.sh --kernel $(BASE_BZIMAGE) --initrd $(INITRAMFS)/base.cpio \
		--mode selftests --logdir $(RUNS)/baseline --timeout $(WATCHDOG)

$(RUNS)/baseline-debug/records.tsv: $(BASE_DEBUG_BZIMAGE) $(INITRAMFS)/base.cpio scripts/vm/boot.sh scripts/verdict/ktap-records.awk
	@scripts/verdict/baseline.sh --kernel $(BASE_DEBUG_BZIMAGE) --initrd $(INITRAMFS)/base.cpio \
		--mode peers --logdir $(RUNS)/baseline-debug --timeout $(DEBUG_WATCHDOG)

baseline-selftests: $(RUNS)/baseline/records.tsv

$(INITRAMFS)/known-%.cpio: $(RUNS)/%/records.tsv
	@scripts/image/build-initramfs.sh $@ $(RUNS)/$*/known-failures:/opt/harness/known-failures

$(INITRAMFS)/tests.cpio: $(INITRAMFS)/base.cpio $(INITRAMFS)/cgroup-tests.cpio
	@cat $^ > $@

$(INITRAMFS)/check.cpio: $(INITRAMFS)/tests.cpio $(INITRAMFS)/known-baseline.cpio
	@cat $^ > $@

$(INITRAMFS)/check-debug.cpio: $(INITRAMFS)/tests.cpio $(INITRAMFS)/known-baseline-debug.cpio
	@cat $^ > $@

$(INITRAMFS)/check-tools.cpio: $(INITRAMFS)/base.cpio $(INITRAMFS)/integration.cpio
	@cat $^ > $@

initramfs: $(INITRAMFS)/tests.cpio

# --- runs (scripts/vm/, scripts/verdict/) ---------------------------------------

# make check: the suites of qemu-boot/suites.list's mode check, then a boot
# in each of its modes nomemcg (cgroup_disable=memory), notmpfs
# (cgroup.memory=notmpfs) and nokmem (cgroup.memory=nokmem), then a boot
# of the PREEMPT_RT kernel (kernel-rt) in mode rt; the sum of the five
CHECK_MODES := check nomemcg notmpfs nokmem
check: kernel kernel-rt $(INITRAMFS)/check.cpio
	@s=0; $(CHECK) --kernel $(BZIMAGE) --initrd $(INITRAMFS)/check.cpio --logdir $(RUNS)/check --timeout $(WATCHDOG) \
		--baseline $(RUNS)/baseline/records.tsv $(if $(STRESS_APPEND),--append "$(STRESS_APPEND)") $(CHECK_MODES) || s=1; \
	echo; $(CHECK) --kernel $(RT_BZIMAGE) --initrd $(INITRAMFS)/tests.cpio --logdir $(RUNS)/check-rt --timeout $(WATCHDOG) \
		$(if $(STRESS_APPEND),--append "$(STRESS_APPEND)") rt || s=1; \
	echo; scripts/verdict/sum-verdicts.sh $(RUNS)/check/verdict.txt $(foreach m,$(filter-out check,$(CHECK_MODES)) rt,\
		$(RUNS)/check-$(m)/verdict.txt) || s=1; exit $$s

# PEERS=0: without the kernel's selftests, so without the baseline debug
# kernel's run either (CI's bounded run)
check-debug: kernel-debug $(INITRAMFS)/$(if $(filter 0,$(PEERS)),tests,check-debug).cpio
	@$(CHECK) --kernel $(DEBUG_BZIMAGE) --initrd $(lastword $^) --logdir $(RUNS)/check-debug --timeout $(DEBUG_WATCHDOG) \
		$(if $(filter 0,$(PEERS)),,--baseline $(RUNS)/baseline-debug/records.tsv) --append "$(DEBUG_APPEND)" check-debug

# the limit set from cgroup-tools, libcgroup's API and crun (the usual
# initramfs), from systemd's TmpfsMax= (a Debian root with the patched
# systemd as PID 1), from podman, LXC and docker (a Debian root, on both
# kernels: there each tool must refuse the keys with its own error)
check-integration: check-tools check-systemd check-containers
	@scripts/verdict/sum-verdicts.sh $(foreach r,tools systemd containers containers-baseline,$(RUNS)/check-$(r)/verdict.txt)

check-tools: kernel $(INITRAMFS)/check-tools.cpio
	@command -v crun >/dev/null || { echo "check-tools: crun is missing; run make deps" >&2; exit 1; }
	@$(CHECK) --kernel $(BZIMAGE) --initrd $(INITRAMFS)/check-tools.cpio --logdir $(RUNS)/check-tools --timeout $(WATCHDOG) integration

# Debian's systemd with patches/systemd/, built once and cached outside
# the checkout, keyed by its inputs (about 15 minutes when not cached)
SYSTEMD_DEBS := $(BUILD)/systemd-pkg/debs/.built
$(SYSTEMD_DEBS): $(wildcard patches/systemd/*.patch) scripts/image/build-systemd.sh | deps
	@scripts/image/build-systemd.sh patches/systemd $(BUILD)/systemd-pkg

SYSTEMD_IMG := $(BUILD)/systemd-root.img
$(SYSTEMD_IMG): $(SYSTEMD_DEBS) $(wildcard qemu-boot/systemd/*) qemu-boot/harness/ktap.sh \
		scripts/image/build-systemd-root.sh guest-programs
	@scripts/image/build-systemd-root.sh --root $(BUILD)/systemd-root/root --debs $(BUILD)/systemd-pkg/debs \
		--ktap-run $(GUEST)/harness/ktap-run --out $@

# make repo: an apt repository of make deb's kernel packages and the
# patched systemd's (README, Install)
KVERSION = $(shell $(MAKE) -s --no-print-directory -C $(TREE) kernelversion)
REPO = $(BUILD)/repo/$(FLAVOUR)
repo: $(REPO)/Packages
$(REPO)/Packages: $(DEB_STAMP) $(SYSTEMD_DEBS) scripts/image/build-repo.sh
	@scripts/image/build-repo.sh --kernel-debs $(DEB_OUT)/debs --systemd-debs $(BUILD)/systemd-pkg/debs --out $(REPO)

# make check-installed: the repository's packages installed with apt in a
# Debian root, booted on the packaged kernel and, the control, on Debian's
# own kernel package of the same release
INSTALLED = $(BUILD)/installed/$(FLAVOUR)
INSTALLED_RELEASE = $(KVERSION)+memtmpfs-$(FLAVOUR)
DEBIAN_RELEASE = $(KVERSION)+deb12-$(FLAVOUR)
$(INSTALLED)/root.img: $(REPO)/Packages $(wildcard qemu-boot/installed/*) qemu-boot/harness/ktap.sh \
		scripts/image/build-installed-root.sh | guest-programs
	@scripts/image/build-installed-root.sh --root $(BUILD)/installed-root/root --repo $(REPO) \
		--release $(INSTALLED_RELEASE) --debian-release $(DEBIAN_RELEASE) \
		--ktap-run $(GUEST)/harness/ktap-run --out $(INSTALLED)

check-installed: $(INSTALLED)/root.img
	@s=0; for k in patched:$(INSTALLED_RELEASE) debian:$(DEBIAN_RELEASE); do \
		$(CHECK) --kernel $(INSTALLED)/boot-$${k%%:*}/vmlinuz --initrd $(INSTALLED)/boot-$${k%%:*}/initrd.img \
			--disk $< --logdir $(RUNS)/check-installed-$${k%%:*} --timeout $(WATCHDOG) \
			--append "root=/dev/vda rw harness.kernel=$${k%%:*} harness.release=$${k#*:}" installed || s=1; \
		echo; done; \
	scripts/verdict/sum-verdicts.sh $(RUNS)/check-installed-patched/verdict.txt \
		$(RUNS)/check-installed-debian/verdict.txt || s=1; exit $$s

check-systemd: kernel $(SYSTEMD_IMG)
	@$(CHECK) --kernel $(BZIMAGE) --initrd - --disk $(SYSTEMD_IMG) --logdir $(RUNS)/check-systemd --timeout $(WATCHDOG) systemd

# the container tools' Debian root (packages fetched once: about 2 minutes)
CONTAINERS_ROOT := $(BUILD)/containers-root/root
CONTAINERS_IMG := $(BUILD)/containers-root.img
containers-fetch: | deps
	@scripts/image/build-containers-root.sh fetch $(CONTAINERS_ROOT)

$(CONTAINERS_IMG): $(wildcard qemu-boot/containers/*) qemu-boot/harness/ktap.sh \
		scripts/image/build-containers-root.sh guest-programs | deps
	@scripts/image/build-containers-root.sh image $(CONTAINERS_ROOT) $(GUEST)/harness/ktap-run $@

check-containers: kernel baseline $(CONTAINERS_IMG)
	@$(CHECK) --kernel $(BZIMAGE) --initrd - --disk $(CONTAINERS_IMG) --logdir $(RUNS)/check-containers \
		--timeout $(WATCHDOG) --append "init=/opt/harness/containers-init harness.kernel=patched" containers; \
	$(CHECK) --kernel $(BASE_BZIMAGE) --initrd - --disk $(CONTAINERS_IMG) --logdir $(RUNS)/check-containers-baseline \
		--timeout $(WATCHDOG) --append "init=/opt/harness/containers-init harness.kernel=baseline" containers; \
	echo; scripts/verdict/sum-verdicts.sh $(RUNS)/check-containers/verdict.txt $(RUNS)/check-containers-baseline/verdict.txt

demo: kernel $(INITRAMFS)/base.cpio
	@scripts/vm/boot.sh --kernel $(BZIMAGE) --initrd $(INITRAMFS)/base.cpio --mode demo --logdir $(RUNS)/demo --timeout $(WATCHDOG)

shell: kernel initramfs
	@scripts/vm/boot.sh --kernel $(BZIMAGE) --initrd $(INITRAMFS)/tests.cpio --mode shell --logdir $(RUNS)/shell --interactive

run-guest: $(KERNEL_BZIMAGE) $(INITRAMFS)/base.cpio
	$(if $(filter patched baseline,$(KERNEL)),,$(error KERNEL=$(KERNEL): say patched or baseline))
	@scripts/vm/run-guest.sh --script "$(SCRIPT)" $(if $(FILES),--files "$(FILES)") --kernel $(KERNEL_BZIMAGE) \
		--initrd $(INITRAMFS)/base.cpio --logdir $(RUNS)/run-guest --timeout $(WATCHDOG)

check-harness: kernel $(INITRAMFS)/base.cpio
	@scripts/verdict/check-harness.sh --kernel $(BZIMAGE) --initrd $(INITRAMFS)/base.cpio --logdir $(RUNS)/check-harness

# --- measuring (scripts/measure/) ---------------------------------------------

MEASURE := --kernel $(BZIMAGE) --baseline-kernel $(BASE_BZIMAGE) --initrd $(INITRAMFS)/base.cpio --timeout $(WATCHDOG)
# bench and profile: the kernels built like Debian's (kernel-bench)
BENCH_MEASURE := --kernel $(BENCH_BZIMAGE) --baseline-kernel $(BASE_BENCH_BZIMAGE) \
	--initrd $(INITRAMFS)/base.cpio --timeout $(WATCHDOG)

hole: kernel $(BASE_BZIMAGE) $(INITRAMFS)/base.cpio
	@scripts/measure/hole.sh $(MEASURE) --logdir $(RUNS)/hole

bench: kernel-bench $(BASE_BENCH_BZIMAGE) $(INITRAMFS)/base.cpio
	@scripts/measure/bench.sh $(BENCH_MEASURE) --outdir $(BUILD)/bench --rounds $(BENCH_ROUNDS) --reps $(BENCH_REPS)

profile: kernel-bench $(BASE_BENCH_BZIMAGE) $(INITRAMFS)/base.cpio
	@scripts/measure/profile.sh $(BENCH_MEASURE) --outdir $(BUILD)/profile --config $(PROFILE_CONFIG)

clean:
	rm -rf $(KOUT) $(BASE_KOUT) $(DKOUT) $(BASE_DKOUT) $(GUEST) $(INITRAMFS) $(RUNS) $(STAMPS)/series

distclean:
	rm -rf $(BUILD)

FORCE:

.PHONY: help deps cross kernel baseline kernel-debug baseline-debug check-debug check-integration check-tools \
	check-systemd check-containers containers-fetch bench profile print-kernel export-series bisect \
	kernel-bench baseline-bench deb kernel-rt repo check-installed \
	config-matrix guest-programs initramfs baseline-selftests check demo hole shell run-guest \
	check-harness clean distclean FORCE
