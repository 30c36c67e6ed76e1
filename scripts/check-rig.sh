#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check-rig": the rig's checks of itself, which test the harness
# rather than vmrapl, out of "make check" for its budget (about 85 s):
# the silence watchdog on a kernel whose name holds a "+"
# (scripts/rig-watchdog-test.sh), and a boot whose emulated machine
# triple-faults silently is booted once more, and said so, while a second
# one stands (scripts/rig-triple-test.sh).  .ci/run runs it after make
# check.  A summary table and "N passed, N failed", as "make check".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logdir=$top/build/check-rig
mkdir -p "$logdir"

. "$top/scripts/check-lib.sh"

kver_lists
if [[ ${#host_kvers[@]} == 0 ]]; then
	record "kernel headers present" 0 1 0 0
else
	rig_qemu
	single "module build ${host_kvers[-1]}" '(warning|error):' \
		make --no-print-directory module KVER="${host_kvers[-1]}"
	single "rig watchdog" "" scripts/rig-watchdog-test.sh "${host_kvers[-1]}"
	single "rig triple-fault retry" "" scripts/rig-triple-test.sh "${host_kvers[-1]}"
fi
summary
