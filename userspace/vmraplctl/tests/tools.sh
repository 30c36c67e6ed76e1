#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Host-side tests of vmraplctl and vmrapl-exporter (TAP) against a fake
# /dev/vmrapl (fakedev.so, LD_PRELOAD); the rig's selftests/vmrapl/tools.c
# runs them against the real module.
#
# Usage: tools.sh VMRAPLCTL FAKEDEV_SO [EXPORTER]
set -u
ctl=$1 shim=$2 exporter=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-tools.XXXXXX")
dev=$work/fake-vmrapl
: > "$dev"
n=0 fail=0
qemu_pid= exp_pid=
kids=()
cleanup() {
	[[ -n $qemu_pid ]] && kill "$qemu_pid" 2>/dev/null
	[[ -n $exp_pid ]] && kill "$exp_pid" 2>/dev/null
	for k in "${kids[@]}"; do kill "$k" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; }
check() { # description, command...
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# The exporter rewrites its powercap tree every 0.1 s: wait up to 5 s for
# it to show what a test expects, so a loaded machine is not a failure.
eventually() { # command...
	local i
	for i in $(seq 50); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
has() { grep -qF -- "$1" <<< "$out"; }
hasnt() { ! grep -qF -- "$1" <<< "$out"; }
run() { out=$(LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid "$ctl" --device "$dev" "$@" 2>&1); rc=$?; }
# stdout only, stderr to $work/err
run1() { out=$(LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid "$ctl" --device "$dev" "$@" 2>"$work/err"); rc=$?; }
have_py=$(command -v python3)
# Is $out valid JSON (strict UTF-8)?  One document, or one per line (-l).
json_ok() {
	[[ -z $have_py ]] && return 0
	python3 -c '
import json, sys
t = sys.stdin.buffer.read().decode("utf-8")
docs = [l for l in t.split("\n") if l] if sys.argv[1:] == ["-l"] else [t]
for d in docs:
    json.loads(d)
' "$@" <<< "$out" 2>/dev/null
}
# A process whose /proc/PID/comm is $1 (the kernel keeps 15 bytes): bash
# run through a symlink of that name; its pid in $kid.
mkdir "$work/bin"
comm_proc() {
	ln -sf "$(command -v bash)" "$work/bin/$1"
	"$work/bin/$1" -c 'sleep 60; :' > /dev/null 2>&1 &
	kid=$!
	kids+=("$kid")
}

# A process with a QEMU command line (not exec'ed away by bash), as
# libvirt starts QEMU: argv[0] qemu-system-x86_64, -name guest=NAME and
# the domain's UUID as -uuid.
uuid=8f6c1a34-1c2d-4e5f-9a0b-1c2d3e4f5a6b
(exec -a qemu-system-x86_64 bash -c 'sleep 30; :' qemu -machine q35 -name guest=web,,1,debug-threads=on -uuid "$uuid" > /dev/null 2>&1) &
qemu_pid=$!
# QEMU processes with other -name and -uuid values: $kid is the pid.
qemu_proc() { # name, uuid
	(exec -a /usr/bin/qemu-system-x86_64 bash -c 'sleep 60; :' qemu -name "guest=$1" -uuid "$2" > /dev/null 2>&1) &
	kid=$!
	kids+=("$kid")
}
# Another VMM (argv[0] is not QEMU's) with --name: $kid is the pid.
vmm_proc() { # name
	bash -c 'sleep 60; :' vmrapl-vmm --name "$1" > /dev/null 2>&1 &
	kid=$!
	kids+=("$kid")
}

echo "TAP version 13"
run --json info
check "info --json" test $rc = 0
check "info: estimate marked estimated" has '"source": "estimate", "estimated": true'
check "info: domains" has '"domains": ["pkg", "dram"]'
check "info: policy, features" has '"static_policy": "busy"'
load_ok() { # load_time is boot time (now - /proc/uptime) + 1 s, within 2 s
	local lt
	lt=$(sed -n 's/.*"load_time": \([0-9.]*\).*/\1/p' <<< "$out")
	[[ -n $lt ]] && awk -v lt="$lt" -v now="$(date +%s.%N)" \
		'{ d = lt - (now - $1 + 1); exit !(d < 2 && d > -2) }' /proc/uptime
}
check "info: load time, 1 s after boot" load_ok
run info
check "info text: *estimated*" has '*estimated*'
check "info text: load time" has 'totals count from then'
check "info text: the host ESU in J" has 'host ESU         14 (1/16384 J)'
check "info text: track_all on" grep -q '^track_all        on$' <<< "$out"
check "info text: static power and its fit" has 'static power 0   5.00 W (fit); fit 5.00 +- 0.12 W, 2.50 W/busy CPU, 128 blocks, conditioned'
check "info text: static power from idle runs" has 'static power 1   5.00 W (idle)'
check "info text: package less cores" has '12 blocks, not conditioned; package less cores 6.20 W, 64 blocks'
check "info text: no per-core line without per-core counters" hasnt '128 blocks, conditioned; package less cores'
check "info text: the counters' update intervals" has 'counter update 0   pkg 976.6 +- 39.0 us, dram not measured (1000 us assumed)'
check "info text: the per-core counter's interval" has 'counter update 1   pkg 1500.0 +- 20.0 us, core 1000.0 +- 10.0 us, dram not measured'
run --json info
check "info --json: static power" has '"static_power": [{"package": 0, "p_static_w": 5.000, "origin": "fit", "fit_w": 5.000, "fit_sd_w": 0.125,'
check "info --json: features" has '"static_fit", "static_split", "static_core", "static_host"'
check "info --json: package less cores" has '"idle_w": 4.800, "core_w": 6.200, "core_blocks": 64, '
check "info --json: update intervals" has '"counters": {"pkg": {"update_us": 976.6, "update_spread_us": 39.0}, "dram": {"update_us": null, "update_spread_us": null}}}'
run1 info
check "info: the attached VMs, which hold the module" grep -Eq '^attached VMs     1 \(they hold the module: rmmod fails while one is attached\)$' <<< "$out"
check "info: each attached VM's id, pid and name" grep -Eq "^                 id 7, pid $qemu_pid, web,1$" <<< "$out"
check "info: not the VMs track_all follows" hasnt 'id 9,'
run1 --json info
check "info --json: attached_vms" has "\"attached_vms\": [{\"id\": 7, \"pid\": $qemu_pid, \"name\": \"web,1\"}]"
check "info --json: still valid JSON" json_ok
FAKE_LIST_EPERM=1 run1 info
check "info without CAP_PERFMON: exit 0" test $rc = 0
check "info without CAP_PERFMON: the attached VMs are unknown, and why" grep -q '^attached VMs     unknown (listing VMs needs root or CAP_PERFMON)$' <<< "$out"
FAKE_LIST_EPERM=1 run1 --json info
check "info --json without CAP_PERFMON: attached_vms null" has '"attached_vms": null'
FAKE_ORIGIN=6 run info
check "info text: static power from the host's other packages" has 'static power 0   5.00 W (host)'
FAKE_ORIGIN=99 run info
check "info text: an origin from a newer module" has 'static power 0   5.00 W (unknown)'

run --json --interval 0.2 list
check "list --json" test $rc = 0
check "list: QEMU -name guest= with ,, escape" has '"name": "web,1"'
check "list: QEMU -uuid" has "\"name\": \"web,1\", \"uuid\": \"$uuid\","
check "list: no -uuid is null" grep -Eq '"id": 9, "pid": [0-9]+, "name": "[^"]*", "uuid": null,' <<< "$out"
check "list: attached VM with pid" has "\"id\": 7, \"pid\": $qemu_pid,"
check "list: energy per measured domain" has '"energy_j": {"pkg": '
check "list: power over the interval" has '"power_w": {"pkg": '
check "list: auto VM, guest charge" has '"attached": false, "mode": "auto", "charge": "guest"'
check "list --json: overhead_pct in percent, overhead_share kept" has '"overhead_pct": 10.000, "overhead_share": 0.1000,'
run list --interval 0
check "list text, no power" has 'pkg_J'

run --json top --iterations 2 --interval 0.1
check "top --json two refreshes" test "$rc" = 0 -a "$(grep -c '"iteration"' <<< "$out")" = 2
check "top: package powers" has '"packages": [{"package": 0, "cpus": 2, "p_static_w": 5.000, "power_w": {"sampled": '
run top --iterations 1 --interval 0.1
check "top text header" has 'pkg 1:'
check "top: no VM capped, no capped line" hasnt 'capped:'
printf '7 40000000 1000000\n' > "$work/toplim"
out=$(LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid FAKE_LIMITS=$work/toplim "$ctl" --device "$dev" top --iterations 1 --interval 0.1 2>&1)
check "top marks a capped VM: its power against its limit, held or not" \
	grep -Eq '^capped: VM 7 "web,1" [0-9.]+ W, limit 40 W over 1 s, (held|NOT HELD \(vmrapl-limitd\))$' <<< "$out"
check "top: a line for each capped VM only" test "$(grep -c '^capped:' <<< "$out")" = 1

# OVH%: VM 9's overhead all came before the first read, VM 7's is a
# tenth of every joule.  list: since each VM was first tracked; top: over
# the refresh; stats: both.
last_field() { # the last field of the table row of VM $1
	awk -v id="$1" '$1 == id { print $NF }' <<< "$out"
}
run1 list --interval 0.1
check "OVH% list: the header says since when" has 'J and OVH% since each VM was first tracked; W over the last 0.1 s'
check "OVH% list: VM 9's share since it was first tracked" awk -v v="$(last_field 9)" 'BEGIN { exit !(v > 0) }'
check "OVH% list: VM 7's share" test "$(last_field 7)" = 10.0
run1 top --iterations 2 --interval 0.1
check "OVH% top: the header says over the refresh" has 'W and OVH% over the last 0.1 s; J since each VM was first tracked'
check "OVH% top: VM 9's share over the refresh is 0" test "$(last_field 9 | sort -u)" = 0.0
check "OVH% top: VM 7's share over the refresh" test "$(last_field 7 | sort -u)" = 10.0
run1 --json top --iterations 1 --interval 0.1
check "OVH% top --json: interval_overhead_pct" grep -Eq '"id": 9, .*"interval_overhead_pct": 0\.000' <<< "$out"
run1 stats --interval 0.1 9
check "OVH% stats: both windows" grep -Eq '^  overhead share +[0-9.]+ % since first tracked; 0\.0 % over the last 0\.1 s$' <<< "$out"

run --json --interval 0.1 stats web,1
check "stats by name" has '"id": 7,'
check "stats: per-vCPU power over the interval" has '{"vcpu": 1, "energy_j": {"pkg": '
check "stats: per-vCPU busy share" has '"busy": '
run --json --interval 0 stats 9
check "stats by id, per-vCPU energy" has '"per_vcpu": [{"vcpu": 0, "energy_j": {"pkg": '
run --json --interval 0 stats 7
check "stats --json: the VM's static part" grep -Eq '"static_j": [0-9.]+, "dynamic_j": [0-9.]+' <<< "$out"
check "stats --json: each vCPU's static and dynamic parts" grep -Eq '"vcpu": 1, "energy_j": \{[^}]*\}, "runtime_s": [0-9.]+, "static_j": [0-9.]+, "dynamic_j": [0-9.]+' <<< "$out"
run stats "$qemu_pid"
check "stats by pid (text), per-vCPU rows" grep -Eq '^  1 +[0-9.]+ +[0-9.]+ +0\.400' <<< "$out"
check "stats text: J with 3 decimals, as list" grep -Eq '^  energy +pkg [0-9]+\.[0-9]{3} J dram [0-9]+\.[0-9]{3} J$' <<< "$out"
check "stats text: per-vCPU J with 3 decimals" grep -Eq '^  1 +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +0\.400 .* [0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}$' <<< "$out"
check "stats text: the uuid" grep -Eq "^  uuid +$uuid\$" <<< "$out"
check "stats text: static part" grep -Eq '^  static \(pkg\) +[0-9.]+ J \(policy busy; overhead [0-9.]+ J\)$' <<< "$out"
check "stats text: dynamic part" grep -Eq '^  dynamic \(pkg\) +[0-9.]+ J$' <<< "$out"
check "stats text: static and dynamic columns" has 'static J    dynamic J'
run --json --interval 0 stats "$uuid"
check "stats by uuid" has '"id": 7,'
run --json --interval 0 stats "${uuid^^}"
check "stats by uuid in upper case" has '"id": 7,'
run --interval 0 stats 9
check "stats text: no uuid line without -uuid" hasnt 'uuid'
run stats 00000000-1111-4222-8333-444444444444
check "stats unknown uuid exits 4" test $rc = 4
check "stats unknown VM: says what it tried" has "no VM matches '00000000-1111-4222-8333-444444444444'"
run stats nosuch
check "stats unknown VM exits 4" test $rc = 4
run stats 12345678
check "stats unknown id exits 4" test $rc = 4

# ---- power limits: limit (fakedev: $FAKE_LIMITS, $FAKE_VM_ENERGY) ----
lim=$work/limits
limrun() { FAKE_LIMITS=$lim run1 "$@"; }
# The limits file as it was: content and inode (SET renames a new file in).
lim_save() { cp "$lim" "$work/limits.before"; lim_ino=$(stat -c %i "$lim"); }
lim_same() { cmp -s "$lim" "$work/limits.before" && test "$(stat -c %i "$lim")" = "$lim_ino"; }
# One line of stderr, nothing on stdout, and the exit status: "RC:MESSAGE".
lim_err() { test "$rc:$out$(cat "$work/err")" = "$1"; }
run1 limit
check "limit: lists without \$FAKE_LIMITS (no limits)" test $rc = 0
check "limit: a VM without a limit shows - (VM 7)" grep -Eq '^7 +web,1 +- +- +-$' <<< "$out"
check "limit: a VM without a limit shows - (VM 9)" grep -Eq '^9 +[^ ]+ +- +- +-$' <<< "$out"
check "limit: the header" grep -Eq '^ID +NAME +LIMIT_W +WINDOW +STATE$' <<< "$out"
limrun limit 7 40W
check "limit 7 40W: says what is in force, read back" test "$rc:$out" = '0:VM 7 "web,1": power limit 40 W over 1 s now in force'
check "limit 7 40W: no vmrapl-limitd running: a warning says nothing holds the VM" \
	grep -q '^vmraplctl: warning: vmrapl-limitd is not running: the limit is stored and the guest sees it, but nothing holds the VM to it' "$work/err"
comm_proc vmrapl-limitd;		p_limitd=$kid
limrun limit 7 40W
check "limit 7 40W: with vmrapl-limitd running, no warning" test "$rc:$(cat "$work/err")" = "0:"
limrun limit 7 off
check "limit 7 off: no warning either way" test "$rc:$(cat "$work/err")" = "0:"
kill "$p_limitd"
limrun limit 7 off
check "limit 7 off without vmrapl-limitd: no warning" test "$rc:$(cat "$work/err")" = "0:"
limrun limit 7 40W
check "limit 7 40W: the default window of 1 s" test "$(cat "$lim")" = "7 40000000 1000000"
limrun limit web,1 1.5kW --window 250ms
check "limit by name, --window 250ms" test "$rc:$out" = '0:VM 7 "web,1": power limit 1.5 kW over 250 ms now in force'
check "limit by name: the limit replaced" test "$(cat "$lim")" = "7 1500000000 250000"
limrun limit --window 2m "$uuid" 500mW
check "limit by uuid, --window before the VM" test "$rc:$(cat "$lim")" = "0:7 500000 120000000"
printf '7 40000000 1000000\n9 2500 10000\n' > "$lim"
limrun limit
check "limit: a limit set through the file (VM 7)" grep -Eq '^7 +web,1 +40\.000 +1 s  operator$' <<< "$out"
check "limit: W with 3 decimals, a window in ms (VM 9)" grep -Eq '^9 +[^ ]+ +0\.003 +10 ms  operator$' <<< "$out"
limrun limit 9
check "limit VM: that VM's row only" test "$rc:$(grep -c . <<< "$out")" = "0:2"
limrun --json limit
check "limit --json: valid JSON" json_ok
check "limit --json: a limit, exact" has '"id": 7, "pid": '"$qemu_pid"', "name": "web,1", "uuid": "'"$uuid"'", "limit_w": 40.000000, "limit_uw": 40000000, "window_s": 1.000000, "window_us": 1000000, "state": "operator"}'
check "limit --json: VM 9's" has '"limit_w": 0.002500, "limit_uw": 2500, "window_s": 0.010000, "window_us": 10000, "state": "operator"}'
limrun -x , limit
check "limit -x: the header" grep -q '^id,pid,name,uuid,limit_w,limit_uw,window_s,window_us,state,timestamp$' <<< "$out"
check "limit -x: a row, the name quoted" grep -q "^7,$qemu_pid,\"web,1\",$uuid,40.000000,40000000,1.000000,1000000,operator,[0-9.]*\$" <<< "$out"
FAKE_LIMITS=$lim FAKE_NO_BASE_VMS=1 run1 limit
check "limit, no VMs: says so" test "$rc:$out" = "0:no VMs: no VMM has attached one and no KVM VM is running (track_all is on)"
limrun limit 9 off
check "limit 9 off: no limit now" grep -Eq '^0:VM 9 "[^"]+": no power limit now$' <<< "$rc:$out"
check "limit 9 off: removed, the other kept" test "$(cat "$lim")" = "7 40000000 1000000"
limrun -x , limit
check "limit -x: a VM without a limit has empty fields" grep -Eq '^9,[0-9]+,[^,]*,,,,,,,[0-9.]+$' <<< "$out"
limrun --json limit
check "limit --json: a VM without a limit has nulls" grep -Eq '"id": 9, [^}]*"limit_w": null, "limit_uw": null, "window_s": null, "window_us": null, "state": null}' <<< "$out"
limrun limit 9 off
check "limit off without a limit: fine" test $rc = 0
limrun limit 9 100kW --window 1h
check "limit: the largest limit and window" grep -Eq '^0:VM 9 "[^"]+": power limit 100 kW over 3600 s now in force$' <<< "$rc:$out"
limrun limit 9 1mW --window 10ms
check "limit: the smallest limit and window" grep -q ': power limit 1 mW over 10 ms now in force$' <<< "$out"
check "limit: both kept in the file" test "$(sort "$lim" | tr '\n' ' ')" = "7 40000000 1000000 9 1000 10000 "
# The guest's own PL1 (its 0x610, GET_VM_LIMIT's guest fields): the lower
# of it and the operator's is the one held, and the one shown.
printf '7 40000000 1000000 20000000 500000\n9 0 0 30000000 2000000\n' > "$lim"
limrun limit
check "limit: the guest's lower PL1 is held (VM 7)" grep -Eq '^7 +web,1 +20\.000 +500 ms  guest$' <<< "$out"
check "limit: a guest's PL1 alone (VM 9)" grep -Eq '^9 +[^ ]+ +30\.000 +2 s  guest$' <<< "$out"
limrun --json limit
check "limit --json: the guest's" has '"limit_w": 20.000000, "limit_uw": 20000000, "window_s": 0.500000, "window_us": 500000, "state": "guest"}'
limrun limit 7 10W
check "limit 7 10W under the guest's 20 W: the operator's held" test "$rc:$out" = '0:VM 7 "web,1": power limit 10 W over 1 s now in force'
check "limit 7 10W: the guest's kept" test "$(sort "$lim" | head -1)" = "7 10000000 1000000 20000000 500000"
limrun limit 7 30W
check "limit 7 30W over the guest's 20 W: says the guest's holds" test "$rc:$out" = '0:VM 7 "web,1": power limit 20 W over 500 ms now in force (the guest'"'"'s own, lower)'
limrun limit 7 off
limrun limit
check "limit 7 off: the guest's still held" grep -Eq '^7 +web,1 +20\.000 +500 ms  guest$' <<< "$out"
printf '7 40000000 1000000\n9 1000 10000\n' > "$lim"
# Errors: one line, the exit status, nothing changed.
lim_save
limrun limit 7 0W
check "limit 0W: refused with the range" lim_err "1:vmraplctl: power limit 0 W: must be 1 mW to 100 kW"
check "limit 0W: nothing changed" lim_same
limrun limit 7 -5W
check "limit -5W: refused with the range" lim_err "1:vmraplctl: power limit -5 W: must be 1 mW to 100 kW"
check "limit -5W: nothing changed" lim_same
limrun limit 7 200kW
check "limit 200kW: refused with the range" lim_err "1:vmraplctl: power limit 200 kW: must be 1 mW to 100 kW"
check "limit 200kW: nothing changed" lim_same
limrun limit 7 0.5mW
check "limit 0.5mW: below 1 mW" lim_err "1:vmraplctl: power limit 500 uW: must be 1 mW to 100 kW"
limrun limit 7 40W --window 0
check "limit --window 0: refused with the range" lim_err "1:vmraplctl: window 0 s: must be 10 ms to 1 h"
check "limit --window 0: nothing changed" lim_same
limrun limit 7 40W --window 2h
check "limit --window 2h: refused with the range" lim_err "1:vmraplctl: window 7200 s: must be 10 ms to 1 h"
check "limit --window 2h: nothing changed" lim_same
limrun limit 7 40W --window 5ms
check "limit --window 5ms: below 10 ms" lim_err "1:vmraplctl: window 5 ms: must be 10 ms to 1 h"
limrun limit 7 40W --window -1s
check "limit --window -1s: a negative window" lim_err "1:vmraplctl: window -1 s: must be 10 ms to 1 h"
limrun limit 7 junk
check "limit junk: not a power" lim_err "1:vmraplctl: power limit 'junk': not a power (a number and W, kW, mW or uW, no spaces: 40W, 1.5kW, 500mW; or off)"
check "limit junk: nothing changed" lim_same
limrun limit 7 '2.25 W'
check "limit '2.25 W': no spaces" grep -q "^1:vmraplctl: power limit '2.25 W': not a power" <<< "$rc:$(cat "$work/err")"
limrun limit 7 40W --window soon
check "limit --window soon: not a duration" lim_err "1:vmraplctl: window 'soon': not a duration (a number and us, ms, s, m or h, no spaces: 250ms, 1s, 2m)"
check "limit --window soon: nothing changed" lim_same
limrun limit 7 off --window 1s
check "limit off --window: refused" lim_err "1:vmraplctl: --window goes with a power: vmraplctl limit VM POWER --window DURATION"
limrun limit --window 1s
check "limit --window without a VM: refused" test $rc = 1
limrun limit nosuch 40W
check "limit, an unknown VM: exit 4" lim_err "4:vmraplctl: no VM matches 'nosuch' (an id, a pid, a name or a UUID)"
check "limit, an unknown VM: nothing changed" lim_same
limrun limit 12345 off
check "limit, an unknown id: exit 4" test $rc = 4
FAKE_LIMIT_EPERM=1 limrun limit 7 40W
check "limit without CAP_SYS_ADMIN: exit 3, says so" lim_err "3:vmraplctl: permission denied: changing a VM's power limit needs CAP_SYS_ADMIN (root)"
check "limit without CAP_SYS_ADMIN: nothing changed" lim_same
FAKE_LIMIT_EPERM=1 limrun limit 7 off
check "limit off without CAP_SYS_ADMIN: exit 3" test $rc = 3
check "limit off without CAP_SYS_ADMIN: the limit kept" lim_same
run1 limit 7 40W
check "limit without \$FAKE_LIMITS (unprivileged): exit 3" test $rc = 3
FAKE_LIMIT_ENOENT=1 limrun limit 7 20W
check "limit, the VM gone between lookup and set: exit 4, says so" lim_err "4:vmraplctl: VM 7 went away; nothing was changed"
check "limit, the VM gone: nothing changed" lim_same
FAKE_LIMITS=$lim FAKE_LIST_EPERM=1 run1 limit
check "limit without CAP_PERFMON: exit 3" test $rc = 3
# Negative numbers are arguments; an option's value still goes to it whole.
run stats -5
check "stats -5: a VM that does not match, not an option" test "$rc:$out" = "4:vmraplctl: no VM matches '-5' (an id, a pid, a name or a UUID)"
run --interval -1 list
check "--interval -1: still the option's value" has "'-1' is out of range"

# fakedev: SET_VM_LIMIT and GET_VM_LIMIT check their struct as the module
# does (python3's ioctl() goes through the shim too).
fake_limit_checks() {
	[[ -z $have_py ]] && return 0
	printf '9 1000 10000\n' > "$work/limits.py"
	LD_PRELOAD=$shim FAKE_LIMITS=$work/limits.py python3 - "$dev" <<'PY'
import errno, fcntl, os, struct, sys
SET = (1 << 30) | (72 << 16) | (0xE7 << 8) | 5
GET = (3 << 30) | (72 << 16) | (0xE7 << 8) | 6
def lim(size=72, flags=0, id=7, uw=40000000, us=1000000, state=0, r0=0,
        r=(0, 0, 0, 0), extra=b''):
    return bytearray(struct.pack('=IIQQQII4Q', size, flags, id, uw, us,
                                 state, r0, *r) + extra)
fd = os.open(sys.argv[1], os.O_RDWR)
def call(req, buf):
    try:
        fcntl.ioctl(fd, req, buf)
        return 0
    except OSError as e:
        return e.errno
E = errno.EINVAL
cases = [
    ('SET size 64', SET, lim(size=64), E),
    ('SET size 80, zeros beyond', SET, lim(size=80, extra=bytes(8)), 0),
    ('SET size 80, not zero beyond', SET, lim(size=80, extra=b'\1' + bytes(7)), errno.E2BIG),
    ('SET an unknown flag', SET, lim(flags=2), E),
    ('SET state', SET, lim(state=1), E),
    ('SET reserved0', SET, lim(r0=1), E),
    ('SET reserved', SET, lim(r=(0, 0, 0, 1)), E),
    ('SET guest_limit_uw', SET, lim(r=(1, 0, 0, 0)), E),
    ('SET guest_window_us', SET, lim(r=(0, 1, 0, 0)), E),
    ('SET 999 uW', SET, lim(uw=999), E),
    ('SET 100 kW + 1 uW', SET, lim(uw=100000000001), E),
    ('SET window 9999 us', SET, lim(us=9999), E),
    ('SET window 1 h + 1 us', SET, lim(us=3600000001), E),
    ('SET CLEAR with a limit', SET, lim(flags=1, uw=1000, us=0), E),
    ('SET CLEAR with a window', SET, lim(flags=1, uw=0, us=10000), E),
    ('SET an unknown VM', SET, lim(id=12345), errno.ENOENT),
    ('SET 1 mW over 10 ms', SET, lim(uw=1000, us=10000), 0),
    ('SET 100 kW over 1 h', SET, lim(uw=100000000000, us=3600000000), 0),
    ('GET a flag', GET, lim(flags=1), E),
    ('GET reserved', GET, lim(r=(0, 0, 1, 0)), E),
    ('GET: the guest fields are output only', GET, lim(r=(5, 5, 0, 0)), 0),
    ('GET an unknown VM', GET, lim(id=12345), errno.ENOENT),
]
bad = 0
for name, req, buf, want in cases:
    got = call(req, buf)
    if got != want:
        print('# %s: errno %d, not %d' % (name, got, want), file=sys.stderr)
        bad = 1
# The limits set, read back through GET and through the file.
buf = lim(uw=0, us=0, state=0)
if call(GET, buf) or struct.unpack_from("=IIQQQI", buf)[3:6] != (100000000000, 3600000000, 5):
    print('# GET after SET: %r' % (struct.unpack_from('=IIQQQI', buf),), file=sys.stderr)
    bad = 1
text = open(os.environ['FAKE_LIMITS']).read().split('\n')
if sorted(l for l in text if l) != ['7 100000000000 3600000000', '9 1000 10000']:
    print('# the file: %r' % text, file=sys.stderr)
    bad = 1
buf = lim(id=9, flags=1, uw=0, us=0)
buf2 = lim(id=9)
if call(SET, buf) or call(GET, buf2) or struct.unpack_from('=IIQQQI', buf2)[3:6] != (0, 0, 0):
    print('# CLEAR, then GET: %r' % (struct.unpack_from('=IIQQQI', buf2),), file=sys.stderr)
    bad = 1
sys.exit(bad)
PY
}
check "fakedev: the limit ioctls check their struct as the module does" fake_limit_checks

# $FAKE_VM_ENERGY: a plant's books for VM 7, read at every call.
echo "7 5000000 2000000000" > "$work/energy"
FAKE_VM_ENERGY=$work/energy run1 --json --interval 0 stats 7
check "FAKE_VM_ENERGY: the VM's pkg energy and runtime, no DRAM, no overhead" has '"energy_j": {"pkg": 5.000000, "dram": 0.000000}, "overhead_j": {"pkg": 0.000000, "dram": 0.000000}, "power_w": null, "overhead_pct": 0.000, "overhead_share": 0.0000, "runtime_s": 2.000, "overhead_runtime_s": 0.000'
check "FAKE_VM_ENERGY: no static part beyond the whole" has '"static_j": 0.000000, "dynamic_j": 5.000000'
check "FAKE_VM_ENERGY: split among the vCPUs" has '"per_vcpu": [{"vcpu": 0, "energy_j": {"pkg": 2.500000, "dram": 0.000000}, "runtime_s": 1.000000, "static_j": 0.000000, "dynamic_j": 2.500000}, {"vcpu": 1, "energy_j": {"pkg": 2.500000, "dram": 0.000000}, "runtime_s": 1.000000,'
echo "7 7000001" > "$work/energy"
FAKE_VM_ENERGY=$work/energy run1 --json --interval 0 list
check "FAKE_VM_ENERGY: rewritten, read again; runtime 0 when not given" grep -Eq '"id": 7, [^}]*"energy_j": \{"pkg": 7\.000001, "dram": 0\.000000\}.*"runtime_s": 0\.000,' <<< "$out"
check "FAKE_VM_ENERGY: other VMs keep the made-up books" grep -Eq '"id": 9, [^}]*"energy_j": \{"pkg": [1-9]' <<< "$out"
FAKE_VM_ENERGY=$work/energy run1 --json --interval 0 stats 7
check "FAKE_VM_ENERGY: the odd microjoule to the first vCPU" has '{"vcpu": 0, "energy_j": {"pkg": 3.500001,'

out=$("$ctl" --device "$work/none" info 2>&1); rc=$?
check "missing device exits 2" test $rc = 2
out=$("$ctl" set static_policy=bogus 2>&1); rc=$?
check "set bogus value exits 1" test $rc = 1
out=$("$ctl" set sample_period_us=99 2>&1); rc=$?
check "set out-of-range exits 1" test $rc = 1
out=$("$ctl" frob 2>&1); rc=$?
check "unknown command exits 1" test $rc = 1
check "unknown command: one line and a hint, not the usage" \
	test "$out" = "vmraplctl: unknown command 'frob'"$'\n'"try 'vmraplctl --help'"

# A "loaded module" for set (FAKE_SYSFS): booleans read and written as
# on/off.  set needs CAP_SYS_ADMIN.
mkdir -p "$work/sys/parameters"
echo 0.4.0 > "$work/sys/version"
echo Y > "$work/sys/parameters/track_all"
echo busy > "$work/sys/parameters/static_policy"
sysrun() { out=$(LD_PRELOAD=$shim FAKE_SYSFS=$work/sys "$ctl" --device "$dev" "$@" 2>&1); rc=$?; }
sysrun set track_all=yes
check "set track_all=yes: exit 1" test $rc = 1
check "set track_all=yes: says on or off" has "'track_all=yes': must be on or off (or 1 or 0)"
if [[ $(id -u) = 0 ]]; then
	sysrun set track_all=off
	check "set track_all=off: on -> off" test "$rc:$out" = "0:track_all: on -> off"
	check "set track_all=off: writes 0" test "$(cat "$work/sys/parameters/track_all")" = 0
	sysrun info
	check "info after set track_all=off: off" grep -q '^track_all        off$' <<< "$out"
	sysrun set track_all=1
	check "set track_all=1: off -> on" test "$rc:$out" = "0:track_all: off -> on"
	sysrun set static_policy=none
	check "set static_policy: OLD -> NEW" test "$rc:$out" = "0:static_policy: busy -> none"
else
	for t in "set track_all=off" "set track_all=off writes 0" "info after set" "set track_all=1" "set static_policy"; do
		n=$((n + 1)); echo "ok $n $t # SKIP not root"
	done
fi

# ---- VMs whose names are hostile (item: one VM name breaks every scrape) --
comm_proc $'bad\xffutf8';			p_bad=$kid
comm_proc $'ctl\x01\x1b[31mred';		p_ctl=$kid
comm_proc 'q"uo\te\';				p_quote=$kid
comm_proc $'new\nline';				p_nl=$kid
comm_proc 'abcdefghijklmnopqrst';		p_long=$kid	# kept: 15 bytes
comm_proc $'\xc3\xa9t\xc3\xa9 ok';		p_utf=$kid
comm_proc $'cut\xe2\x82';			p_cut=$kid
comm_proc twin;					p_twin1=$kid
comm_proc twin;					p_twin2=$kid
# A QEMU -name can be longer than comm, and hold anything but NUL.
(exec -a qemu-system-x86_64 bash -c 'sleep 60; :' qemu -name $'guest=long \xff "name" with\\back\nslash/ and more than 15 bytes' > /dev/null 2>&1) &
p_qemu2=$!; kids+=("$p_qemu2")
# A libvirt domain name of 200 characters (218 bytes: libvirt keeps it in
# file names, NAME.xml, so at most 251) with quotes, commas, spaces and
# non-ASCII; libvirt doubles its commas in -name guest=.
unit=$'vm "web" \xc3\xa9t\xc3\xa9, spaces '	# 21 characters
name200=$unit$unit$unit$unit$unit$unit$unit$unit$unit'0123456789a'
(exec -a qemu-system-x86_64 bash -c 'sleep 60; :' qemu -name "guest=${name200//,/,,},debug-threads=on" > /dev/null 2>&1) &
p_name200=$!; kids+=("$p_name200")
# QEMU -uuid: in upper case, and values that are no canonical UUID (one
# of them would end the label value and add a line if it were printed).
uuid_up=0D2A6B7C-3E4F-4A5B-8C9D-0E1F2A3B4C5D uuid_lo=0d2a6b7c-3e4f-4a5b-8c9d-0e1f2a3b4c5d
qemu_proc upper "$uuid_up";				p_uup=$kid
qemu_proc short "${uuid_lo%?}";				p_ushort=$kid
qemu_proc inject "$uuid_lo\"} 1"$'\n''vmrapl_up{x="';	p_uinject=$kid
qemu_proc braces "{$uuid_lo}";				p_ubrace=$kid
sleep 0.3
fuzz="11:$p_bad 12:$p_ctl 13:$p_quote 14:$p_nl 15:$p_long 16:$p_utf 17:$p_cut 18:$p_twin1 19:$p_twin2 20:$p_qemu2 26:$p_name200"
fuzz+=" 22:$p_uup 23:$p_ushort 24:$p_uinject 25:$p_ubrace"
export FAKE_VMS=$fuzz
run1 --json --interval 0 list
check "fuzzed names: list --json exits 0" test $rc = 0
check "fuzzed names: list --json is valid JSON (UTF-8)" json_ok
check "fuzzed names: invalid UTF-8 as U+FFFD" has $'"name": "bad\xef\xbf\xbdutf8"'
check "fuzzed names: control characters as U+FFFD" has $'"name": "ctl\xef\xbf\xbd\xef\xbf\xbd[31mred"'
check "fuzzed names: quote, backslash escaped" has '"name": "q\"uo\\te\\"'
check "fuzzed names: newline as U+FFFD" has $'"name": "new\xef\xbf\xbdline"'
check "fuzzed names: 15-byte comm" has '"name": "abcdefghijklmno"'
check "fuzzed names: valid UTF-8 kept" has $'"name": "\xc3\xa9t\xc3\xa9 ok"'
check "fuzzed names: truncated UTF-8 sequence" has $'"name": "cut\xef\xbf\xbd\xef\xbf\xbd"'
check "fuzzed names: QEMU -name" has $'"name": "long \xef\xbf\xbd \\"name\\" with\\\\back\xef\xbf\xbdslash/ and more than 15 bytes"'
check "a 200-character libvirt name: whole in list --json" has "\"name\": \"${name200//\"/\\\"}\""
run1 --interval 0 list
table_ok() { # every line printable ASCII, every row as wide as the header
	! LC_ALL=C grep -q '[^ -~]' <<< "$out" &&
	LC_ALL=C awk '/^ID / { w = length($0) } /^[0-9]/ && length($0) != w { bad = 1 } END { exit bad || !w || NR < 7 }' <<< "$out"
}
check "fuzzed names: text table is ASCII with fixed columns" table_ok
check "fuzzed names: text table shows ? for what it cannot print" has 'bad?utf8'
run1 --json --interval 0 stats 11
check "fuzzed names: stats --json is valid JSON" json_ok
run1 --interval 0 stats 14
check "fuzzed names: stats text has no control characters" bash -c '! LC_ALL=C grep -q "[^ -~]" <<< "$1"' _ "$out"
run1 --json --interval 0 stats 'bad?utf8'
check "fuzzed names: a VM by its table name" has '"id": 11,'
run1 --json --interval 0 stats $'\xc3\xa9t\xc3\xa9 ok'
check "fuzzed names: a VM by its UTF-8 name" has '"id": 16,'
run1 --json --interval 0 stats "$name200"
check "a 200-character libvirt name: stats by the whole name" has '"id": 26,'

# ---- VM identity: ids, UUIDs and shared names ----
run1 --json --interval 0 list
check "uuid: upper-case -uuid listed in lower case" has "\"name\": \"upper\", \"uuid\": \"$uuid_lo\","
check "uuid: 35 characters are no uuid" has '"name": "short", "uuid": null,'
check "uuid: a quote and a newline are no uuid" has '"name": "inject", "uuid": null,'
check "uuid: braces are no uuid" has '"name": "braces", "uuid": null,'
run --json --interval 0 stats "$uuid_lo"
check "uuid: stats by the uuid of an upper-case -uuid" has '"id": 22,'
run --interval 0 stats "${uuid_lo%?}"
check "uuid: an invalid -uuid is not looked up" test $rc = 4
run --json --interval 0 stats short
check "uuid: the VM with the invalid -uuid by name" has '"id": 23,'
run --json --interval 0 stats 23
check "uuid: the VM with the invalid -uuid by id" has '"id": 23,'
run --interval 0 stats twin
check "shared name: stats is an error" test $rc = 1
check "shared name: the error lists the ids" has 'ids 18, 19'
check "shared name: the error says it is ambiguous and what to give" has "'twin' is ambiguous: it matches 2 VMs, ids 18, 19; give the id"
# Two VMMs with one -uuid (a local migration's source and destination).
uuid_mig=6a1d2c3b-4e5f-4061-8273-9485a6b7c8d9
qemu_proc mig-src "$uuid_mig";	p_src=$kid
qemu_proc mig-dst "$uuid_mig";	p_dst=$kid
sleep 0.2
FAKE_VMS="$fuzz 26:$p_src 27:$p_dst" run --interval 0 stats "$uuid_mig"
check "shared uuid: stats is an error" test $rc = 1
check "shared uuid: the error lists the ids" has "'$uuid_mig' is ambiguous: it matches 2 VMs, ids 26, 27; give the id"
FAKE_VMS="$fuzz 26:$p_src 27:$p_dst" run --json --interval 0 stats mig-dst
check "shared uuid: stats by name" has '"id": 27,'
run --json --interval 0 stats 19
check "shared name: stats by id" has '"id": 19,'
run --json --interval 0 list
check "shared name: list keeps the name" test "$(grep -o '"name": "twin"' <<< "$out" | wc -l)" = 2
unset FAKE_VMS

# ---- names: never cut silently; QEMU's -name rules only for QEMU ----
long60=very-long-name-of-a-vm-that-does-not-fit-any-column-of-a-table-at-all
qemu_proc customer-acme-production-database-01 "$uuid_lo";	p_db1=$kid
qemu_proc customer-acme-production-database-02 "$uuid_lo";	p_db2=$kid
vmm_proc 'my vm, "quoted"';					p_myvm=$kid
qemu_proc "$long60" "$uuid_lo";					p_long60=$kid
(exec -a qemu-kvm bash -c 'sleep 60; :' qemu -name 'legacy,,name,process=x' > /dev/null 2>&1) &
p_legacy=$!; kids+=("$p_legacy")
vmm_proc 'guest=a,b';						p_vguest=$kid
sleep 0.3
export FAKE_VMS="30:$p_db1 31:$p_db2 32:$p_myvm 33:$p_long60 34:$p_legacy 35:$p_vguest"
run1 --interval 0 list
check "names: list shows a 36-character name whole (01)" grep -Eq '^30 +[0-9]+ +customer-acme-production-database-01 ' <<< "$out"
check "names: list shows a 36-character name whole (02)" grep -Eq '^31 +[0-9]+ +customer-acme-production-database-02 ' <<< "$out"
check "names: a name too long for the column is cut with a marker, its id beside it" grep -Eq '^33 +[0-9]+ +very-long-name-of-a-vm-that-does-not-\.\.\. ' <<< "$out"
check "names: the table's rows are as wide as its header" table_ok
run1 top --iterations 1 --interval 0.1
check "names: top shows a 36-character name whole" grep -Eq '^31 +[0-9]+ +customer-acme-production-database-02 ' <<< "$out"
run1 --json --interval 0 list
check "names: another VMM's --name as it is, commas and quotes kept" has '"name": "my vm, \"quoted\""'
check "names: another VMM's --name guest=a,b is no QEMU option" has '"name": "guest=a,b"'
check "names: QEMU's legacy -name NAME,... with ,, (argv[0] qemu-kvm)" has '"name": "legacy,name"'
check "names: JSON has a long name whole" has "\"name\": \"$long60\""
run1 -x , --interval 0 list
check "names: CSV has a long name whole" has ",$long60,"
unset FAKE_VMS

# ---- the man pages' SEE ALSO: only what "make install" installs ----
see_also_ok() { # man page $1
	local top=$here/../../.. refs r bad=0
	refs=$(sed -n '/^\.SH SEE ALSO/,/^\.SH/p' "$1" | sed 's/\\f[BIRP]//g; s/\\-/-/g')
	[[ -n $refs ]] || return 1
	# Pages: NAME (N) must be a page of Documentation/man the Makefile installs.
	for r in $(grep -o '^\.BR* [a-z0-9_.-]* ([0-9])' <<< "$refs" | awk '{ print $2 "." substr($3, 2, 1) }'); do
		if ! grep -q "Documentation/man/$r\$" "$top/userspace/Makefile"; then
			echo "# $1: SEE ALSO names $r, which make install does not install" >&2
			bad=1
		fi
	done
	# Files: each must be one the install target copies.
	for r in $(grep -o '[A-Za-z0-9_./-]*/[A-Za-z0-9_.-]*\.[a-z]*' <<< "$refs"); do
		if ! grep -q "/$(basename "$r")" "$top/userspace/Makefile"; then
			echo "# $1: SEE ALSO names $r, which make install does not install" >&2
			bad=1
		fi
	done
	return $bad
}
for m in "$here"/../../../Documentation/man/*.[1-8]; do
	check "man page $(basename "$m"): SEE ALSO names only what make install installs" see_also_ok "$m"
done

# The rules and the dashboard use the new name of the by-part series (the
# old one only as the fallback of an "or", for exporters from before).
uses_new_name() { # file: its queries (not its comments and descriptions)
	local old=vmrapl_vm_pkg_energy_by_part_joules_total q
	q=$(grep -v '^ *#\|"description"' "$1")
	grep -q 'rate(vmrapl_vm_energy_by_part_joules_total' <<< "$q" &&
	! grep "$old" <<< "$q" | grep -v "or rate($old" | grep -q .
}
check "rules: the by-part series by their new name" uses_new_name "$here/../../exporter/vmrapl.rules.yml"
check "dashboard: the by-part series by their new name" uses_new_name "$here/../../exporter/grafana/vmrapl.json"

# ---- no VMs ----
FAKE_NO_BASE_VMS=1 run1 list
check "no VMs: list exits 0" test $rc = 0
check "no VMs: list says so, and why there may be none" \
	test "$out" = "no VMs: no VMM has attached one and no KVM VM is running (track_all is on)"
mkdir -p "$work/sys0/parameters"; echo N > "$work/sys0/parameters/track_all"
out=$(LD_PRELOAD=$shim FAKE_NO_BASE_VMS=1 FAKE_SYSFS=$work/sys0 "$ctl" --device "$dev" list 2>&1)
check "no VMs, track_all off: list says what is not tracked" \
	test "$out" = "no VMs: no VMM has attached one (track_all is off: other KVM VMs are not tracked)"
FAKE_NO_BASE_VMS=1 run1 --json list
check "no VMs: list --json has an empty array" grep -q '"vms": \[\]}$' <<< "$out"
FAKE_NO_BASE_VMS=1 run1 top --iterations 1 --interval 0.1
check "no VMs: top says so under its header" grep -q '^no VMs: no VMM has attached one and no KVM VM is running (track_all is on)$' <<< "$out"

# ---- error messages ----
out=$("$ctl" --device /nonexistent/vmrapl info 2>&1); rc=$?
check "missing device: exit 2" test $rc = 2
check "missing device: names the path" has '/nonexistent/vmrapl: no such device'
check "missing device: the rig's 'vmrapl module not loaded'" has 'vmrapl module not loaded'
run --interval 100000 list
check "--interval too large: exit 1" test $rc = 1
check "--interval too large: states the cap" has '86400'
run --interval abc list
check "--interval garbage: not a number" has "'abc' is not a number of seconds"
run top --interval 0 --iterations 1
check "top -i 0: refused" test $rc = 1
check "top -i 0: says why" has 'more than 0'
out=$("$ctl" --bogus 2>&1); rc=$?
check "getopt error: exit 1" test $rc = 1
check "getopt error: starts with the short name" grep -q '^vmraplctl: unrecognized option' <<< "$out"
check "getopt error: no build path" hasnt "$ctl:"
check "getopt error: one line and a hint, not the usage" \
	test "$out" = "vmraplctl: unrecognized option '--bogus'"$'\n'"try 'vmraplctl --help'"
out=$("$ctl" -i 2>&1)
check "getopt missing argument: short name" grep -q '^vmraplctl: option requires an argument' <<< "$out"
check "getopt missing argument: a hint, not the usage" test "$(sed -n '2p;3p' <<< "$out")" = "try 'vmraplctl --help'"
out=$("$ctl" --version 2>&1); rc=$?
check "--version" test $rc = 0 -a -n "$(grep -E '^vmraplctl [0-9]' <<< "$out")"
out=$("$ctl" -V 2>&1); rc=$?
check "-V" test $rc = 0 -a -n "$(grep -E '^vmraplctl [0-9]' <<< "$out")"

# ---- top --json: NDJSON with timestamps; -o FILE; -x SEP; stat ----
# top on a terminal: q quits (a pseudo-terminal from python3's pty).
top_q() { # exit 0 when "q" ends a top that would run 100 refreshes,
	# and the terminal echoes again
	[[ -z $have_py ]] && return 0
	LD_PRELOAD=$shim python3 -c '
import os, pty, select, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
buf, t = b"", time.time()
while b"vmraplctl top - " not in buf and time.time() - t < 10:
    if select.select([fd], [], [], 0.2)[0]:
        try:
            buf += os.read(fd, 4096)
        except OSError:
            break
os.write(fd, b"q")
t = time.time()
while time.time() - t < 5:
    if select.select([fd], [], [], 0.2)[0]:
        try:
            os.read(fd, 4096)
        except OSError:
            pass
    wpid, st = os.waitpid(pid, os.WNOHANG)
    if wpid:
        echo = termios.tcgetattr(fd)[3] & termios.ECHO
        sys.exit(0 if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0 and echo else 1)
os.kill(pid, 9)
os.waitpid(pid, 0)
sys.exit(1)
' "$ctl" --device "$dev" top --interval 0.5 --iterations 100
}
check "top: q quits, and the terminal echoes again" top_q

run1 --json top --iterations 3 --interval 0.1
check "top --json: one JSON object per line" json_ok -l
check "top --json: three lines" test "$(grep -c . <<< "$out")" = 3
ts_ok() { # every line's timestamp within 60 s of now
	local now; now=$(date +%s)
	[[ $(grep -c '^{"timestamp": [0-9]*\.[0-9]*, "iteration"' <<< "$out") = 3 ]] &&
	sed 's/^{"timestamp": \([0-9.]*\),.*/\1/' <<< "$out" |
		awk -v now="$now" '{ d = $1 - now; if (d > 60 || d < -60) bad = 1 } END { exit bad }'
}
check "top --json: timestamps" ts_ok
run1 -o "$work/list.out" --interval 0 list
check "-o: nothing on stdout" test $rc = 0 -a -z "$out"
check "-o: the table in the file" grep -q 'pkg_J' "$work/list.out"
run1 -x , --interval 0.1 list
csv_ok() { # header + 2 rows; the same field count everywhere (RFC 4180 quoting)
	[[ -z $have_py ]] && return 0
	python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin.read().splitlines(), delimiter=sys.argv[1]))
