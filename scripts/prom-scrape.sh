#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A fleet of two hypervisors under one real Prometheus ("make prom-check").
#
# Boots two rigs in rig.mode=prom (selftests/vmrapl/prom.c), hv1 on KVER_A
# and hv2 on KVER_B, each with three VMs (busy, duty, idle) and its own
# vmrapl-exporter, forwarded to its own free host port.  The host's
# prometheus scrapes both through file_sd targets (job "vmrapl", instance
# "hv1"/"hv2") with userspace/exporter/vmrapl.rules.yml loaded.  hv2
# restarts its VMs, its exporter and vmrapl itself PROM_RESTART_AT seconds
# in (default 80): every counter of that host starts again from 0.  After
# PROM_SECONDS (default 180) of scraping it checks, over the HTTP API:
#   - both targets up, each with its own instance label: each answered
#     one of its last three scrapes, hv1 90 % of the window's;
#   - per host, the per-VM watts rule has busy, duty and idle, busy > idle;
#   - the fleet-wide sum per VM name equals the sum over the hosts, at the
#     rules' own evaluation time;
#   - the restart: hv2's vmrapl_module_load_time_seconds changed, hv1's did
#     not; no fleet series per VM name has a gap or a negative value over
#     the whole run (rate() across the counter reset);
#   - every query of userspace/exporter/grafana/vmrapl.json returns data
#     (scripts/grafana-check.py);
#   - headless Chromium renders Prometheus's own graph page of the per-VM
#     watts rule (a PNG kept in build/prom/graph.png, checked by
#     scripts/png-check.py) and its DOM lists all three VMs; the API that
#     page calls (query_range) returns them too.
# TAP output; QEMU, prometheus and chromium are stopped on every exit.
#
# Usage: scripts/prom-scrape.sh [KVER_A [KVER_B]]
#        (default: the oldest and the newest installed host kernel; the
#        module, userspace and selftests are built for them first)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
mapfile -t host_kvers < <(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null |
	sed 's|^/usr/src/linux-headers-||' | sort -V)
