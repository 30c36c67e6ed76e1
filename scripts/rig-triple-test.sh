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
# that a RIG_QEMU that does not exist is named, and that a QEMU dying of
# SIGSEGV is retried once and its backtraces kept, in the tests, prom and
# demo modes (no boot in any of these).
#
# Usage: rig-triple-test.sh KVER (default: the newest host kernel)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:-$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -n1)}
log=$top/build/rig-triple.log
out=$top/build/rig-triple.out
# One scenario: run.sh with the guest's reset program, output in $1,
# status in rc.  The guest only resets itself after vmrapl has loaded, so
# a boot that failed before that was the emulator's doing: QEMU 10.0.2
# has died of SIGSEGV a few times in this rig while the guest sized its
# PCI BARs (run.sh).  run.sh retries such a boot, and that retry is the
# one this test is about: the scenario is then run once more, and said so.
# So it is when QEMU died of a signal in the boot after the triple fault
# (run.sh retries one boot only, and the triple fault took that retry):
# seen once, the second boot's QEMU dead of SIGSEGV before vmrapl loaded.
early='the boot failed before vmrapl was loaded|rig did not finish \(qemu rc=[0-9]+; QEMU died of signal'
scenario() { # output, how (b or c)
	local try

	for try in 1 2; do
		rm -f "$log.triple1" "$log.triple1.qemu"
		RIG_TAG=triple RIG_TESTS_DIR=$top/selftests/rig/triple \
			RIG_EXTRA_CMDLINE="reboot=t triple.how=$2" \
			RIG_TIMEOUT=240 "$top/selftests/rig/run.sh" "$kver" > "$1" 2>&1
		rc=$?
		grep -qE "$early" "$1" || return 0
		[[ $try == 2 ]] && return 0
		echo "# triple.how=$2: $(grep -m1 -E "$early" "$1" | sed 's/^rig triple: //;s/^  FAIL: //'); the scenario runs once more"
		cp "$1" "$1.early"
	done
}
scenario "$out" b
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

scenario "$out.panic" c
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
# No boot either: a QEMU that dies of SIGSEGV at once, as QEMU 10.0.2 did
# before vmrapl loaded: retried once, then the run fails naming the
# signal, and each boot's backtrace (run.sh's qemu_backtrace()) is kept.
segv=$top/build/rig-triple-segv-qemu
# (ulimit -c 0: no core file of the fake in the directory it ran in)
printf '#!/bin/bash\nulimit -c 0\necho "fake QEMU: SIGSEGV"\nkill -SEGV $$\n' > "$segv"
chmod +x "$segv"
rm -f "$log.qemu-bt" "$log.early1.qemu-bt"
RIG_TAG=triple RIG_TESTS_DIR=$top/selftests/rig/triple RIG_QEMU=$segv \
	"$top/selftests/rig/run.sh" "$kver" > "$out.segv" 2>&1
rc=$?
check "a QEMU that died of SIGSEGV before vmrapl loaded is booted once more" \
	grep -q "failed before vmrapl was loaded (qemu rc=139; QEMU's backtrace in $log.early1.qemu-bt)" "$out.segv"
check "and its second death fails the run, the signal and the backtraces named" \
	bash -c '[[ '"$rc"' != 0 ]] && grep -q "rig did not finish (qemu rc=139; QEMU died of signal 11" "$0" &&
		grep -q "^QEMU died of signal 11" "$1" "$2"' "$out.segv" "$log.qemu-bt" "$log.early1.qemu-bt"
# The same in the modes whose boots the host's scripts watch (make
# prom-check's two hypervisors, make demo): a CI run's prom-check failed
# when hv2's QEMU died 1.6 s into its boot and nothing booted it again.
for m in prom demo; do
	RIG_TAG=triple-$m RIG_QEMU=$segv RIG_PROM_PORT=1 \
		"$top/selftests/rig/run.sh" "$kver" --mode "$m" > "$out.segv-$m" 2>&1
	check "--mode $m: a QEMU that died of SIGSEGV before vmrapl loaded is booted once more" \
		grep -q "^rig triple-$m: the boot failed before vmrapl was loaded (qemu rc=139" "$out.segv-$m"
done
[[ $failed == 0 ]] || { tail -n 20 "$out" "$out.panic" "$out.noqemu" "$out.segv" "$out.segv-prom" "$out.segv-demo" | sed 's/^/# /'; exit 1; }
