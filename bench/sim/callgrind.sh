#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Instructions per event of the accounting core's entry points.  For each
# event function of ./hotpath, callgrind collects only inside that
# function (--toggle-collect, callees included); the total divided by the
# function's number of calls is instructions per event.
set -euo pipefail
cd "$(dirname "$0")"
[ -x hotpath ] || make -s hotpath
command -v valgrind >/dev/null || { echo "callgrind.sh: no valgrind" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| event | instructions/event | calls |"
echo "|---|---:|---:|"
for f in ev_untracked ev_switch_in ev_switch_out ev_close; do
	valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$f" \
		--callgrind-out-file="$tmp/$f.out" ./hotpath --callgrind \
		> "$tmp/calls" 2> "$tmp/vg.log"
	calls=$(awk -v f="$f" '$1 == "calls" && $2 == f { print $3 }' "$tmp/calls")
	ir=$(awk '/^summary:/ { print $2 }' "$tmp/$f.out")
	if [ -z "$ir" ] || [ -z "$calls" ] || [ "$calls" -eq 0 ]; then
		echo "callgrind.sh: no count for $f" >&2
		exit 1
	fi
	awk -v f="$f" -v ir="$ir" -v c="$calls" \
		'BEGIN { printf "| %s | %.1f | %d |\n", f, ir / c, c }'
done
