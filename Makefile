# SPDX-License-Identifier: GPL-2.0
#
# vmrapl top-level Makefile: drives kbuild for the module (see Kbuild),
# userspace, the selftests, lint, DKMS and the QEMU test rig.
#
#   make                      module for KVER + userspace
#   make KVER=<release> / make KDIR=/path/to/kernel/build  ("make kver":
#                             the default; releases: ls /lib/modules)
#   make KVER=<7.x release>   (builds in the trixie root "make deps" made;
#                             releases: scripts/kernels.sh list)
#   make modules-all          module for every installed linux-headers-*-amd64
#                             and every 7.x kernel of the trixie build root
#   make lint                 sparse (C=2) + checkpatch --strict
#   make testmod              the selftests' test module (selftests/fakekvm)
#                             for KVER, which the rig carries
#   make doc-check            README, Documentation/, bench/RESULTS.md and
#                             the man pages against the tree: links and
#                             paths, make targets, the tools' options, RST
#                             through docutils (scripts/doc-check.py)
#   make unit                 unit tests of the core and of userspace (TAP)
#   make vmtest KVER=...      boot KVER under QEMU and run the selftests
#   make check                everything above, summary + "N passed, N failed"
#   make check-debug          the selftests on a KASAN/lockdep/kmemleak kernel
#   make deb                  Debian packages into build/deb (lintian-checked)
#   make deb-test             install, upgrade, purge them in a clean root
#   make check-qemu-next      the QEMU series on the newest QEMU Debian carries
#   make check-qemu           QEMU with vmrapl inside the rig alone (make check
#                             runs it too): a nested Debian
#                             guest reads its energy (rapl_qemu.c)
#   make check-intel          the rig's intel variant on the full kernels
#                             make check does not run it on (.ci/run does)
#   make check-rig            the rig's watchdog and triple-fault retry,
#                             the smoke subset on the older 7.x (.ci/run)
#   make check-libvirt        a booted Debian hypervisor in the rig: the
#                             packages, and libvirt's domains (.ci/run)
#   make debug-kernel         build (or reuse) that kernel only
#   make demo                 build, boot the rig and run the demo program
#   make try                  boot the rig with the demo's VMs and a shell
#                             to try the tools in (exit ends it)
#   make readme-demo          make demo, and its output into README.md
#   make prom-check           a fleet of two rig hypervisors under one real
#                             Prometheus: rules, dashboard queries, Chromium
#   make prom-rules           promtool check and unit tests of the exporter's
#                             rules (userspace/exporter/vmrapl.rules.yml)
#   make qemu                 the rig's QEMU 10, which every rig run boots:
#                             the emulated AMD RAPL counters of the rapl
#                             variant, TCG plugins and
#                             -accel kvm,vmrapl=on (libvmrapl linked in), and
#                             the vr-icount plugin of the icount variant
#                             (scripts/qemu.sh; cached in /var/cache/vmrapl/qemu)
#   make bench                the simulator's full runs and the rig's
#                             benchmarks into bench/RESULTS.md
#   make bench-limit          the rig's power-limit benchmark alone
#                             (BENCH_LIMIT_BOOTS boots, default 3)
#   make dkms-install / dkms-uninstall / dkms-test / deps / clean

TOP := $(CURDIR)
BUILD := $(TOP)/build

