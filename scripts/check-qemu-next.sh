#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check-qemu-next": the QEMU series on the newest QEMU release that
# Debian's sid or trixie-backports carries and the mirror serves
# (QEMU_NEXT=1 scripts/qemu.sh: the series with patches/next/ where that
# tree differs; built once per series and release, 6 to 8 min, then
# cached), checked without the module as make check checks QEMU 10.0:
# the power model and the accelerator's properties
# (scripts/qemu-model-test.py), the series on this machine's KVM with
# fake-vmrapl.so (userspace/qemu/tests/smoke.sh) and its functional
# test (scripts/qemu-functional.sh).  Not in make check, whose budget has
# no room for a second QEMU build; .ci/run runs it.  A summary table and
# "N passed, N failed", as "make check".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logdir=$top/build/check-qemu-next
mkdir -p "$logdir"

. "$top/scripts/check-lib.sh"

single "make qemu (QEMU_NEXT)" "" env QEMU_NEXT=1 scripts/qemu.sh build
if qemu=$(QEMU_NEXT=1 scripts/qemu.sh path 2> /dev/null); then
	echo "check: QEMU_NEXT is $(QEMU_NEXT=1 scripts/qemu.sh key)"
	tap "qemu model (next)" scripts/qemu-model-test.py "$qemu"
	tap "qemu smoke (next)" userspace/qemu/tests/smoke.sh "$qemu"
	tap "qemu functional (next)" scripts/qemu-functional.sh "$qemu"
fi
summary