assert rows[0][:3] == ["id", "pid", "name"], rows[0]
assert len(rows) == int(sys.argv[2]) + 1, rows
assert all(len(r) == len(rows[0]) for r in rows), rows
assert any(r[2] == "web,1" for r in rows[1:]), rows
' "$1" "$2" <<< "$out"
}
check "-x ,: CSV" csv_ok , 2
check "-x ,: a name with the separator is quoted" has '"web,1"'
check "-x ,: header" has 'id,pid,name,uuid,vcpus,mode,charge,pkg_j,dram_j,pkg_w,dram_w,overhead_share,overhead_pct,source,estimated,timestamp'
check "-x ,: the uuid, and an empty field without one" grep -Eq "^7,$qemu_pid,\"web,1\",$uuid,2,attached," <<< "$out"
check "-x ,: an empty uuid field" grep -Eq '^9,[0-9]+,[^,]*,,1,auto,' <<< "$out"
recent() { # $1 is a Unix time within 60 s of now
	awk -v t="$1" -v now="$(date +%s)" 'BEGIN { d = t - now; exit !(t > 0 && d < 60 && d > -60) }'
}
check "-x , list: the estimated flag and a timestamp on every row" \
	test "$(grep -Ec ',estimate,true,[0-9]+\.[0-9]{3}$' <<< "$out")" = 2