# Kernel to build against.  KDIR alone implies its own release; otherwise
# the running kernel if it has a build dir, else the newest installed one.
ifeq ($(KVER),)
ifneq ($(KDIR),)
# UTS_RELEASE, not include/config/kernel.release: Debian's headers keep
# the upstream version there (6.1.192), not the package's (6.1.0-56-amd64).
KVER := $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
else
KVER := $(shell k=$$(uname -r); \
	if [ -d /lib/modules/$$k/build ]; then echo $$k; else \
	ls -d /lib/modules/*-amd64/build 2>/dev/null | \
	sed 's|^/lib/modules/||; s|/build$$||' | sort -V | tail -n1; fi)
endif
endif
# A kernel whose headers need a newer userland than the host's (7.x on
# Debian 12) builds inside the cached trixie root (scripts/kernels.sh,
# made by "make deps"), transparently: same command, same build/<KVER>.
VMRAPL_CACHE ?= /var/cache/vmrapl
KROOT := $(VMRAPL_CACHE)/trixie-root
ifeq ($(KDIR)$(wildcard /lib/modules/$(KVER)/build),)
ifneq ($(wildcard $(KROOT)/usr/src/linux-headers-$(KVER)),)
KDIR := /usr/src/linux-headers-$(KVER)
KCHROOT := $(TOP)/scripts/kernels.sh run
KDIR_TEST := $(KROOT)$(KDIR)
endif
endif
KDIR ?= /lib/modules/$(KVER)/build
KDIR_TEST ?= $(KDIR)

# Every kernel with an installed headers package.
ALL_KVERS := $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | \
	sed 's|^/usr/src/linux-headers-||' | sort -V)
# The 7.x kernels of the trixie build root ("make deps").
NEW_KVERS := $(shell $(TOP)/scripts/kernels.sh list 2>/dev/null)

MODDIR := $(BUILD)/$(KVER)
KSRC := $(BUILD)/ksrc
KSRC_STAMP := $(KSRC)/.stamp

# The one version (VERSION), for DKMS, the module, the tools, pkg-config.
VERSION_STR := $(strip $(shell cat $(TOP)/VERSION))

KMOD_SRCS := $(wildcard $(TOP)/kmod/*.c $(TOP)/kmod/*.h)
LINT_FILES := $(wildcard kmod/*.c kmod/*.h kmod/user/*.h uapi/linux/*.h selftests/fakekvm/*.c)

KBUILD_MAKE = $(KCHROOT) $(MAKE) -C $(KDIR) M=$(MODDIR) VMRAPL_SRCTREE=$(TOP)

.PHONY: install uninstall install-test all module testmod modules-all userspace selftests unit bench bench-limit bench-quick \
	lint sparse doc-check qemu \
	checkpatch ksrc deps check check-debug check-qemu check-qemu-next check-intel check-rig check-libvirt deb deb-test debug-kernel vmtest demo try readme-demo prom-check prom-rules dkms-install dkms-uninstall \
	dkms-test \
	clean help kver

all: module userspace

# The comment at the top, to its end.
help:
	@sed -n '3,/^$$/s/^# \{0,1\}//p' $(TOP)/Makefile

kver:
	@echo $(KVER)

# kbuild writes objects next to the sources it is given, so each kernel
# gets its own tree of symlinks (build/<KVER>/) and builds for different
# kernels never clobber each other or the source tree.
$(MODDIR)/.mirror: FORCE
	@test -n "$(KVER)" || { echo "no kernel headers found; run 'make deps'" >&2; exit 1; }
	@test -d "$(KDIR_TEST)" || { echo "KDIR $(KDIR_TEST) does not exist (headers for $(KVER) not installed; 7.x kernels: 'make deps')" >&2; exit 1; }
	@mkdir -p $(MODDIR)/kmod
	@ln -sfn $(TOP)/Kbuild $(MODDIR)/Kbuild
	@ln -sfn $(TOP)/uapi $(MODDIR)/uapi
	@for f in $(KMOD_SRCS); do ln -sfn $$f $(MODDIR)/kmod/; done
	@find $(MODDIR)/kmod -xtype l -delete
	@touch $@

module: $(MODDIR)/.mirror
	+$(KBUILD_MAKE) modules
	@echo "built $(MODDIR)/vmrapl.ko"

# The selftests' own module (selftests/fakekvm): built per kernel for the
# rig, never by DKMS or "make install".
FAKEKVM_DIR := $(MODDIR)/fakekvm
testmod: $(MODDIR)/.mirror
	@mkdir -p $(FAKEKVM_DIR)
	@ln -sfn $(TOP)/selftests/fakekvm/Kbuild $(FAKEKVM_DIR)/Kbuild
	@ln -sfn $(TOP)/selftests/fakekvm/vr_fakekvm.c $(FAKEKVM_DIR)/vr_fakekvm.c
	+$(KCHROOT) $(MAKE) -C $(KDIR) M=$(FAKEKVM_DIR) modules
	@echo "built $(FAKEKVM_DIR)/vr_fakekvm.ko"

modules-all:
	@set -e; for k in $(ALL_KVERS); do \
		echo "=== $$k"; $(MAKE) --no-print-directory module KVER=$$k KDIR=/lib/modules/$$k/build; \
	done; for k in $(NEW_KVERS); do \
		echo "=== $$k"; $(MAKE) --no-print-directory module KVER=$$k; \
	done

userspace:
	@if [ -f $(TOP)/userspace/Makefile ]; then $(MAKE) -C $(TOP)/userspace; fi

ksrc: $(KSRC_STAMP)
$(KSRC_STAMP):
	$(TOP)/scripts/ksrc.sh $(KSRC)

selftests: ksrc userspace
	$(MAKE) -C $(TOP)/selftests/vmrapl

# The accounting core's unit tests, then userspace's: libvmrapl,
# libvmrapl-host, vmraplctl and vmrapl-exporter against a fake device
# (userspace/vmraplctl/tests/tools.sh), the VMM smoke test (with /dev/kvm).
# Both run even when the first fails.
unit:
	@rc=0; $(MAKE) -C $(TOP)/selftests/unit run || rc=1; \
	if [ -f $(TOP)/userspace/Makefile ]; then \
		$(MAKE) -C $(TOP)/userspace test || rc=1; \
	fi; \
	exit $$rc

# Simulator and hot-path benchmark (bench/sim), then the rig benchmarks
# (selftests/vmrapl/bench*.c, rig.mode=bench) on one kernel (BENCH_KVER,
# default KVER): full runs to bench/RESULTS.md and bench/results.json.
# Then BENCH_ICOUNT_BOOTS boots (default 3, 0 for none) of the icount
# variant: instructions per context switch, counted by the vr-icount TCG
# plugin (about 3 minutes a boot).  Every boot runs in the QEMU of "make
# qemu", built first unless cached.
# bench-quick only checks that the simulator runs (no rig).
BENCH_KVER ?= $(KVER)
BENCH_ICOUNT_BOOTS ?= 3
ICOUNT_LOG = $(BUILD)/rig-$(BENCH_KVER)-icount-bench
bench:
	$(MAKE) -C $(TOP)/bench/sim full
	$(MAKE) --no-print-directory module selftests KVER=$(BENCH_KVER)
	$(TOP)/scripts/qemu.sh build > /dev/null
	-RIG_TIMEOUT=900 $(TOP)/selftests/rig/run.sh $(BENCH_KVER) --mode bench
	@rm -f $(ICOUNT_LOG).[0-9]*.*
	-@for i in $$(seq $(BENCH_ICOUNT_BOOTS)); do \
		RIG_TIMEOUT=900 $(TOP)/selftests/rig/run.sh $(BENCH_KVER) --variant icount --mode bench; \
		for f in log icount result; do \
			[ ! -e $(ICOUNT_LOG).$$f ] || cp $(ICOUNT_LOG).$$f $(ICOUNT_LOG).$$i.$$f; \
		done; \
	done
	$(TOP)/bench/rig/collect.sh $(BUILD)/rig-$(BENCH_KVER)-bench.log $(BENCH_KVER) \
		$(TOP)/bench/sim/out/RESULTS.md $(TOP)/bench/sim/out/full.json \
		$(TOP)/bench/RESULTS.md $(TOP)/bench/results.json \
		$$(ls $(ICOUNT_LOG).[0-9]*.log 2>/dev/null)
	$(TOP)/scripts/plot-bench.sh $(TOP)/bench/results.json $(TOP)/bench/accuracy.png
	$(TOP)/scripts/plot-limit.sh $(TOP)/bench/sim/out/limit-series.csv $(TOP)/bench/limit.png
	$(MAKE) --no-print-directory bench-limit

# The rig's power-limit benchmark: BENCH_LIMIT_BOOTS boots of the rapl
# variant running bench_limit, into bench/rig/limit.md and bench/RESULTS.md
# (about 2 min a boot).
BENCH_LIMIT_BOOTS ?= 3
bench-limit:
	$(MAKE) --no-print-directory module selftests userspace KVER=$(BENCH_KVER)
	$(TOP)/scripts/qemu.sh build > /dev/null
	@rm -f $(BUILD)/bench-limit.*.log
	-@for i in $$(seq $(BENCH_LIMIT_BOOTS)); do \
		RIG_ONLY=bench_limit RIG_TIMEOUT=900 $(TOP)/selftests/rig/run.sh \
			$(BENCH_KVER) --variant rapl --mode bench; \
		cp $(BUILD)/rig-$(BENCH_KVER)-rapl-bench.log $(BUILD)/bench-limit.$$i.log; \
	done
	python3 $(TOP)/bench/rig/limit.py $(TOP)/bench/rig/limit.md \
		$(TOP)/bench/RESULTS.md $(BUILD)/bench-limit.*.log

bench-quick:
	$(MAKE) -C $(TOP)/bench/sim quick

sparse: $(MODDIR)/.mirror
	@mkdir -p $(BUILD)/lint
	+@$(KBUILD_MAKE) C=2 CHECK=sparse modules > $(BUILD)/lint/sparse-$(KVER).log 2>&1 || \
		{ cat $(BUILD)/lint/sparse-$(KVER).log; exit 1; }
	@if grep -E '(warning|error):' $(BUILD)/lint/sparse-$(KVER).log; then \
		echo "sparse: findings above"; exit 1; fi
	@echo "sparse ($(KVER)): clean"

# Nothing is ignored: the version window and every kernel difference are
# decided in Kbuild, so the C code carries no version compare.
checkpatch: ksrc
	@if [ -z "$(LINT_FILES)" ]; then echo "checkpatch: no files"; exit 0; fi
	perl $(KSRC)/scripts/checkpatch.pl --strict --no-tree --color=never \
		--show-types -f $(LINT_FILES)

lint: sparse checkpatch

# The documents against the tree (python3-docutils: make deps).
doc-check:
	@python3 $(TOP)/scripts/doc-check.py

deps:
	@$(TOP)/scripts/deps.sh

qemu:
	@$(TOP)/scripts/qemu.sh build

vmtest: module testmod selftests qemu
	$(TOP)/selftests/rig/run.sh $(KVER) $(RIG_ARGS)

demo:
	@$(TOP)/scripts/demo.sh $(KVER)

# The rig as a playground: the demo's three VMs and a shell; exit ends it.
try: module userspace selftests qemu
	@$(TOP)/selftests/rig/run.sh $(KVER) --mode try

# One make demo run; the start and the end of what it printed replace
# README.md's demo section.
readme-demo:
	@$(TOP)/scripts/readme-demo.sh $(KVER)

# Two hypervisors (the oldest and newest host kernels, or PROM_KVERS="A B")
# under one Prometheus: the exporter, the rules, the dashboard, a browser.
prom-check: selftests
	@$(TOP)/scripts/prom-scrape.sh $(PROM_KVERS)

prom-rules:
	promtool check rules $(TOP)/userspace/exporter/vmrapl.rules.yml
	cd $(TOP)/userspace/exporter/tests && promtool test rules vmrapl.rules.test.yml
	python3 -m json.tool $(TOP)/userspace/exporter/grafana/vmrapl.json > /dev/null

check:
	@$(TOP)/scripts/check.sh

# QEMU's -accel kvm,vmrapl=on inside the rig's rapl variant, with a nested
# Debian guest (selftests/vmrapl/rapl_qemu.c); summary as check.
check-qemu:
	@$(TOP)/scripts/check-qemu.sh

check-intel:
	@$(TOP)/scripts/check-intel.sh

# An operator's hypervisor booted in the rig: the packages under systemd,
# Debian's libvirt running domains with vmrapl (scripts/libvirt-test.sh).
check-libvirt:
	@$(TOP)/scripts/libvirt-test.sh

# The rig's checks of itself: its silence watchdog and its triple-fault
# retry, and the smoke subset on the older 7.x kernels
# (scripts/check-rig.sh); summary as check.
check-rig:
	@$(TOP)/scripts/check-rig.sh

# Debian packages (debian/) into build/deb, and their install, upgrade
# and purge in a clean Debian 12 root (scripts/deb-test.sh, TAP).
deb:
	@$(TOP)/scripts/deb.sh

deb-test:
	@$(TOP)/scripts/deb-test.sh

# The series on the newest QEMU release Debian carries (QEMU_NEXT=1
# scripts/qemu.sh), without the module; summary as check.
check-qemu-next:
	@$(TOP)/scripts/check-qemu-next.sh

# The debug kernel (scripts/debug-kernel.sh: built once, cached under
# /var/cache/vmrapl/debug-kernel) and the whole selftest suite on it in
# the rig's debug variant; summary + "N passed, N failed" like check.
check-debug:
	@$(TOP)/scripts/check-debug.sh

debug-kernel:
	@$(TOP)/scripts/debug-kernel.sh

# DKMS: install the module source under /usr/src and let dkms build it.
DKMS_FILES := Kbuild Makefile dkms.conf VERSION kmod uapi
# DKMS_KVERS: kernels to build and install for now (AUTOINSTALL covers
# kernels installed later); default every kernel with headers installed.
DKMS_KVERS ?= $(ALL_KVERS)
dkms-install:
	@if dkms status -m vmrapl -v $(VERSION_STR) | grep -q .; then \
		dkms remove -m vmrapl -v $(VERSION_STR) --all; fi
	@rm -rf /usr/src/vmrapl-$(VERSION_STR)
	@mkdir -p /usr/src/vmrapl-$(VERSION_STR)
	cp -a $(addprefix $(TOP)/,$(DKMS_FILES)) /usr/src/vmrapl-$(VERSION_STR)/
	@sed -i 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(VERSION_STR)"/' \
		/usr/src/vmrapl-$(VERSION_STR)/dkms.conf
	dkms add -m vmrapl -v $(VERSION_STR)
	set -e; for k in $(DKMS_KVERS); do \
		dkms build -m vmrapl -v $(VERSION_STR) -k $$k; \
		dkms install -m vmrapl -v $(VERSION_STR) -k $$k; \
	done

dkms-uninstall:
	@if dkms status -m vmrapl -v $(VERSION_STR) | grep -q .; then \
		dkms remove -m vmrapl -v $(VERSION_STR) --all; fi
	rm -rf /usr/src/vmrapl-$(VERSION_STR)

# The 7.x kernels' DKMS builds run where their headers are, in the trixie
# build root: what DKMS does on a trixie host.
dkms-test:
	@rc=0; $(TOP)/scripts/dkms-test.sh $(VERSION_STR) $(ALL_KVERS) || rc=1; \
	if [ -n "$(NEW_KVERS)" ]; then \
		$(TOP)/scripts/kernels.sh run $(TOP)/scripts/dkms-test.sh \
			$(VERSION_STR) $(NEW_KVERS) || rc=1; \
	fi; exit $$rc

install-test:
	@$(TOP)/scripts/install-test.sh

# Userspace (library, header, pkg-config, vmraplctl and its man page, the
# exporter, its man page and its systemd unit, the reference VMM under
# lib/vmrapl) under PREFIX, plus what the system needs around the module:
# the udev rule that gives group kvm /dev/vmrapl, a modules-load.d entry
# that loads vmrapl at boot, and a modprobe.d file for its options.
# DESTDIR stages it; the module itself goes in with "make dkms-install".
# "make uninstall" removes exactly what "make install" put down.
PREFIX ?= /usr/local
UDEVDIR ?= /usr/lib/udev/rules.d
MODLOADDIR ?= /usr/lib/modules-load.d
MODPROBEDIR ?= /etc/modprobe.d
SYS_FILES := $(UDEVDIR)/60-vmrapl.rules $(MODLOADDIR)/vmrapl.conf \
	$(MODPROBEDIR)/vmrapl.conf

install: userspace
	$(MAKE) -C $(TOP)/userspace install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	install -D -m 0644 $(TOP)/udev/60-vmrapl.rules \
		$(DESTDIR)$(UDEVDIR)/60-vmrapl.rules
	install -D -m 0644 $(TOP)/udev/modules-load.conf \
		$(DESTDIR)$(MODLOADDIR)/vmrapl.conf
	install -D -m 0644 $(TOP)/udev/modprobe.conf \
		$(DESTDIR)$(MODPROBEDIR)/vmrapl.conf

uninstall:
	$(MAKE) -C $(TOP)/userspace uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	rm -f $(addprefix $(DESTDIR),$(SYS_FILES))

clean:
	rm -rf $(BUILD)
	@if [ -f $(TOP)/userspace/Makefile ]; then $(MAKE) -C $(TOP)/userspace clean; fi
	@if [ -f $(TOP)/selftests/unit/Makefile ]; then $(MAKE) -C $(TOP)/selftests/unit clean; fi

FORCE:
