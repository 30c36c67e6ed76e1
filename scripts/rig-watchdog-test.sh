#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rig's silence watchdog ends a guest that stops printing, for every
# kernel name, "+" included (6.12.117+deb12, 7.3.4+deb13).  It once looked
# QEMU up by a regular expression of its command line, which such a name
# never matched, and a hang ran to RIG_TIMEOUT.  Here the rig's shell
# mode, whose shell waits on an empty stdin, is the silent guest:
# RIG_SILENCE=12 must end it as a hang well before RIG_TIMEOUT=240.
# Before it ends it, the watchdog dumps the four vCPUs from QMP.
#
# Usage: rig-watchdog-test.sh KVER (default: the newest host kernel)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# First, without a guest: the dump's stack walk against a monitor that
# reads memory as QEMU's does (a wedged CPU's IRQ stack, followed to the
# interrupted context next to the guard page).
python3 "$top/selftests/rig/hangdump_test.py" || exit 1
kver=${1:-$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -n1)}
log=$top/build/rig-$kver-shell.log
start=$(date +%s)
RIG_SILENCE=12 RIG_TIMEOUT=240 "$top/selftests/rig/run.sh" "$kver" --mode shell \
	> "$top/build/rig-watchdog.out" 2>&1
took=$(( $(date +%s) - start ))
echo "rig shell mode on $kver ended after ${took}s: $(cat "$log.hang" 2>/dev/null || echo 'no hang recorded')"
if [[ ! -f $log.hang || $took -ge 200 ]]; then
	echo "FAIL: the watchdog did not end the silent guest (RIG_TIMEOUT ended it, or it never hung)"
	exit 1
fi
echo "ok: the watchdog ended the silent guest"
# Before it did, it dumped where the vCPUs were (hangdump.py): four of
# them, each with its RIP named from the kernel's _text.
n=$(grep -c '^--- CPU [0-9]: RIP _text+0x' "$log.cpus" 2>/dev/null)
if [[ ${n:-0} != 4 ]]; then
	echo "FAIL: the watchdog's dump of the vCPUs ($log.cpus) named ${n:-0} of 4 RIPs"
	exit 1
fi
echo "ok: the watchdog dumped the 4 vCPUs ($log.cpus)"
# The stall retry's verdict (hangdump.py --wedged) on that real dump: an
# idle guest is not wedged; the same dump with interrupts off is, outside
# vmrapl; and with a vmrapl function on one of those CPUs it is not.
wedged() { python3 "$top/selftests/rig/hangdump.py" --wedged "$@" > /dev/null; }
off=$top/build/rig-watchdog.off.cpus
ours=$top/build/rig-watchdog.ours.cpus
sed 's/; interrupts on$/; interrupts OFF/' "$log.cpus" > "$off"
sed '0,/^--- CPU 0: RIP /s//&vr_cpu_event+0x10 [vmrapl] at /' "$off" > "$ours"
if wedged "$log.cpus" "$log.cpus"; then
	echo "FAIL: --wedged called an idle guest wedged"
	exit 1
fi
if ! wedged "$off" "$off"; then
	echo "FAIL: --wedged missed four CPUs with interrupts off outside vmrapl"
	exit 1
fi
if wedged "$off" "$ours"; then
	echo "FAIL: --wedged called a CPU stopped in vmrapl the emulator's"
	exit 1
fi
echo "ok: --wedged tells an idle guest, a guest wedged outside vmrapl and one wedged in it apart"
exit 0