check "-x , list: the timestamp is now" recent "$(sed -n '2s/.*,//p' <<< "$out")"
run1 --json --interval 0 list
check "list --json: a timestamp" recent "$(sed -n 's/.*"timestamp": \([0-9.]*\),.*/\1/p' <<< "$out")"
run1 --json --interval 0 stats 7
check "stats --json: a timestamp" recent "$(sed -n 's/.*"timestamp": \([0-9.]*\),.*/\1/p' <<< "$out")"
run1 -x , --interval 0 stats 7
check "-x , stats: the estimated flag and a timestamp" grep -Eq '^7,.*,estimate,true,[0-9]+\.[0-9]{3}$' <<< "$out"
run1 -x ';' top --iterations 2 --interval 0.1
check "-x top: header once, then rows" test "$(grep -c '^timestamp;iteration;id' <<< "$out")" = 1 -a "$(grep -c '^[0-9.]*;[12];' <<< "$out")" = 8
check "-x top: the header has the interval share, the flag and the package columns" has ';overhead_share;overhead_pct;interval_overhead_pct;source;estimated;kind;package;sampled_w;tracked_w;host_w;idle_w;lost_w;static_w'
check "-x top: VM rows say kind vm" test "$(grep -Ec ';estimate;true;vm;;;;;;;$' <<< "$out")" = 4
check "-x top: package rows with host, idle and lost" test "$(grep -Ec '^[0-9.]+;[12](;){15}estimate;true;package;[01];[0-9.]+;[0-9.]+;[0-9.]+;[0-9.]+;[0-9.]+;5\.000$' <<< "$out")" = 4
csv_fields_ok() { # every line has as many fields as the header
	[[ -z $have_py ]] && return 0
	python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin.read().splitlines(), delimiter=sys.argv[1]))
