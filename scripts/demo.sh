#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make demo": build everything, boot the rig on one kernel and run the
# demo program (/tests/demo, from selftests/vmrapl/demo.c) instead of the
# test suite (kernel command line rig.mode=demo).
#
# Usage: scripts/demo.sh [KVER]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
stage() { printf '\n==> [%s] %s\n' "$1" "$2"; }

stage 1/5 "dependencies"
scripts/deps.sh --check --base >/dev/null 2>&1 || scripts/deps.sh --base
kver=${1:-$(make -s --no-print-directory kver)}
[[ -n $kver ]] || { echo "demo: no kernel headers installed" >&2; exit 1; }

stage 2/5 "build module for $kver, userspace and test programs"
# The build's chatter (and libnuma.a's static-link note about
# getaddrinfo, which is not ours) goes to a log, shown only on failure.
buildlog=build/demo-build.log
mkdir -p build
if ! { make --no-print-directory module KVER="$kver" &&
       make --no-print-directory userspace selftests; } > "$buildlog" 2>&1; then
	tail -n 30 "$buildlog"
	echo "demo: the build failed; the whole log is $buildlog" >&2
	exit 1
fi
echo "built build/$kver/vmrapl.ko"
[[ -x build/selftests/demo ]] || echo "note: no demo program yet (selftests/vmrapl/demo.c); the boot only loads the module"

stage 3/5 "initramfs"
selftests/rig/mkinitramfs.sh "$kver" "build/rig/initramfs-$kver.cpio.gz"

console=build/rig-$kver-demo.log
# The rig's QEMU when "make qemu" has built it (make deps does; the
# tests always boot it), else Debian's own: make demo installs only the
# apt packages, and one short boot rarely meets the nested-SVM faults of
# Debian 12's QEMU 7.2 that made the tests move (testing.rst, "Which
# QEMU").
if ! scripts/qemu.sh path > /dev/null 2>&1; then
	export RIG_QEMU=${RIG_QEMU:-qemu-system-x86_64}
fi
qemu=${RIG_QEMU:-$(scripts/qemu.sh path)}
stage 4/5 "boot $kver under QEMU (TCG, $qemu) and load kvm, kvm-amd, vmrapl"
stage 5/5 "run the demo (the test kernel's console goes to $console)"
set +e
selftests/rig/run.sh "$kver" --mode demo --no-build-initramfs > build/demo-rig.out 2>&1
rc=$?
set -e
# Only the demo's own output: between its markers, without kernel lines,
# and without the screen clearing top sends to the guest's console (a
# tty): printed all at once here, it would wipe what came before.
# (The guests' --trace blocks are for the plot below, not the screen.)
awk '/^### TEST demo BEGIN/ { on = 1; next }
     /^### TEST demo (TIME|END)/ { on = 0 }
     /^### TRACE [0-9]+ .* BEGIN$/ { trace = 1; next }
     /^### TRACE [0-9]+ END$/ { trace = 0; next }
     on && !trace && !/^\[ *[0-9]+\.[0-9]+\]/' "$console" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g'
grep -E '^rig ' build/demo-rig.out | grep -v ': per program:$' | tail -n 2
# The picture: each VM's power over the run, host and guest, same axes.
if [[ $rc == 0 ]]; then
	if png=$(scripts/plot-demo.sh "$console" build/demo); then
		echo "demo: each VM's power over the run, as the host charged it and as its guest read it: $png"
	else
		echo "demo: FAILED: no plot could be drawn from the guests' traces"
		rc=1
	fi
fi
if [[ $rc != 0 ]]; then
	echo
	echo "demo: FAILED (exit $rc).  What the rig saw:"
	grep -E '^  (FAIL|[a-z])' build/demo-rig.out | head -n 20
	echo "The whole console is in $console; its last lines:"
	tail -n 40 "$console"
fi
exit "$rc"
