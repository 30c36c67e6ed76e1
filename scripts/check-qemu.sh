#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check-qemu": QEMU with vmrapl, inside the rig (issue 14).  The
# rig's rapl variant (the QEMU of "make qemu", emulating AMD RAPL) boots
# the newest host kernel (RAPL_KVER), and selftests/vmrapl/rapl_qemu.c
# runs the same patched QEMU in it with -accel kvm,vmrapl=on: a nested
# Debian guest whose own amd_rapl powercap driver and perf read the
# energy vmrapl gives its VM, migrates, and is checked against the power
# model's truth.  "make check" runs it in its rapl variant; this target
# runs it alone (about 3 minutes with the module's build and the rig's
# boot), for work on the QEMU patches.  A summary table and "N passed, N
# failed", as "make check".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logdir=$top/build/check-qemu
mkdir -p "$logdir"

. "$top/scripts/check-lib.sh"

kver_lists
kver=${RAPL_KVER:-${host_kvers[-1]:-}}
if [[ -z $kver ]]; then
	record "kernel headers present" 0 1 0 0
else
	rig_qemu
	single "module build $kver" '(warning|error):' \
		make --no-print-directory module KVER="$kver"
	single "selftests build" '(warning|error):' make --no-print-directory selftests
	if scripts/qemu.sh path > /dev/null 2>&1; then
		RIG_ONLY=rapl_qemu rig "$kver" rapl
	fi
fi
summary