assert all(len(r) == len(rows[0]) for r in rows), rows
' "$1" <<< "$out"
}
check "-x top: every row has every field" csv_fields_ok ';'
run1 stat -- sh -c 'sleep 0.2; exit 3'
check "stat: exits with the command's status" test $rc = 3
check "stat: reports the run" has 'ran 0.'
check "stat: the VMs' energy" grep -Eq '^7 +[0-9]+ +web,1 ' <<< "$out"
check "stat: packages" has 'pkg 1:'
run1 --json stat -- true
check "stat --json: valid JSON" json_ok
check "stat --json: command and status" has '"command": ["true"], "exit_status": 0, "timestamp": '
check "stat --json: VM energy over the run" grep -q '"id": 7, .*"energy_j": {"pkg": 1.000000' <<< "$out"
run1 -o "$work/stat.out" -x , stat -- echo hello
check "stat -o: the command's output stays on stdout" test "$out" = hello
check "stat -o -x: CSV in the file" grep -q '^7,' "$work/stat.out"
run stat -- /nonexistent/cmd
check "stat: a command that is not there exits 127" test $rc = 127
check "stat: a command that is not there: 'cannot run' and nothing else" \
	test "$out" = "vmraplctl: cannot run '/nonexistent/cmd': No such file or directory"
