#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rig boots once more when the emulated machine triple-faulted with
# nothing on the console, says so, and still fails when the second boot
# does it again; a triple fault after a panic on the console is never
# booted again.  The guest (selftests/rig/triple/reset) reboots with
# reboot=t, the kernel's triple-fault method, and QEMU's -no-reboot turns
# that into an exit with "Triple fault" in its log: with sysrq b (a
# silent reboot) and sysrq c (a crash: a panic, then the reboot).  Also
# that a RIG_QEMU that does not exist is named (no boot).
#
# Usage: rig-triple-test.sh KVER (default: the newest host kernel)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:-$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -n1)}
log=$top/build/rig-triple.log
out=$top/build/rig-triple.out
rm -f "$log.triple1" "$log.triple1.qemu"
RIG_TAG=triple RIG_TESTS_DIR=$top/selftests/rig/triple RIG_EXTRA_CMDLINE="reboot=t triple.how=b" \
	RIG_TIMEOUT=240 "$top/selftests/rig/run.sh" "$kver" > "$out" 2>&1
rc=$?
n=0 failed=0
check() { # description, command...
	local d=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n $d"; else echo "not ok $n $d"; failed=$((failed + 1)); fi
}
check "the first triple fault was booted again, and said so" \
	grep -q 'triple-faulted in reset, nothing on its console .*booting once more' "$out"
check "the first boot's logs were kept" test -s "$log.triple1" -a -s "$log.triple1.qemu"
check "the summary names the retry" grep -q '^  RETRIED: ' "$out"
check "the second triple fault fails the run" \
	bash -c '[[ '"$rc"' != 0 ]] && grep -q "rig did not finish.*triple-faulted" "$0"' "$out"

rm -f "$log.triple1"
RIG_TAG=triple RIG_TESTS_DIR=$top/selftests/rig/triple RIG_EXTRA_CMDLINE="reboot=t triple.how=c" \
	RIG_TIMEOUT=240 "$top/selftests/rig/run.sh" "$kver" > "$out.panic" 2>&1
rc=$?
check "a triple fault after a panic is not booted again" \
	bash -c '! grep -q "booting once more" "$0" && [[ ! -e $1 ]]' "$out.panic" "$log.triple1"
check "and it fails the run, the panic named" \
	bash -c '[[ '"$rc"' != 0 ]] && grep -q "Kernel panic" "$0"' "$out.panic"
# No boot: a QEMU that is not there is named, and fails the run.
RIG_TAG=triple RIG_QEMU=/nonexistent/qemu-system-x86_64 \
	"$top/selftests/rig/run.sh" "$kver" > "$out.noqemu" 2>&1
rc=$?
check "a RIG_QEMU that does not exist is named, and fails the run" \
	bash -c '[[ '"$rc"' != 0 ]] && grep -q "RIG_QEMU=/nonexistent/qemu-system-x86_64: no such program" "$0" &&
		grep -q "failed=1" "$1"' "$out.noqemu" "$top/build/rig-triple.result"
[[ $failed == 0 ]] || { tail -n 20 "$out" "$out.panic" "$out.noqemu" | sed 's/^/# /'; exit 1; }