kver_a=${1:-${host_kvers[0]:-}}
kver_b=${2:-${host_kvers[-1]:-}}
[[ -n $kver_a && -n $kver_b ]] || { echo "prom-scrape: no kernel headers" >&2; exit 1; }
secs=${PROM_SECONDS:-180}
restart_at=${PROM_RESTART_AT:-80}
out=$top/build/prom
mkdir -p "$out"
rm -f "$out"/graph.png "$out"/graph.html

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-prom.XXXXXX")
rig_pids=() prom_pid=
cleanup() {
	[[ -n $prom_pid ]] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
	# run.sh (its own process group, set -m below) runs QEMU under
	# timeout(1), which puts itself and QEMU in a group of their own:
	# end that group first, then run.sh's.
	local p t
	for p in "${rig_pids[@]}"; do
		for t in $(ps -o pid=,comm= --ppid "$p" | awk '$2 == "timeout" { print $1 }'); do
			kill -- -"$t" 2>/dev/null
		done
		kill -- -"$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
wait_url() { # url, seconds: 0 once it answers 2xx within them
	local i
	for ((i = 0; i < $2; i++)); do
		curl -sf "$1" > /dev/null && return 0
		sleep 1
	done
	return 1
}
check() { # description, command...
	local d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

for c in prometheus chromium python3 curl; do
	command -v "$c" > /dev/null || { echo "prom-scrape: $c missing (scripts/deps.sh)" >&2; exit 1; }
done
for k in $(printf '%s\n' "$kver_a" "$kver_b" | sort -u); do
	make -s --no-print-directory module KVER="$k" > "$tmp/build-$k.log" 2>&1 ||
		{ cat "$tmp/build-$k.log"; echo "prom-scrape: module build for $k failed" >&2; exit 1; }
done
make -s --no-print-directory selftests > "$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log"; exit 1; }
# The rig's QEMU (cached after its first build)
scripts/qemu.sh build > "$tmp/qemu.log" 2>&1 ||
	{ tail -n 30 "$tmp/qemu.log"; echo "prom-scrape: make qemu failed" >&2; exit 1; }

# 1. the two hypervisors, each in its own process group
declare -A port=() log=()
hvs=(hv1 hv2)
declare -A kver=([hv1]=$kver_a [hv2]=$kver_b)
for hv in "${hvs[@]}"; do
	port[$hv]=$(free_port)
done
while [[ ${port[hv1]} == "${port[hv2]}" ]]; do port[hv2]=$(free_port); done
if [[ $kver_a == "$kver_b" ]]; then
	echo "prom-scrape: KVER_A and KVER_B must differ (each rig writes build/rig-KVER-prom.log)" >&2
	exit 2
fi
echo "1..15"
for hv in "${hvs[@]}"; do
	log[$hv]=build/rig-${kver[$hv]}-prom.log
	rm -f "${log[$hv]}"
	# Each serves past the window, through the checks below; cleanup
	# stops it.
	extra="PROM_SECONDS=$((secs + 150))"
	[[ $hv == hv2 ]] && extra+=" PROM_RESTART_AT=$restart_at"
	set -m
	RIG_PROM_PORT=${port[$hv]} RIG_TIMEOUT=$((secs + 600)) \
		RIG_TEST_TIMEOUT=$((secs + 400)) RIG_EXTRA_CMDLINE=$extra \
		selftests/rig/run.sh "${kver[$hv]}" --mode prom > "$tmp/rig-$hv.out" 2>&1 &
	rig_pids+=($!)
	set +m
done
ready=1
for hv in "${hvs[@]}"; do
	up=0
	for _ in $(seq 1 400); do
		if grep -q '^### PROM READY' "${log[$hv]}" 2>/dev/null; then
			up=1
			break
		fi
		sleep 1
	done
	if [[ $up == 1 ]] && wait_url "http://127.0.0.1:${port[$hv]}/metrics" 10; then
		ok "$hv (${kver[$hv]}) up, its exporter on 127.0.0.1:${port[$hv]}"
	else
		not_ok "$hv (${kver[$hv]}) up, its exporter on 127.0.0.1:${port[$hv]}"
		tail -n 40 "$tmp/rig-$hv.out" | sed 's/^/# /'
		ready=0
	fi
done
[[ $ready == 1 ]] || exit 1
# A boot that died before vmrapl loaded (QEMU 10.0.2's own SIGSEGV) is
# booted once more by run.sh: said here, not hidden.
for hv in "${hvs[@]}"; do
	grep -h 'booting once more' "$tmp/rig-$hv.out" | sed "s/^/# $hv: /"
done
start=$(date +%s)

# 2. prometheus: file_sd targets, the rules, its own TSDB and port
prom_port=$(free_port)
cat > "$tmp/targets.json" <<EOF2
[
  { "targets": ["127.0.0.1:${port[hv1]}"], "labels": { "instance": "hv1" } },
  { "targets": ["127.0.0.1:${port[hv2]}"], "labels": { "instance": "hv2" } }
]
EOF2
cat > "$tmp/prometheus.yml" <<EOF2
global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files:
  - $top/userspace/exporter/vmrapl.rules.yml
scrape_configs:
  - job_name: vmrapl
    file_sd_configs:
      - files: ['$tmp/targets.json']
EOF2
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$prom_port" > "$tmp/prom.log" 2>&1 &
prom_pid=$!
url=http://127.0.0.1:$prom_port
if wait_url "$url/-/ready" 30; then
	ok "prometheus ready on 127.0.0.1:$prom_port, rules loaded"
else
	not_ok "prometheus ready on 127.0.0.1:$prom_port"
	tail -n 20 "$tmp/prom.log" | sed 's/^/# /'
	exit 1
fi

echo "# scraping for ${secs}s; hv2 restarts at ${restart_at}s"
sleep $((secs - ($(date +%s) - start)))
end=$(date +%s)

# 3. the verdicts, each a python3 function of the HTTP API
api() { python3 "$top/scripts/prom-verdicts.py" "$url" "$end" "$@"; }
check "both targets up, as instance hv1 and hv2" \
	api targets_up $((end - start)) hv2
check "hv1: per-VM watts for busy, duty and idle, busy > idle" api per_host hv1
check "hv2: per-VM watts for busy, duty and idle, busy > idle" api per_host hv2
check "fleet sum per VM name = the sum over hv1 and hv2" api fleet_sum
check "hv2's restart: its vmrapl_module_load_time_seconds moved, hv1's did not" \
	api restart hv2 hv1 $((end - start + 60))
check "no fleet series per VM name has a gap or a negative value" \
	api no_gaps $((start + 60)) "$end"

# 4. the Grafana dashboard's queries
python3 scripts/grafana-check.py "$url" userspace/exporter/grafana/vmrapl.json > "$tmp/grafana.tap"
grc=$?
sed 's/^/# /' "$tmp/grafana.tap"
if [[ $grc == 0 ]]; then
	ok "every Grafana dashboard query returns data ($(grep -c '^ok' "$tmp/grafana.tap") queries)"
else
	not_ok "every Grafana dashboard query returns data"
fi

# 5. a real browser on Prometheus's graph page of the per-VM watts rule
expr='sum by (instance, vm) (instance_vm:vmrapl_vm_energy_joules:rate1m{domain="pkg"})'
page="$url/graph?g0.expr=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$expr")&g0.tab=0&g0.stacked=0&g0.range_input=5m"
browse() { # extra chromium args...
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$tmp/chromium" --window-size=1400,900 \
		--virtual-time-budget=20000 "$@" "$page" 2> "$tmp/chromium.log"
}
browse --screenshot="$out/graph.png" > /dev/null
check "chromium's screenshot of the graph page: a 1400x900 PNG, not blank ($out/graph.png)" \
	python3 scripts/png-check.py "$out/graph.png" 1400 900
browse --dump-dom > "$out/graph.html"
check "the page's legend lists busy, duty and idle" \
	api legend "$out/graph.html"
check "the API the page calls (query_range) has busy, duty and idle" \
	api page_range "$expr" $((end - 300)) "$end"

# The hypervisors' own view: prom.c's TAP so far (hv2's restart and its
# serving again included), and kernel logs without an oops or a warning.
for hv in "${hvs[@]}"; do
	grep -E '^(not )?ok' "${log[$hv]}" | sed "s/^/# $hv: /"
done
check "hv2 restarted vmrapl, its VMs and exporter, and served all three VMs again" \
	grep -q '^ok 4 exporter serves all three VMs again' "${log[hv2]}"
bad='(Oops|BUG:|WARNING:|Call Trace|general protection|not ok)'
if grep -Eq "$bad" "${log[hv1]}" "${log[hv2]}"; then
	not_ok "both rigs' consoles: no oops, warning or failed check"
	grep -E "$bad" "${log[hv1]}" "${log[hv2]}" | head -n 20 | sed 's/^/# /'
else
	ok "both rigs' consoles: no oops, warning or failed check"
fi
echo "# prom-scrape: $((n - failed)) passed, $failed failed"
[[ $failed == 0 ]]
