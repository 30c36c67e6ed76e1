#!/bin/bash
# SPDX-License-Identifier: MIT
#
# vmrapl-limitd against a fake /dev/vmrapl (fakedev.so: $FAKE_VMS,
# $FAKE_LIMITS, $FAKE_VM_ENERGY), a fake cgroup tree (--cgroup-root:
# plain files cpu.max, cpu.stat, cgroup.procs), a fake /proc (--proc:
# each VMM's cgroup line) and a fake plant (plant.py: power follows the
# CPU share cpu.max allows).  TAP.  The rig runs the daemon on real
# cgroups; this checks its plumbing and its failure paths: which cgroup,
# what it writes, what it restores and when.
#
# Usage: limitd.sh VMRAPL_LIMITD VMRAPLCTL FAKEDEV_SO
set -u
ltd=$1 ctl=$2 shim=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-limitd.XXXXXX")
dev=$work/fake-vmrapl
cg=$work/cgroup proc=$work/proc run=$work/run
limits=$work/limits energy=$work/energy vmsf=$work/vms
: > "$dev"
: > "$limits"
: > "$energy"
n=0 fail=0 d_pid= p_pid=
kids=()
cleanup() {
	[[ -n $d_pid ]] && kill -9 "$d_pid" 2>/dev/null
	touch "$work/stop"
	[[ -n $p_pid ]] && wait "$p_pid" 2>/dev/null
	for k in "${kids[@]}"; do kill "$k" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

echo "TAP version 13"
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; }
check() { # description, command...
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# Up to $2 s (default 5) for a command to hold: a loaded machine is slow.
eventually() { # seconds command...
	local i s=$1
	shift
	for ((i = 0; i < s * 20; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}
if ! command -v python3 > /dev/null; then
	echo "1..0 # SKIP python3 (the fake plant) not installed"
	exit 0
fi

# Three fake VMMs: A in libvirt's machine scope, B alone in a cgroup of
# its own (the operator set 1.5 CPUs there), C sharing its cgroup.
sleep 1000 & a_pid=$! ; kids+=("$a_pid")
sleep 1000 & b_pid=$! ; kids+=("$b_pid")
sleep 1000 & c_pid=$! ; kids+=("$c_pid")
scope='machine.slice/machine-qemu\x2d1\x2dweb.scope'
a_cg=$cg/$scope b_cg=$cg/vms/b c_cg=$cg/user.slice/session-1.scope
mkdir -p "$a_cg/libvirt/emulator" "$b_cg" "$c_cg" "$proc/$a_pid" \
	"$proc/$b_pid" "$proc/$c_pid"
echo "0::/$scope/libvirt/emulator" > "$proc/$a_pid/cgroup"
printf '1:name=systemd:/x\n0::/vms/b\n' > "$proc/$b_pid/cgroup"
echo "0::/user.slice/session-1.scope" > "$proc/$c_pid/cgroup"
echo "max 100000" > "$a_cg/cpu.max"
echo "150000 100000" > "$b_cg/cpu.max"
echo "max 100000" > "$c_cg/cpu.max"
echo "$b_pid" > "$b_cg/cgroup.procs"
printf '%s\n%s\n' "$c_pid" "$$" > "$c_cg/cgroup.procs"
echo "5:$a_pid 6:$b_pid 7:$c_pid" > "$vmsf"
# 10 W per CPU, 2 CPUs each: 20 W unthrottled (B: 15 W under its 1.5).
python3 "$here/plant.py" "$energy" "$work/stop" "5:$a_cg:10:2" \
	"6:$b_cg:10:2" "7:$c_cg:10:2" &
p_pid=$!

export LD_PRELOAD=$shim FAKE_NO_BASE_VMS=1 FAKE_VMS=@$vmsf \
	FAKE_LIMITS=$limits FAKE_VM_ENERGY=$energy
args=(--device "$dev" --cgroup-root "$cg" --proc "$proc" --run-dir "$run"
	--tick-ms 20 --scan-ms 100)
start() {
	"$ltd" "${args[@]}" "$@" 2>> "$work/log" &
	d_pid=$!
}
stop() { # signal
	kill "-$1" "$d_pid"
	wait "$d_pid" 2> /dev/null
	d_rc=$?
	d_pid=
}
set_limit() { # id uw window_us ("" uw: remove)
	local f=$limits.new
	grep -v "^$1 " "$limits" > "$f"
	[[ -n $2 ]] && echo "$1 $2 $3" >> "$f"
	mv "$f" "$limits"
}
set_limit_both() { # id uw window_us guest_uw guest_window_us (0 0: no operator's)
	local f=$limits.new
	grep -v "^$1 " "$limits" > "$f"
	echo "$*" >> "$f"
	mv "$f" "$limits"
}
quota() { # cgroup dir -> "max" or the share of a CPU in %
	awk '{ if ($1 == "max") print "max"; else printf "%d\n", 100 * $1 / $2 }' "$1/cpu.max"
}
quota_near() { # dir pct tolerance
	local q
	q=$(quota "$1")
	[[ $q != max ]] && ((q >= $2 - $3 && q <= $2 + $3))
}
uj() { awk -v id="$1" '$1 == id { print $2 }' "$energy"; }
# The VM's power over $2 s, in mW.
power_mw() { # id seconds
	local e0 e1
	e0=$(uj "$1")
	sleep "$2"
	e1=$(uj "$1")
	echo $(((e1 - e0) / ($2 * 1000)))
}
logged() { grep -qF -- "$1" "$work/log"; }

# --- options
out=$("$ltd" --tick-ms 0 2>&1); rc=$?
check "--tick-ms 0: exit 2, says the range" \
	test "$rc" = 2 -a -n "$(grep -F 'must be 1..1000' <<< "$out")"
out=$("$ltd" --tick-ms 100 --scan-ms 150 2>&1); rc=$?
check "--scan-ms not a multiple of the tick: exit 2" \
	test "$rc" = 2 -a -n "$(grep -F 'multiple' <<< "$out")"
out=$("$ltd" "${args[@]}" --restore 2>&1); rc=$?
check "--restore with nothing recorded: exit 0" test "$rc" = 0

# --- holding A (libvirt's scope) at 5 W over 200 ms
start
set_limit 5 5000000 200000
check "A: held through its machine scope" eventually 5 logged \
	"VM 5 (sleep): holding 5.000 W over 200 ms through cgroup /$scope (its cpu.max was \"max 100000\")"
check "A: its record in the run directory" test -f "$run/5"
check "A: the quota comes down to about half a CPU" \
	eventually 5 quota_near "$a_cg" 50 12
mw=$(power_mw 5 1)
check "A: power over 1 s within 5 % of 5 W ($mw mW)" \
	test "$mw" -ge 4750 -a "$mw" -le 5250
check "A: the period written is the tick (20 ms)" \
	grep -q ' 20000$' "$a_cg/cpu.max"

# --- a window of 30 ms: held over two ticks, said so with each figure
set_limit 5 5000000 30000
check "a 30 ms window is held over two 20 ms ticks, said with each figure" \
	eventually 5 logged "VM 5 (sleep): window 30 ms held as 40 ms (whole ticks of 20 ms)"
set_limit 5 5000000 200000
check "A: back to 200 ms, held" eventually 5 quota_near "$a_cg" 50 12

# --- C shares its cgroup: not held, told why, nothing written
set_limit 7 5000000 1000000
check "C: refused, with the reason" eventually 5 logged \
	"VM 7 (sleep): not held to its limit: cgroup /user.slice/session-1.scope holds other processes"
sleep 0.3
check "C: a cgroup of its own could not be made here (no cgroupfs), said so" \
	logged "; cannot make it a cgroup of its own (vmrapl.slice/vm-7): "
check "C: its cpu.max untouched" grep -qx "max 100000" "$c_cg/cpu.max"
check "C: no record" test ! -e "$run/7"
check "C: refused once, not at every scan" \
	test "$(grep -c 'VM 7 (sleep): not held' "$work/log")" = 1

# --- B: the operator's 1.5 CPUs are kept where they are lower
set_limit 6 100000000 1000000
check "B: held through its own cgroup" eventually 5 logged \
	"VM 6 (sleep): holding 100.000 W over 1 s through cgroup /vms/b (its cpu.max was \"150000 100000\")"
sleep 0.5
check "B: 100 W is above what it can draw: the operator's value stays" \
	grep -qx "150000 100000" "$b_cg/cpu.max"
set_limit 6 5000000 1000000
check "B: 5 W: about half a CPU, in the daemon's period" \
	eventually 5 quota_near "$b_cg" 50 12
set_limit 6 "" ""
check "B: limit removed: the operator's value back, exactly" \
	eventually 5 grep -qx "150000 100000" "$b_cg/cpu.max"
check "B: its record removed" eventually 2 test ! -e "$run/6"
check "B: the log says so" logged \
	"VM 6 (sleep): limit removed; cpu.max back to \"150000 100000\""

# --- B: the guest's own PL1 (GET_VM_LIMIT's guest fields) is held alone,
# and under an operator's limit the lower one is
set_limit_both 6 0 0 5000000 1000000
check "B: the guest's 5 W alone: held" eventually 5 quota_near "$b_cg" 50 12
set_limit_both 6 100000000 1000000 5000000 1000000
check "B: an operator's 100 W over the guest's 5 W: still 5 W" \
	eventually 5 quota_near "$b_cg" 50 12
set_limit_both 6 2500000 1000000 5000000 1000000
check "B: an operator's 2.5 W under the guest's 5 W: 2.5 W" \
	eventually 5 quota_near "$b_cg" 25 8
set_limit 6 "" ""
check "B: both removed: the operator's value back, exactly" \
	eventually 5 grep -qx "150000 100000" "$b_cg/cpu.max"

# --- A: a higher limit releases it, a lower one holds it again
set_limit 5 100000000 200000
check "A: 100 W: released (max)" eventually 5 grep -qx "max 100000" "$a_cg/cpu.max"
set_limit 5 5000000 200000
check "A: 5 W again: held" eventually 5 quota_near "$a_cg" 50 12

# --- SIGKILL mid-throttle: the quota and the record stay; --restore
stop KILL
check "killed: A stays throttled ($(cat "$a_cg/cpu.max"))" quota_near "$a_cg" 50 40
check "killed: A's record stays" test -f "$run/5"
out=$("$ltd" "${args[@]}" --restore 2>&1); rc=$?
check "--restore: exit 0" test "$rc" = 0
check "--restore: A's cpu.max back to \"max 100000\"" grep -qx "max 100000" "$a_cg/cpu.max"
check "--restore: the record removed" test ! -e "$run/5"
check "--restore: says what it restored" \
	grep -qF "VM 5: cpu.max of $a_cg restored" <<< "$out"

# --- killed again; the next start restores first, then holds again
start
check "restarted: A held again" eventually 5 quota_near "$a_cg" 50 12
stop KILL
: > "$work/log"
start
check "a start after a kill restores what the dead daemon left" \
	eventually 5 logged "VM 5: cpu.max of $a_cg restored"
check "... and holds A again" eventually 5 quota_near "$a_cg" 50 12

# --- the VM goes: restored, forgotten
echo "6:$b_pid 7:$c_pid" > "$vmsf"
check "A gone: cpu.max back to max" eventually 5 grep -qx "max 100000" "$a_cg/cpu.max"
check "A gone: its record removed" eventually 2 test ! -e "$run/5"
check "A gone: the log says so" eventually 2 logged \
	"VM 5 (sleep): the VM is gone; cpu.max back to \"max 100000\""

# --- the cgroup goes while held (the VM exits before the module sees it)
echo "5:$a_pid 6:$b_pid 7:$c_pid" > "$vmsf"
check "A back: held" eventually 5 quota_near "$a_cg" 50 12
rm -rf "$a_cg"
check "A's cgroup gone: let go, told why" eventually 5 logged \
	"VM 5 (sleep): its cgroup went away; nothing to restore (the cgroup is gone)"
check "A's cgroup gone: its record removed" eventually 2 test ! -e "$run/5"
check "the daemon still runs" kill -0 "$d_pid"
# Made again at the same path (another inode): held anew, from "max".
mkdir -p "$a_cg"
echo "max 100000" > "$a_cg/cpu.max"
check "A's cgroup made again: held anew" eventually 5 quota_near "$a_cg" 50 12
check "... with a new record" test -f "$run/5"

# --- the device is not kept open; without it every VM is let go
set_limit 6 5000000 1000000
check "B held again" eventually 5 quota_near "$b_cg" 50 12
dev_open() { ls -l "/proc/$d_pid/fd" 2> /dev/null | grep -q fake-vmrapl; }
closed=0
for i in $(seq 20); do
	dev_open || closed=$((closed + 1))
	sleep 0.013
done
check "the device is open only during a tick ($closed of 20 looks found it closed)" \
	test "$closed" -ge 14
mv "$dev" "$dev.away"
check "device gone: B let go, its cpu.max back" \
	eventually 5 grep -qx "150000 100000" "$b_cg/cpu.max"
check "device gone: the log says so, once" eventually 2 logged \
	"cannot open $dev: No such file or directory (is the vmrapl module loaded?); every VM let go until it opens"
sleep 0.3
check "device gone: said once" test "$(grep -c 'every VM let go until' "$work/log")" = 1
mv "$dev.away" "$dev"
check "device back: B held again" eventually 5 quota_near "$b_cg" 50 12
check "device back: the log says so" logged "$dev is back"

# --- SIGTERM: every VM let go
stop TERM
check "SIGTERM: exit 0" test "$d_rc" = 0
check "SIGTERM: B's cpu.max back to the operator's" grep -qx "150000 100000" "$b_cg/cpu.max"
check "SIGTERM: no record left" test -z "$(ls -A "$run")"
check "SIGTERM: C never written" grep -qx "max 100000" "$c_cg/cpu.max"

echo "1..$n"
if ((fail)); then
	echo "# the daemon's log:"
	sed 's/^/# /' "$work/log"
fi
exit $((fail > 0))
