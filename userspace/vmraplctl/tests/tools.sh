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
work=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-tools.XXXXXX")
dev=$work/fake-vmrapl
: > "$dev"
n=0 fail=0
qemu_pid= exp_pid=
cleanup() {
	[[ -n $qemu_pid ]] && kill "$qemu_pid" 2>/dev/null
	[[ -n $exp_pid ]] && kill "$exp_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; }
check() { # description, command...
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
has() { grep -qF -- "$1" <<< "$out"; }
run() { out=$(LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid "$ctl" --device "$dev" "$@" 2>&1); rc=$?; }

# A process with a QEMU-style command line (not exec'ed away by bash).
bash -c 'sleep 30; :' qemu-system-x86_64 -machine q35 -name guest=web,,1,debug-threads=on &
qemu_pid=$!

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

run --json --interval 0.2 list
check "list --json" test $rc = 0
check "list: QEMU -name guest= with ,, escape" has '"name": "web,1"'
check "list: attached VM with pid" has "\"id\": 7, \"pid\": $qemu_pid,"
check "list: energy per measured domain" has '"energy_j": {"pkg": '
check "list: power over the interval" has '"power_w": {"pkg": '
check "list: auto VM, guest charge" has '"attached": false, "mode": "auto", "charge": "guest"'
run list --interval 0
check "list text, no power" has 'pkg_J'

run --json top --iterations 2 --interval 0.1
check "top --json two refreshes" test "$rc" = 0 -a "$(grep -c '"iteration"' <<< "$out")" = 2
check "top: package powers" has '"packages": [{"package": 0, "cpus": 2, "p_static_w": 5.000, "power_w": {"sampled": '
run top --iterations 1 --interval 0.1
check "top text header" has 'pkg 1:'

run --json --interval 0.1 stats web,1
check "stats by name" has '"id": 7,'
check "stats: per-vCPU power over the interval" has '{"vcpu": 1, "energy_j": {"pkg": '
check "stats: per-vCPU busy share" has '"busy": '
run --json --interval 0 stats 9
check "stats by id, per-vCPU energy" has '"per_vcpu": [{"vcpu": 0, "energy_j": {"pkg": '
run stats "$qemu_pid"
check "stats by pid (text), per-vCPU rows" grep -Eq '^  1 +[0-9.]+ +[0-9.]+ +0\.400' <<< "$out"
run stats nosuch
check "stats unknown VM exits 4" test $rc = 4
run stats 12345678
check "stats unknown id exits 4" test $rc = 4

out=$("$ctl" --device "$work/none" info 2>&1); rc=$?
check "missing device exits 2" test $rc = 2
out=$("$ctl" set static_policy=bogus 2>&1); rc=$?
check "set bogus value exits 1" test $rc = 1
out=$("$ctl" set sample_period_us=99 2>&1); rc=$?
check "set out-of-range exits 1" test $rc = 1
out=$("$ctl" frob 2>&1); rc=$?
check "unknown command exits 1" test $rc = 1

if [[ -n $exporter && -x $exporter ]]; then
	port=$((20000 + RANDOM % 20000))
	LD_PRELOAD=$shim FAKE_QEMU_PID=$qemu_pid "$exporter" --device "$dev" \
		--listen 127.0.0.1:$port --powercap-tree "$work/pc" \
		--powercap-interval 0.1 2>/dev/null &
	exp_pid=$!
	out=
	for _ in $(seq 50); do
		sleep 0.1
		out=$(exec 3<>/dev/tcp/127.0.0.1/$port 2>/dev/null &&
		      printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3) && break
	done
	check "exporter: 200" has 'HTTP/1.1 200'
	check "exporter: HELP/TYPE" has '# TYPE vmrapl_vm_energy_joules_total counter'
	check "exporter: vm energy" has 'vmrapl_vm_energy_joules_total{vm="web,1",domain="dram"}'
	check "exporter: overhead" has 'vmrapl_vm_overhead_energy_joules_total{vm="web,1"}'
	check "exporter: package" has 'vmrapl_package_energy_joules_total{package="1",domain="pkg"}'
	check "exporter: unattributed" has 'vmrapl_package_unattributed_energy_joules_total{package="0",kind="lost"} 0.000000'
	check "exporter: source" has 'vmrapl_source_info{source="estimate",estimated="true"} 1'
	check "exporter: vm info" has "vmrapl_vm_info{vm=\"web,1\",id=\"7\",pid=\"$qemu_pid\",vcpus=\"2\",attached=\"true\"} 1"
	check "exporter: every sample has HELP and TYPE" bash -c '
		awk "/^# HELP /{h[\$3]=1} /^# TYPE /{t[\$3]=1} /^vmrapl/{sub(/[{ ].*/, \"\"); if (!h[\$0] || !t[\$0]) bad=1} END{exit bad}" <<< "$1"' _ "$out"
	sleep 0.3
	e1=$(cat "$work/pc/web,1/intel-rapl:0/energy_uj" 2>/dev/null)
	sleep 0.3
	e2=$(cat "$work/pc/web,1/intel-rapl:0/energy_uj" 2>/dev/null)
	check "powercap tree: energy_uj grows" test -n "$e1" -a -n "$e2" -a "${e2:-0}" -gt "${e1:-0}"
	check "powercap tree: max_energy_range_uj" test -s "$work/pc/web,1/intel-rapl:0/max_energy_range_uj"
else
	n=$((n + 1)); echo "ok $n exporter # SKIP not built"
fi
echo "1..$n"
exit $((fail > 0))