run --json stat -- /nonexistent/cmd
check "stat --json: no report when the command did not run" test "$rc:$out" = "127:vmraplctl: cannot run '/nonexistent/cmd': No such file or directory"
: > "$work/noexec"; chmod 644 "$work/noexec"
run stat -- "$work/noexec"
check "stat: a command that cannot be run exits 126, no report" test "$rc:$out" = "126:vmraplctl: cannot run '$work/noexec': Permission denied"

# GET /metrics from $1:$2 into $out (retrying while the exporter starts).
scrape() {
	out=
	for _ in $(seq 50); do
		out=$( { exec 3<>"/dev/tcp/$1/$2"; } 2>/dev/null &&
		      printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3) && break
		sleep 0.1
	done
}
# The body of $out (after the HTTP header) passes promtool and promcheck.py.
metrics_ok() {
	local body
	body=$(sed '1,/^\r*$/d' <<< "$out")
	[[ -n $body ]] || return 1
	if command -v promtool > /dev/null; then
		promtool check metrics <<< "$body" > "$work/promtool.out" 2>&1 || {
			cat "$work/promtool.out" >&2; return 1; }
	fi
	if [[ -n $have_py ]]; then
		python3 "$here/promcheck.py" <<< "$body" >&2 || return 1
	fi
	return 0
}
# Every per-VM sample of web,1 in $out (at least 7) has its uuid label.
all_have_uuid() {
	local lines
	lines=$(grep '^vmrapl_vm_[a-z_]*{vm="web,1",' <<< "$out")
	[[ $(grep -c . <<< "$lines") -ge 7 ]] && ! grep -vqF "uuid=\"$uuid\"," <<< "$lines"
}
# VM 7's static and dynamic pkg parts add up to its pkg total.
parts_sum() {
	awk -v u="$uuid" '
		index($0, "vmrapl_vm_energy_joules_total{vm=\"web,1\",id=\"7\",uuid=\"" u "\",domain=\"pkg\"}") == 1 { t = $2 }
		index($0, "vmrapl_vm_energy_by_part_joules_total{vm=\"web,1\",id=\"7\",") == 1 { p += $2; n++ }
		END { d = t - p; exit !(n == 2 && t > 0 && d < 1e-5 && d > -1e-5) }' <<< "$out"
}

