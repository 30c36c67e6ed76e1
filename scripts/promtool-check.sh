#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "promtool check metrics" on the exporter's real /metrics bodies: the
# rig's tools test (selftests/vmrapl/tools.c: exporter_metrics, and
# exporter_vcpu_metrics, which runs the exporter with --vcpu-metrics)
# prints each between "### METRICS BEGIN" and "### METRICS END" on the
# console; this extracts every such block from the given rig logs
# (dropping interleaved timestamped kernel lines) and lints it.  Fails
# when no block is found, when a block is empty, when a log has no block
# with the --vcpu-metrics series (vmrapl_vm_vcpu_energy_joules_total),
# when promtool fails, or when it prints any finding.
#
# Usage: scripts/promtool-check.sh build/rig-<KVER>.log...
set -uo pipefail

command -v promtool > /dev/null || { echo "promtool missing (scripts/deps.sh)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-promtool.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

blocks=0 bad=0
for log in "$@"; do
	[[ -f $log ]] || { echo "$log: missing"; bad=$((bad + 1)); continue; }
	awk -v dir="$tmp" -v base="$(basename "$log")" '
	/^### METRICS BEGIN$/ { n++; f = sprintf("%s/%s.%d", dir, base, n); printf "" > f; inside = 1; next }
	/^### METRICS END$/ { inside = 0; next }
	inside && !/^\[ *[0-9]+\.[0-9]+\] / { print > f }
	' "$log"
done
for f in "$tmp"/*; do
	[[ -f $f ]] || continue
	blocks=$((blocks + 1))
	if [[ ! -s $f ]]; then
		echo "$(basename "$f"): empty body"
		bad=$((bad + 1))
		continue
	fi
	out=$(promtool check metrics < "$f" 2>&1)
	rc=$?
	if [[ $rc != 0 || -n $out ]]; then
		echo "$(basename "$f"): promtool rc=$rc"
		echo "$out"
		bad=$((bad + 1))
	else
		echo "$(basename "$f"): $(wc -l < "$f") lines, clean"
	fi
done
if [[ $blocks == 0 ]]; then
	echo "no ### METRICS block in: $*"
	exit 1
fi
# Every log must have linted the --vcpu-metrics output too.
for log in "$@"; do
	[[ -f $log ]] || continue
	if ! grep -qs '^vmrapl_vm_vcpu_energy_joules_total{' "$tmp/$(basename "$log")".*; then
		echo "$log: no body with vmrapl_vm_vcpu_energy_joules_total (exporter_vcpu_metrics, --vcpu-metrics)"
		bad=$((bad + 1))
	fi
done
echo "promtool check metrics: $blocks bodies, $bad with findings"
[[ $bad == 0 ]]
