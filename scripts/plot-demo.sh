#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo's picture: from the console of a "make demo" rig run, the
# VMMs' --trace blocks (selftests/vmrapl/demo.c, "### TRACE <i> <name>
# BEGIN" .. "### TRACE <i> END") become OUTDIR/trace-<i>.txt, then
# OUTDIR/power-<i>.dat (1 s windows between guest reads: the host's energy
# for the VM over the window, and what the guest's own package energy
# counter advanced over the same reads, in its energy status units), and
# gnuplot draws OUTDIR/power.png: each VM's power as the host charges it
# (lines) and as its guest computes it from its MSR (points), on the same
# axes.  Checked with scripts/png-check.py.  Prints the PNG's path.
#
# Usage: scripts/plot-demo.sh CONSOLE_LOG OUTDIR
set -euo pipefail
console=$1 out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
rm -f "$out"/trace-*.txt "$out"/power-*.dat "$out"/power.png

# 1. The trace blocks, kernel lines dropped; the names in order.
awk -v dir="$out" '
/^### TRACE [0-9]+ .* BEGIN$/ { f = dir "/trace-" $3 ".txt"; printf "" > f; names[$3] = $4; next }
/^### TRACE [0-9]+ END$/ { f = ""; next }
f != "" && !/^\[ *[0-9]+\.[0-9]+\]/ { print > f }
END { for (i = 0; i in names; i++) print names[i] > (dir "/names") }
' "$console"
[[ -s $out/names ]] || { echo "plot-demo: no ### TRACE blocks in $console" >&2; exit 1; }
mapfile -t names < "$out/names"

# 2. Power over 1 s windows.  The energy and unit MSRs are found by name
# in the trace's header (Intel 0x611/0x606, AMD 0xc001029b/0xc0010299).
for i in "${!names[@]}"; do
	awk '
	/^# / {
		for (c = 1; c <= NF; c++) {
			if ($c == "msr_0x611" || $c == "msr_0xc001029b") ec = c - 1
			if ($c == "msr_0x606" || $c == "msr_0xc0010299") uc = c - 1
		}
		next
	}
	!ec || !uc || $ec == "-" || $uc == "-" { next }
	{
		esu = int($uc / 256) % 32
		if (n++ == 0) { t0 = $1; h0 = $3; eprev = $ec; next }
		d = $ec - eprev
		if (d < 0) d += 4294967296
		acc += d
		eprev = $ec
		if ($1 - t0 >= 1.0) {
			printf "%.3f %.4f %.4f\n", ($1 + t0) / 2,
				($3 - h0) / 1e6 / ($1 - t0),
				acc / 2 ^ esu / ($1 - t0)
			t0 = $1; h0 = $3; acc = 0
		}
	}
	' "$out/trace-$i.txt" > "$out/power-$i.dat"
	[[ -s $out/power-$i.dat ]] || { echo "plot-demo: ${names[$i]}: no reads to plot" >&2; exit 1; }
done

# 3. The plot.
gnuplot <<EOF2
set terminal pngcairo size 1000,600 font "DejaVu Sans,11" noenhanced
set output "$out/power.png"
set title "vmrapl demo: each VM's power, as the host charges it (lines)\nand as its guest computes it from its own MSR 0x611 reads (points)"
set xlabel "seconds since the guests started"
set ylabel "package power (W)"
set yrange [0:*]
set grid
set key outside right top
names = "${names[*]}"
plot for [i=0:${#names[@]}-1] sprintf("$out/power-%d.dat", i) using 1:2 \
	with lines lw 2 lc i+1 title sprintf("%s: host", word(names, i+1)), \
     for [i=0:${#names[@]}-1] sprintf("$out/power-%d.dat", i) using 1:3 \
	with points pt 7 ps 0.9 lc i+1 title sprintf("%s: guest", word(names, i+1))
EOF2
python3 "$top/scripts/png-check.py" "$out/power.png" 1000 600 > /dev/null ||
	{ python3 "$top/scripts/png-check.py" "$out/power.png" 1000 600; exit 1; }
echo "$out/power.png"
