#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real Prometheus scrape of vmrapl-exporter ("make prom-check"): boots the
# rig in rig.mode=prom (selftests/vmrapl/prom.c: a busy and an idle VM and
# the exporter on the guest's 0.0.0.0:9877, forwarded to 127.0.0.1:PORT),
# runs the host's prometheus against it with a temporary config (5 s
# scrape interval, its own TSDB in a temp dir, its own free port), waits
# PROM_WAIT seconds (default 60), then asks its HTTP API for
#   rate(vmrapl_vm_energy_joules_total{domain="pkg"}[30s])
# and checks that the busy VM's rate exceeds the idle VM's.  TAP output;
# both QEMU and prometheus are stopped on every exit.
#
# Usage: scripts/prom-scrape.sh [KVER]   (needs module, userspace, selftests built)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
kver=${1:-$(make -s --no-print-directory kver)}
wait_s=${PROM_WAIT:-60}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-prom.XXXXXX")
rig_pid= prom_pid=
cleanup() {
	[[ -n $prom_pid ]] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
	# run.sh (its own process group, set -m below) runs QEMU under
	# timeout(1), which puts itself and QEMU in a group of their own:
	# end that group first, then run.sh's.
	if [[ -n $rig_pid ]]; then
		local t
		for t in $(ps -o pid=,comm= --ppid "$rig_pid" | awk '$2 == "timeout" { print $1 }'); do
			kill -- -"$t" 2>/dev/null
		done
		kill -- -"$rig_pid" 2>/dev/null
		wait "$rig_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }

echo "1..4"
if ! command -v prometheus > /dev/null; then
	echo "prom-scrape: prometheus missing (scripts/deps.sh)" >&2
	exit 1
fi
rig_port=$(free_port)
prom_port=$(free_port)
while [[ $prom_port == "$rig_port" ]]; do prom_port=$(free_port); done

# 1. the rig, in the background, in its own process group (its console
# log removed first: a previous run's "PROM READY" must not count)
log=build/rig-$kver-prom.log
rm -f "$log"
set -m
RIG_PROM_PORT=$rig_port RIG_TIMEOUT=${RIG_TIMEOUT:-400} \
	selftests/rig/run.sh "$kver" --mode prom > "$tmp/rig.out" 2>&1 &
rig_pid=$!
set +m
ready=0
for _ in $(seq 1 300); do
	if grep -q '^### PROM READY' "$log" 2>/dev/null; then
		ready=1
		break
	fi
	kill -0 "$rig_pid" 2>/dev/null || break
	sleep 1
done
reach=0
for _ in $(seq 1 10); do
	[[ $ready == 1 ]] || break
	curl -sf "http://127.0.0.1:$rig_port/metrics" > "$tmp/metrics" && { reach=1; break; }
	sleep 1
done
if [[ $reach == 1 ]]; then
	ok "rig up, exporter reachable on 127.0.0.1:$rig_port"
else
	not_ok "rig up, exporter reachable on 127.0.0.1:$rig_port"
	tail -n 40 "$tmp/rig.out" | sed 's/^/# /'
	exit 1
fi

# 2. prometheus
cat > "$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 5s
  evaluation_interval: 5s
scrape_configs:
  - job_name: vmrapl
    static_configs:
      - targets: ['127.0.0.1:$rig_port']
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$prom_port" > "$tmp/prom.log" 2>&1 &
prom_pid=$!
up=0
for _ in $(seq 1 30); do
	curl -sf "http://127.0.0.1:$prom_port/-/ready" > /dev/null && { up=1; break; }
	sleep 1
done
if [[ $up == 1 ]]; then
	ok "prometheus ready on 127.0.0.1:$prom_port"
else
	not_ok "prometheus ready on 127.0.0.1:$prom_port"
	tail -n 20 "$tmp/prom.log" | sed 's/^/# /'
	exit 1
fi

sleep "$wait_s"

# 3. the target is up and was scraped
q() {
	curl -sf -G "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1"
}
up_json=$(q 'up{job="vmrapl"}')
if grep -q '"value":\[[0-9.]*,"1"\]' <<< "$up_json"; then
	ok "target up"
else
	not_ok "target up"
	echo "# $up_json"
	tail -n 20 "$tmp/prom.log" | sed 's/^/# /'
fi

# 4. busy VM's pkg energy rate above the idle VM's
json=$(q 'rate(vmrapl_vm_energy_joules_total{domain="pkg"}[30s])')
rate_of() { # vm label -> value
	python3 -c '
import json, sys
d = json.loads(sys.argv[1])
for r in d["data"]["result"]:
    if r["metric"].get("vm") == sys.argv[2]:
        print(r["value"][1]); break
' "$json" "$1" 2>/dev/null
}
busy=$(rate_of busy)
idle=$(rate_of idle)
echo "# rate(pkg)[30s]: busy=${busy:-none} W idle=${idle:-none} W"
if [[ -n $busy && -n $idle ]] &&
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > float(sys.argv[2]))' "$busy" "$idle"; then
	ok "busy VM's pkg energy rate exceeds the idle VM's"
else
	not_ok "busy VM's pkg energy rate exceeds the idle VM's"
	echo "# $json"
fi
[[ $failed == 0 ]]