stop_exporter() {
	[[ -n $exp_pid ]] && kill "$exp_pid" 2>/dev/null && wait "$exp_pid" 2>/dev/null
	exp_pid=
}

if [[ -n $exporter && -x $exporter ]]; then
	port=$((20000 + RANDOM % 20000))
	LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid "$exporter" --device "$dev" \
		--listen 127.0.0.1:$port --powercap-tree "$work/pc" \
		--powercap-interval 0.1 --power-interval 0.1 2>/dev/null &
	exp_pid=$!
	scrape 127.0.0.1 $port
	sleep 0.3
	scrape 127.0.0.1 $port
	check "exporter: 200" has 'HTTP/1.1 200'
	check "exporter: HELP/TYPE" has '# TYPE vmrapl_vm_energy_joules_total counter'
	check "exporter: vm energy, with the uuid" has "vmrapl_vm_energy_joules_total{vm=\"web,1\",id=\"7\",uuid=\"$uuid\",domain=\"dram\"}"
	check "exporter: overhead" has "vmrapl_vm_overhead_energy_joules_total{vm=\"web,1\",id=\"7\",uuid=\"$uuid\",domain=\"pkg\"}"
	check "exporter: overhead per domain" has "vmrapl_vm_overhead_energy_joules_total{vm=\"web,1\",id=\"7\",uuid=\"$uuid\",domain=\"dram\"}"
	check "exporter: no uuid label for a VM without -uuid" grep -Eq '^vmrapl_vm_energy_joules_total\{vm="[^"]*",id="9",domain="pkg"\} ' <<< "$out"
	check "exporter: every series of a VM with -uuid has it" all_have_uuid
	check "exporter: package" has 'vmrapl_package_energy_joules_total{package="1",domain="pkg"}'
	check "exporter: unattributed" has 'vmrapl_package_unattributed_energy_joules_total{package="0",kind="lost",domain="pkg"} 0.000000'
	check "exporter: unattributed per domain" has 'vmrapl_package_unattributed_energy_joules_total{package="0",kind="host",domain="dram"}'
	check "exporter: build info" grep -Eq '^vmrapl_build_info\{version="[^"]+",abi="[0-9]+"\} 1$' <<< "$out"
	check "exporter: power gauge" grep -Eq '^vmrapl_vm_power_watts\{vm="web,1",id="7",uuid="'"$uuid"'",domain="pkg"\} [0-9.]+$' <<< "$out"
	check "exporter: source" has 'vmrapl_source_info{source="estimate",estimated="true"} 1'
	check "exporter: vm info" has "vmrapl_vm_info{vm=\"web,1\",id=\"7\",uuid=\"$uuid\",pid=\"$qemu_pid\",vcpus=\"2\",attached=\"true\"} 1"
	check "exporter: a VM's static part" grep -Eq '^vmrapl_vm_energy_by_part_joules_total\{vm="web,1",id="7",uuid="'"$uuid"'",part="static",domain="pkg"\} [0-9.]+$' <<< "$out"
	check "exporter: a VM's dynamic part" grep -Eq '^vmrapl_vm_energy_by_part_joules_total\{vm="web,1",id="7",uuid="'"$uuid"'",part="dynamic",domain="pkg"\} [0-9.]+$' <<< "$out"
	old_is_new() { # the deprecated name $1 has the samples of $2, and says so
		local a b
		a=$(grep "^$1{" <<< "$out" | sed "s/^$1{//")
		b=$(grep "^$2{" <<< "$out" | sed "s/^$2{//")
		[[ -n $a && $a == "$b" ]] && grep -q "^# HELP $1 Deprecated: the old name of $2" <<< "$out"
	}
	check "exporter: the old name, deprecated, has the same samples" \
		old_is_new vmrapl_vm_pkg_energy_by_part_joules_total vmrapl_vm_energy_by_part_joules_total
	check "exporter: static + dynamic == the pkg total" parts_sum
	check "exporter: static power and origin" has 'vmrapl_package_static_power_watts{package="0",origin="fit"} 5.000000'
	check "exporter: static power from idle runs" has 'vmrapl_package_static_power_watts{package="1",origin="idle"} 5.000000'
	check "exporter: the fit and its standard error" has 'vmrapl_package_static_fit_stderr_watts{package="0"} 0.125000'
	check "exporter: fit conditioned" has 'vmrapl_package_static_fit_conditioned{package="0"} 1'
	check "exporter: package less cores" has 'vmrapl_package_static_core_watts{package="1"} 6.200000'
	check "exporter: a counter's update interval" has 'vmrapl_package_update_interval_seconds{package="0",domain="pkg"} 0.000976600'
	check "exporter: the per-core counter's interval" has 'vmrapl_package_update_interval_seconds{package="1",domain="core"} 0.001000000'
	check "exporter: its spread" has 'vmrapl_package_update_interval_spread_seconds{package="0",domain="pkg"} 0.000039000'
	check "exporter: not measured: the default, and says so" has 'vmrapl_package_update_interval_seconds{package="0",domain="dram"} 0.001000000'
	check "exporter: measured or not" has 'vmrapl_package_update_interval_measured{package="0",domain="dram"} 0'
	check "exporter: every sample has HELP and TYPE" bash -c '
		awk "/^# HELP /{h[\$3]=1} /^# TYPE /{t[\$3]=1} /^vmrapl/{sub(/[{ ].*/, \"\"); if (!h[\$0] || !t[\$0]) bad=1} END{exit bad}" <<< "$1"' _ "$out"
	sleep 0.3
	e1=$(cat "$work/pc/web,1/intel-rapl:0/energy_uj" 2>/dev/null)
	sleep 0.3
	e2=$(cat "$work/pc/web,1/intel-rapl:0/energy_uj" 2>/dev/null)
	check "powercap tree: energy_uj grows" test -n "$e1" -a -n "$e2" -a "${e2:-0}" -gt "${e1:-0}"
	check "powercap tree: max_energy_range_uj" test -s "$work/pc/web,1/intel-rapl:0/max_energy_range_uj"

	stop_exporter

	# The load time stays put while the wall clock moves (here 0.7 ms
	# more at every read of it), and moves when the module is reloaded.
	echo 1000000000 > "$work/loadboot"
	port=$((port + 1))
	LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid FAKE_LOAD_BOOT="@$work/loadboot" \
		FAKE_REALTIME_DRIFT_US=700 "$exporter" --device "$dev" \
		--listen 127.0.0.1:$port 2>/dev/null &
	exp_pid=$!
	lts=()
	for _ in 1 2 3 4 5; do
		scrape 127.0.0.1 $port
		lts+=("$(sed -n 's/^vmrapl_module_load_time_seconds //p' <<< "$out")")
	done
	echo 61000000000 > "$work/loadboot"	# reloaded 60 s later
	scrape 127.0.0.1 $port
	lt_reload=$(sed -n 's/^vmrapl_module_load_time_seconds //p' <<< "$out")
	stop_exporter
	check "exporter: the load time does not move with the wall clock (${lts[*]})" \
		test -n "${lts[0]}" -a "$(printf '%s\n' "${lts[@]}" | sort -u | wc -l)" = 1
	check "exporter: a reload moves the load time by 60 s (${lts[0]} -> $lt_reload)" \
		awk -v a="${lts[0]}" -v b="$lt_reload" 'BEGIN { d = b - a; exit !(a > 0 && d > 59.9 && d < 60.2) }'

	# Hostile names, shared names, power, a VM that comes later.  Two VMs
	# of one 241-byte name whose byte 232 is inside a character: NAME-ID
	# keeps 232 bytes of NAME at most, cut before that character.
	a231=$(printf 'a%.0s' $(seq 231))
	qemu_proc "$a231"$'\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9' ""; p_cut1=$kid
	qemu_proc "$a231"$'\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9' ""; p_cut2=$kid
	sleep 0.2
	echo "$fuzz 27:$p_cut1 28:$p_cut2" > "$work/vms"
	port=$((port + 1))
	LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid FAKE_VMS="@$work/vms" "$exporter" \
		--device "$dev" --listen 127.0.0.1:$port --vcpu-metrics \
		--powercap-tree "$work/pc2" --powercap-interval 0.1 \
		--power-interval 0.1 2>"$work/exp.err" &
	exp_pid=$!
	scrape 127.0.0.1 $port
	check "exporter, fuzzed names: 200" has 'HTTP/1.1 200'
	check "exporter, fuzzed names: the body parses (promtool, strict checker)" metrics_ok
	check "exporter, fuzzed names: invalid UTF-8 as U+FFFD" has $'vmrapl_vm_info{vm="bad\xef\xbf\xbdutf8",id="11",'
	check "exporter, fuzzed names: quote and backslash escaped" has 'vm="q\"uo\\te\\",id="13"'
	check "exporter, fuzzed names: newline" has $'vm="new\xef\xbf\xbdline",id="14"'
	check "exporter, a 200-character libvirt name: the whole label" has "vmrapl_vm_info{vm=\"${name200//\"/\\\"}\",id=\"26\","
	check "exporter, -uuid in upper case: the uuid label in lower case" has "vmrapl_vm_info{vm=\"upper\",id=\"22\",uuid=\"$uuid_lo\",pid="
	check "exporter, -uuid of 35 characters: no uuid label" has 'vmrapl_vm_info{vm="short",id="23",pid='
	check "exporter, -uuid with a quote and a newline: no uuid label" has 'vmrapl_vm_info{vm="inject",id="24",pid='
	check "exporter, -uuid in braces: no uuid label" has 'vmrapl_vm_info{vm="braces",id="25",pid='
	check "exporter, invalid -uuid: nothing of it in the body" hasnt 'vmrapl_up{x='
	check "exporter, shared name: no -<id> renaming" hasnt 'twin-'
	check "exporter, shared name: both VMs by id" test "$(grep -c 'vmrapl_vm_energy_joules_total{vm="twin",id="1[89]",domain="pkg"}' <<< "$out")" = 2
	check "exporter: vcpu series have the id and uuid" has "vmrapl_vm_vcpu_energy_joules_total{vm=\"web,1\",id=\"7\",uuid=\"$uuid\",vcpu=\"1\",domain=\"pkg\"}"
	check "exporter: a vCPU's static part" grep -Eq '^vmrapl_vm_vcpu_energy_by_part_joules_total\{vm="web,1",id="7",uuid="'"$uuid"'",vcpu="1",part="static",domain="pkg"\} [0-9.]+$' <<< "$out"
	check "exporter: the vCPUs' old name, deprecated, has the same samples" \
		old_is_new vmrapl_vm_vcpu_pkg_energy_by_part_joules_total vmrapl_vm_vcpu_energy_by_part_joules_total
	check "powercap tree: the older of two VMs has the name" eventually test -d "$work/pc2/twin/intel-rapl:0"
	check "powercap tree: the other gets NAME-ID" eventually test -d "$work/pc2/twin-19/intel-rapl:0"
	check "powercap tree: no control characters in directory names" bash -c '! ls "$1" | LC_ALL=C grep -q "[[:cntrl:]]"' _ "$work/pc2"
	check "powercap tree: NAME-ID of a long name cut at a character boundary" eventually test -d "$work/pc2/$a231-28/intel-rapl:0"
	check "powercap tree: every directory name is UTF-8" bash -c 'ls "$1" | iconv -f UTF-8 -t UTF-8 > /dev/null' _ "$work/pc2"
	# A third "twin" starts: the older VMs keep their names and directories.
	comm_proc twin; p_twin3=$kid
	sleep 0.2
	echo "$fuzz 21:$p_twin3" > "$work/vms"
	sleep 0.4
	scrape 127.0.0.1 $port
	check "shared name: a new VM changes no older series" test "$(grep -c 'vmrapl_vm_energy_joules_total{vm="twin",id="\(18\|19\|21\)",domain="pkg"}' <<< "$out")" = 3
	check "powercap tree: directories stay with their VMs" eventually test -d "$work/pc2/twin" -a -d "$work/pc2/twin-19" -a -d "$work/pc2/twin-21"
	# The older twin goes: its directory goes, the others stay.
	echo "${fuzz/18:$p_twin1/} 21:$p_twin3" > "$work/vms"
	check "powercap tree: a gone VM's directory is removed, the others stay" eventually test ! -e "$work/pc2/twin" -a -d "$work/pc2/twin-19" -a -d "$work/pc2/twin-21"
	stop_exporter
	check "exporter: nothing said about the device while it works" bash -c '! grep -q "vmrapl_up is" "$1"' _ "$work/exp.err"

	# No module: the reason, once.
	port=$((port + 1))
	"$exporter" --device "$work/none" --listen 127.0.0.1:$port 2>"$work/exp.err" &
	exp_pid=$!
	scrape 127.0.0.1 $port
	scrape 127.0.0.1 $port
	check "exporter, no device: vmrapl_up 0" has 'vmrapl_up 0'
	check "exporter, no device: logs why, naming the device" grep -q "cannot open $work/none: No such file or directory" "$work/exp.err"
	check "exporter, no device: logs it once" test "$(grep -c 'vmrapl_up is 0' "$work/exp.err")" = 1
	stop_exporter

	# Power limits: VM 7 limited (40 W over 1 s), held (a record in the
	# limit directory), its cgroup (a fake /proc and cgroup tree) 2.5 s
	# throttled; VM 9 limited, not held, no cgroup found (its VMM, the
	# exporter itself, has no entry in the fake /proc).
	mkdir -p "$work/lrec" "$work/lproc/$qemu_pid" "$work/lcg/vms/a"
	echo "0::/vms/a" > "$work/lproc/$qemu_pid/cgroup"
	echo "$qemu_pid" > "$work/lcg/vms/a/cgroup.procs"
	printf 'usage_usec 9000000\nnr_periods 40\nnr_throttled 20\nthrottled_usec 2500000\n' \
		> "$work/lcg/vms/a/cpu.stat"
	: > "$work/lrec/7"
	printf '7 40000000 1000000\n9 2500 10000\n' > "$work/elim"
	port=$((port + 1))
	LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid FAKE_LIMITS=$work/elim \
		"$exporter" --device "$dev" --listen 127.0.0.1:$port \
		--limit-dir "$work/lrec" --proc "$work/lproc" \
		--cgroup-root "$work/lcg" 2>/dev/null &
	exp_pid=$!
	scrape 127.0.0.1 $port
	check "exporter: a VM's power limit" has "vmrapl_vm_power_limit_watts{vm=\"web,1\",id=\"7\",uuid=\"$uuid\"} 40.000000"
	check "exporter: its window" has "vmrapl_vm_power_limit_window_seconds{vm=\"web,1\",id=\"7\",uuid=\"$uuid\"} 1.000000"
	check "exporter: held (vmrapl-limitd's record)" has "vmrapl_vm_power_limit_held{vm=\"web,1\",id=\"7\",uuid=\"$uuid\"} 1"
	check "exporter: its cgroup's throttled time" has "vmrapl_vm_cpu_throttled_seconds_total{vm=\"web,1\",id=\"7\",uuid=\"$uuid\"} 2.500000"
	check "exporter: a limit of 2.5 mW over 10 ms" grep -Eq '^vmrapl_vm_power_limit_watts\{vm="[^"]*",id="9"\} 0.002500$' <<< "$out"
	check "exporter: not held without a record" grep -Eq '^vmrapl_vm_power_limit_held\{vm="[^"]*",id="9"\} 0$' <<< "$out"
	check "exporter: no throttled time without a cgroup" \
		test -z "$(grep '^vmrapl_vm_cpu_throttled_seconds_total{vm="[^"]*",id="9"}' <<< "$out")"
	check "exporter: the limit metrics pass promtool and promcheck" metrics_ok
	stop_exporter
	: > "$work/elim"
	port=$((port + 1))
	LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid FAKE_LIMITS=$work/elim \
		"$exporter" --device "$dev" --listen 127.0.0.1:$port 2>/dev/null &
	exp_pid=$!
	scrape 127.0.0.1 $port
	check "exporter: no limit, no limit series" \
		test -z "$(grep 'vmrapl_vm_power_limit\|vmrapl_vm_cpu_throttled' <<< "$out")"
	stop_exporter

	# --listen with a host name, and IPv6.
	port=$((port + 1))
	"$exporter" --device "$work/none" --listen localhost:$port 2>/dev/null &
	exp_pid=$!
	scrape 127.0.0.1 $port
	check "exporter: --listen localhost:PORT" has 'vmrapl_up 0'
	stop_exporter
	if [[ -n $have_py ]] && python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
		port=$((port + 1))
		"$exporter" --device "$work/none" --listen "[::1]:$port" 2>/dev/null &
		exp_pid=$!
		scrape ::1 $port
		check "exporter: --listen [::1]:PORT" has 'vmrapl_up 0'
		stop_exporter
	else
		n=$((n + 1)); echo "ok $n exporter: --listen [::1]:PORT # SKIP no IPv6 loopback"
	fi
	# An address in use: the reason, and the address once.
	port=$((port + 1))
	"$exporter" --device "$work/none" --listen 127.0.0.1:$port 2>/dev/null &
	exp_pid=$!
	scrape 127.0.0.1 $port
	out=$("$exporter" --device "$work/none" --listen 127.0.0.1:$port 2>&1); rc=$?
	check "exporter: an address in use is an error" test $rc = 1
	check "exporter: an address in use: one line, the address once, the reason" \
		test "$out" = "vmrapl-exporter: cannot listen on 127.0.0.1:$port: Address already in use"
	out=$("$exporter" --device "$work/none" --listen localhost:$port 2>&1); rc=$?
	check "exporter: a host name in use: the name and its address" \
		test "$rc:$out" = "1:vmrapl-exporter: cannot listen on localhost:$port (127.0.0.1:$port): Address already in use"
	stop_exporter
	out=$("$exporter" --listen nosuchhost.invalid:1 2>&1); rc=$?
	check "exporter: --listen unknown host is an error" test $rc = 1
	check "exporter: --listen says why" has "bad --listen 'nosuchhost.invalid:1'"
	out=$("$exporter" --version 2>&1); rc=$?
	check "exporter: --version" test $rc = 0 -a -n "$(grep -E '^vmrapl-exporter [0-9]' <<< "$out")"
	out=$("$exporter" --bogus 2>&1); rc=$?
	check "exporter: getopt error starts with the short name" grep -q '^vmrapl-exporter: unrecognized option' <<< "$out"
	check "exporter: getopt error: one line and a hint, not the usage" \
		test "$out" = "vmrapl-exporter: unrecognized option '--bogus'"$'\n'"try 'vmrapl-exporter --help'"
	out=$("$exporter" stray 2>&1); rc=$?
	check "exporter: an argument: one line and a hint" \
		test "$rc:$out" = "1:vmrapl-exporter: unexpected argument 'stray'"$'\n'"try 'vmrapl-exporter --help'"
else
	n=$((n + 1)); echo "ok $n exporter # SKIP not built"
fi
echo "1..$n"
exit $((fail > 0))
