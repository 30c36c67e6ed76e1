#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check-intel": vmrapl's Intel source on the kernels "make check"
# does not run it on.  make check runs the rig's intel variant (an Ice
# Lake server CPU model whose RAPL registers the project's QEMU emulates,
# selftests/vmrapl/intel.c) on one kernel, RAPL_KVER, for its time
# budget; the kernel's own readers it is checked against (intel_rapl_msr,
# perf's power PMU) and the module's compat paths differ between kernels,
# so .ci/run runs it here on every other full kernel: the host's other
# one (6.1) and the trixie root's newest (7.3.4), about 100 s each.  A
# summary table and "N passed, N failed", as "make check".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logdir=$top/build/check-intel
mkdir -p "$logdir"

. "$top/scripts/check-lib.sh"

kver_lists
done_kver=${RAPL_KVER:-${host_kvers[-1]:-}}
if [[ ${#host_kvers[@]} == 0 ]]; then
	record "kernel headers present" 0 1 0 0
else
	rig_qemu
	single "selftests build" '(warning|error):' make --no-print-directory selftests
	for k in "${full_kvers[@]}"; do
		[[ $k == "$done_kver" ]] && continue
		single "module build $k" '(warning|error):' \
			make --no-print-directory module KVER="$k"
		RIG_ONLY=intel rig "$k" intel
	done
fi
summary
