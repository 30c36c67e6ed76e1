#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check-rig": the rig's checks of itself, which test the harness
# rather than vmrapl, and the smoke subset on the 7.x series make check
# only builds on, out of "make check" for its budget (about 150 s):
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
# Every 7.x series but the newest (which make check runs whole): the
# smoke subset SMOKE_PROGS (attribution end to end and ATTACH_VM's
# checks), moved here from make check for its budget (about 60 s a
# kernel); make check builds the module on them with W=1.
smoke_kvers=()
if [[ ${#new_kvers[@]} -gt 1 ]]; then
	smoke_kvers=("${new_kvers[@]:0:${#new_kvers[@]}-1}")
fi
for k in "${smoke_kvers[@]}"; do
	single "module build $k" '(warning|error):' \
		make --no-print-directory module KVER="$k"
	single "test module build $k" '(warning|error):' \
		make --no-print-directory testmod KVER="$k"
	RIG_ONLY=${SMOKE_PROGS:-attribution kvmfd} rig "$k"
done
summary
