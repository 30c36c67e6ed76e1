#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The power-limit bench's time series (vrsim --limit-bench --limit-series,
# one seed) as a picture: the capped VM's power over the sliding window as
# vmrapl shows it, under the controller of userspace/common/limit.c and
# under the static quota, its true power per tick under the controller,
# and the limit; below, the CPUs each got.  Checked with
# scripts/png-check.py.
#
# Usage: scripts/plot-limit.sh SERIES_CSV OUT.png
#        (make bench: bench/sim/out/limit-series.csv -> bench/limit.png;
#        make check: the quick run's limit-series-quick.csv)
set -euo pipefail
csv=$1 png=$2
top=$(cd "$(dirname "$0")/.." && pwd)
head -n1 "$csv" | grep -q '^t_s,limit_w,ctl_vr_w,ctl_truth_w,ctl_vr_window_w,ctl_cpus,' ||
	{ echo "plot-limit: $csv is not a --limit-series CSV" >&2; exit 1; }
[[ $(wc -l < "$csv") -gt 2 ]] || { echo "plot-limit: no rows in $csv" >&2; exit 1; }

# Columns by name, so that a column added to the CSV moves nothing here.
col() { head -n1 "$csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
limit=$(col limit_w) cw=$(col ctl_vr_window_w) ct=$(col ctl_truth_w)
sw=$(col static_vr_window_w) cc=$(col ctl_cpus) sc=$(col static_cpus)
for c in "$limit" "$cw" "$ct" "$sw" "$cc" "$sc"; do
	[[ -n $c ]] || { echo "plot-limit: a column is missing in $csv" >&2; exit 1; }
done

gnuplot <<EOF
set terminal pngcairo size 1400,900 font "DejaVu Sans,10" noenhanced
set output "$png"
set datafile separator ","
set multiplot layout 2,1 title "Per-VM power limit held through cpu.max (vrsim --limit-bench, one seed; the limit: 0 before it is set)"
set key outside right top
set grid
set ylabel "W"
# A limit of 0 is "no limit yet": not drawn.
plot "$csv" every ::1 using 1:(\$$limit > 0 ? \$$limit : 1/0) with steps lw 2 lc rgb "black" title "limit", \
     "" every ::1 using 1:$cw with lines lw 2 lc rgb "#1f77b4" title "controller: window mean (vmrapl)", \
     "" every ::1 using 1:$ct with lines lw 1 lc rgb "#9ecae1" title "controller: per tick (truth)", \
     "" every ::1 using 1:$sw with lines lw 2 lc rgb "#d62728" title "static quota: window mean (vmrapl)"
set ylabel "CPUs used"
set xlabel "s"
plot "$csv" every ::1 using 1:$cc with steps lw 2 lc rgb "#1f77b4" title "controller", \
     "" every ::1 using 1:$sc with steps lw 2 lc rgb "#d62728" title "static quota"
unset multiplot
EOF
python3 "$top/scripts/png-check.py" "$png" 1400 900 > /dev/null ||
	{ python3 "$top/scripts/png-check.py" "$png" 1400 900; exit 1; }
echo "$png"
