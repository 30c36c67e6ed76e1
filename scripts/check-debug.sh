#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check-debug": the whole selftest suite on the debug kernel (KASAN,
# lockdep, kmemleak, UBSAN, debugobjects, failslab; scripts/debug-kernel.sh
# builds it once and caches it), in the rig's debug variant, where any
# report of those checkers fails the run.  Then a summary table and one
# closing line "N passed, N failed", as "make check".
#
# Environment: as scripts/debug-kernel.sh (VMRAPL_DEBUG_KERNEL_CACHE, ...)
# and selftests/rig/run.sh (RIG_TIMEOUT, RIG_TEST_TIMEOUT, RIG_ONLY, ...).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logdir=$top/build/check-debug
mkdir -p "$logdir"

. "$top/scripts/check-lib.sh"

# 1. the debug kernel (built once per linux-source version and fragment)
single "debug kernel" "" scripts/debug-kernel.sh
env=$(scripts/debug-kernel.sh --print-env 2> /dev/null) || env=
if [[ -n $env ]]; then
	eval "$env"
	export RIG_KERNEL RIG_MODDIR
	grep -E '^debug-kernel: (built|cached)' "$logdir/debug_kernel.log"

	# 2. vmrapl against it (W=1: any warning fails, as in "make check"),
	# and the selftests
	rm -rf "build/$DEBUG_KVER"
	single "module build $DEBUG_KVER W=1" '(warning|error):' \
		make --no-print-directory module KDIR="$DEBUG_KDIR" W=1
	single "test module build $DEBUG_KVER W=1" '(warning|error):' \
		make --no-print-directory testmod KDIR="$DEBUG_KDIR" W=1
	single "selftests build" '(warning|error):' make --no-print-directory selftests

	# 3. the whole suite in the rig's debug variant
	rig_qemu
	if [[ -f build/$DEBUG_KVER/vmrapl.ko ]]; then
		rig "$DEBUG_KVER" debug
	fi
fi

summary
