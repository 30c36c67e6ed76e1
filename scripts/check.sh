#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check": every build, lint, unit, DKMS and rig step, run to the end
# even when one fails, then a summary table and one closing line
# "N passed, N failed".  Exit status is non-zero when anything failed.
#
# Environment:
#   RIG_VARIANTS     extra rig variants (default "numa"; empty: none), run on RIG_VARIANT_KVER
#   RIG_VARIANT_KVER kernel for the variants (default: oldest installed)
#   RAPL_KVER        kernel for the rapl variant (default: newest host kernel)
#   CHECK_SKIP       steps to skip, e.g. "rig dkms" ("rapl": the rapl
#                    variant; "intel": the intel variant; "docs": make
#                    doc-check)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logdir=$top/build/check
mkdir -p "$logdir"

. "$top/scripts/check-lib.sh"

# 1. dependencies
if scripts/deps.sh --check > /dev/null 2>&1; then
	echo "check: deps present"
else
	single "deps" "" scripts/deps.sh
fi

# The kernels: the host's (6.1, 6.12) and the trixie build root's 7.x
# (scripts/kernels.sh).  The full suite runs on the host's and on the
# newest one; every other 7.x series gets a build here, and a smoke
# subset of the rig (SMOKE_PROGS) in "make check-rig".
kver_lists
kvers=("${host_kvers[@]}" "${new_kvers[@]}")
if [[ ${#host_kvers[@]} == 0 ]]; then
	record "kernel headers present" 0 1 0 0
fi
if [[ ${#new_kvers[@]} == 0 ]]; then
	record "7.x kernels present (make deps)" 0 1 0 0
fi

# 2. builds (W=1, any compiler warning is a failure), on every core: the
# steps that only build get -j; nothing that runs a test does (unit's and
# bench's runs are each one recipe, so -j only reaches their builds)
warn_re='(warning|error):'
jobs=-j$(nproc)
for k in "${kvers[@]}"; do
	rm -rf "build/$k"	# a fresh build, so no warning hides behind make's up-to-date check
	single "module build $k W=1" "$warn_re" make --no-print-directory "$jobs" module KVER="$k" W=1
	single "test module build $k W=1" "$warn_re" make --no-print-directory testmod KVER="$k" W=1
done
if [[ -f userspace/Makefile ]]; then
	single "userspace build" "$warn_re" make --no-print-directory "$jobs" userspace
fi
single "selftests build" "$warn_re" make --no-print-directory "$jobs" selftests
# The supported window: out-of-window kernels stop at compat.h's #error.
if [[ ${#host_kvers[@]} -gt 0 ]]; then
	tap "kernel window" scripts/window-test.sh "/usr/src/linux-headers-${host_kvers[0]}"
fi

# 3. unit tests; the simulator and hot-path benchmark in quick mode (one
# step: passes when they run and vmrapl's conservation holds, never on a
# timing)
tap "unit tests" make --no-print-directory "$jobs" unit
single "bench quick" "" make --no-print-directory "$jobs" bench-quick
# The bench's accuracy plot, drawn from the quick run (gnuplot), must be a
# valid, non-blank PNG of its size (scripts/png-check.py)
single "plot" "" scripts/plot-bench.sh bench/sim/out/quick.json build/check/accuracy-quick.png
# and the power-limit bench's time series, from its quick run
single "limit plot" "" scripts/plot-limit.sh bench/sim/out/limit-series-quick.csv build/check/limit-quick.png
# The exporter's Prometheus rules and their unit tests (promtool)
single "promtool rules" "" make --no-print-directory prom-rules

# 4. lint, and the documents
if ! skipping lint; then
	for k in "${full_kvers[@]}"; do
		single "sparse $k" "" make --no-print-directory "$jobs" sparse KVER="$k"
	done
	single "checkpatch" "" make --no-print-directory checkpatch
fi
# The documents against the tree (scripts/doc-check.py): links and paths,
# make targets, the tools' options, the RST through docutils; first the
# checker's own test, which breaks a copy of them in each of those ways
if ! skipping docs; then
	tap "doc check self-test" scripts/doc-check-test.sh
	single "doc check" "" make --no-print-directory doc-check
fi

# 5. DKMS, and install/uninstall into a staging root
if ! skipping dkms; then
	tap "dkms" make --no-print-directory dkms-test
fi
tap "install" make --no-print-directory install-test
# The Debian packages (built lintian clean, installed, upgraded and purged
# in a clean Debian 12 root, about a minute) are "make deb-test", which
# .ci/run runs, beside check-libvirt's hypervisor that boots with them.

# 6. QEMU rig, with the QEMU of "make qemu" (10.0.2 and the project's
# patches; built once per patch series, then cached): every variant boots
# it, the emulated RAPL counters of the rapl variant included
# (Documentation/testing.rst, "Which QEMU")
if ! skipping rig && [[ ${#full_kvers[@]} -gt 0 ]]; then
	rig_qemu
	# The power model as a QEMU user drives it, no guest (about 10 s):
	# hotplug into a later slot first, thread=single, a migration; and
	# the amd-rapl CPUID feature as QEMU's tooling sees it.
	tap "qemu model" scripts/qemu-model-test.py
	# The series on this machine's KVM with fake-vmrapl.so standing in
	# for /dev/vmrapl (about 15 s; it skips without a usable /dev/kvm),
	# and its functional test, whose tests that need the module skip
	# here (about 3 s; the rig's rapl variant runs them with it).
	tap "qemu smoke" userspace/qemu/tests/smoke.sh
	tap "qemu functional" scripts/qemu-functional.sh
	# Programs with no kernel difference to find run on the newest full
	# kernel only (RIG_ONCE): tools (vmraplctl and the exporter over the
	# uapi, 27 s a boot), fuzz (the ioctls' argument checks, vmrapl's
	# own code on every kernel, 17 s a boot), stall (no user copy under
	# a vmrapl lock: vmrapl's own locking, no compat code on its path,
	# 17 s a boot) and vmm (the reference VMM's own logic, 28 s a boot;
	# the kernel paths under it, the mmap page and the guest's MSR
	# exits, are msr's and basic's on every kernel).  check-debug runs
	# them all under KASAN and lockdep too.
	once=" ${RIG_ONCE-tools fuzz stall vmm} "
	rest=$(cd selftests/vmrapl && ls *.c | sed 's/\.c$//' |
		grep -Ev '^(demo|bench|prom|numa|rapl|intel)' | tr '\n' ' ')
	for k in "${full_kvers[@]}"; do
		if [[ $k != "${full_kvers[-1]}" && -n ${once// /} ]]; then
			only=
			for p in $rest; do
				[[ $once == *" $p "* ]] || only+="$p "
			done
			RIG_ONLY=$only RIG_NOTE="all but${once% }" rig "$k"
		else
			rig "$k"
		fi
	done
	# The smoke subset of the other 7.x series (attribution end to end
	# and ATTACH_VM's checks, about 60 s a kernel) is "make check-rig"'s,
	# for this suite's budget; their module builds (W=1) stay above.
	# The rig's tests of itself (its silence watchdog, its triple-fault
	# retry; about 85 s) are "make check-rig", which .ci/run runs.
	# Each variant runs its own programs: basic's package and topology
	# checks already ran on every kernel, and numa checks the packages of
	# a NUMA machine itself (about 15 s less).
	for v in ${RIG_VARIANTS-numa}; do
		RIG_ONLY="$v" rig "${RIG_VARIANT_KVER:-${host_kvers[0]}}" "$v"
	done
	# Emulated AMD RAPL hardware, one kernel: vmrapl's AMD source
	# against the model's truth (rapl, which checks the source, its
	# units and its per-core counters itself: basic, 16-20 s a boot,
	# ran on every kernel already), and the project's QEMU with
	# vmrapl=on inside the rig, whose nested Debian guest reads its own
	# energy with powercap and perf (rapl_qemu, about 2.5 minutes), and
	# the series' functional test against the module (rapl_qemu_functional),
	# and vmrapl-limitd holding a VM to its power limit on real cgroups
	# (rapl_limit, about 40 s: the model's power follows the load).
	if ! skipping rapl; then
		RIG_ONLY="rapl rapl_qemu rapl_qemu_functional rapl_limit" rig "${RAPL_KVER:-${host_kvers[-1]}}" rapl
	fi
	# Emulated Intel RAPL hardware (an Ice Lake server CPU model), the
	# same kernel: vmrapl's Intel source against powercap, perf and the
	# model's truth, the fixed DRAM unit and a wrap of every counter.
	# No KVM there (TCG has no VMX): intel alone.
	if ! skipping intel; then
		RIG_ONLY="intel" rig "${RAPL_KVER:-${host_kvers[-1]}}" intel
	fi
	# The exporter's /metrics bodies the rig's tools test printed (on the
	# newest full kernel only, unless RIG_ONCE leaves tools out).
	logs=("build/rig-${full_kvers[-1]}.log")
	if [[ $once != *" tools "* ]]; then
		for k in "${full_kvers[@]:0:${#full_kvers[@]}-1}"; do
			logs+=("build/rig-$k.log")
		done
	fi
	single "promtool check metrics" "" scripts/promtool-check.sh "${logs[@]}"
	# The fleet under a real Prometheus (rig.mode=prom, ~5 min) is "make
	# prom-check", which .ci/run runs after this: with the 7.x kernels and
	# the rapl variant, make check alone would pass 25 min.
fi

# Summary
summary
