#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The accuracy table of the simulator (bench/sim) as a picture: per
# workload, each algorithm's per-VM error against the occupied truth over
# 60 s windows (% of the truth's energy, log scale), the bar the mean over
# seeds and the error bar the seeds' min..max; the same figures as the
# first columns of bench/RESULTS.md's table.  Errors under 0.01 % are drawn
# at 0.01 % (a log axis has no 0).  Checked with scripts/png-check.py.
#
# Usage: scripts/plot-bench.sh RESULTS_JSON OUT.png
#        (make bench: bench/results.json -> bench/accuracy.png;
#        make check: the quick run's bench/sim/out/quick.json)
set -euo pipefail
json=$1 png=$2
top=$(cd "$(dirname "$0")/.." && pwd)
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT

# One row per workload: name, then mean min max per algorithm; the
# algorithms' labels on stdout, one per line, in column order.
mapfile -t labels < <(python3 - "$json" "$dat" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
algs = list(d["results"][0]["algorithms"])
labels = [d["results"][0]["algorithms"][a]["label"] for a in algs]
with open(sys.argv[2], "w") as f:
    for r in d["results"]:
        row = [r["workload"]]
        for a in algs:
            w = r["algorithms"][a]["occupied"]["60s"]
            row += [f"{max(w[k], 0.01):.4g}" for k in ("mean", "min", "max")]
        f.write(" ".join(row) + "\n")
seeds, secs = d.get("seeds", 1), d.get("sim_s", 0)
print(f"{seeds} seed{'s' if seeds != 1 else ''} x {secs} s")
print("\n".join(labels))
EOF2
)
runs=${labels[0]}
labels=("${labels[@]:1}")
[[ ${#labels[@]} -gt 0 && -s $dat ]] || { echo "plot-bench: no results in $json" >&2; exit 1; }
titles=$(printf '"%s" ' "${labels[@]}")

gnuplot <<EOF2
set terminal pngcairo size 1600,800 font "DejaVu Sans,10" noenhanced
set output "$png"
set title "Per-VM energy error against the occupied truth, 60 s windows ($runs per workload; bar: mean over seeds, error bar: min..max)"
set ylabel "mean absolute error (% of the truth's energy, log scale)"
set logscale y
set yrange [0.01:200]
set grid ytics
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set key outside right top
# gnuplot's default colours repeat after 8: the 9th (the naive baseline)
# would take the first's
set linetype 9 lc rgb "#8c8c8c"
titles = '$titles'
n = ${#labels[@]}
plot for [i=0:n-1] "$dat" using 2+3*i:3+3*i:4+3*i:xtic(1) title word(titles, i+1)
EOF2
python3 "$top/scripts/png-check.py" "$png" 1600 800 > /dev/null ||
	{ python3 "$top/scripts/png-check.py" "$png" 1600 800; exit 1; }
echo "$png"
