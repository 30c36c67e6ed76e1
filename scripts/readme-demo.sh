#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make readme-demo": run "make demo" once and put the start and the end
# of what it printed into README.md between the lines <!-- demo:begin -->
# and <!-- demo:end -->, so that the output and the figures the README
# quotes come from one real run and cannot drift from what the demo
# prints.
#
# Only the demo's own output is read (not the rig's stages or the test
# kernel's console).  The README gets its first line (the source), its
# summary and the check of each guest's counter against the host's books,
# then a line of this run's figures (taken from every refresh of
# "vmraplctl top" and the summary) and the run's plot.  The whole output
# stays in build/readme-demo.out.  When the demo fails, README.md is left
# as it is.
#
# Usage: scripts/readme-demo.sh [KVER]
#        scripts/readme-demo.sh --from FILE KVER SECONDS
#            (no run: FILE is a saved "make demo" output, for checking
#            this script)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
readme=README.md
raw=build/readme-demo.out
mkdir -p build

from=
if [[ ${1:-} == --from ]]; then
	[[ $# == 4 ]] || { echo "usage: $0 --from FILE KVER SECONDS" >&2; exit 1; }
	raw=$2 kver=$3 secs=$4 from=1
else
	kver=${1:-$(make -s --no-print-directory kver)}
	start=$(date +%s)
	set +e
	scripts/demo.sh "$kver" | tee "$raw"
	rc=${PIPESTATUS[0]}
	set -e
	secs=$(( $(date +%s) - start ))
	if [[ $rc != 0 ]]; then
		echo "readme-demo: make demo failed (exit $rc); $readme left as it is" >&2
		exit "$rc"
	fi
fi

for m in '<!-- demo:begin -->' '<!-- demo:end -->'; do
	if [[ $(grep -cxF -- "$m" "$readme") != 1 ]]; then
		echo "readme-demo: $readme needs exactly one line '$m'" >&2
		exit 1
	fi
done

# The demo's own lines: from its first "==" line to the rig's verdict,
# without terminal escapes (top redraws on the serial console, a tty).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
body=$tmp/body gen=$tmp/gen head=$tmp/head block=$tmp/block figs=$tmp/figs
excerpt=$tmp/excerpt
sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\r$//' "$raw" |
	awk '/^== vmrapl loaded/ { on = 1 } /^rig / { on = 0 }
	     on && !/^\[ *[0-9]+\.[0-9]+\]/' > "$body"
if ! grep -q '^== summary' "$body"; then
	echo "readme-demo: no demo summary in $raw; $readme left as it is" >&2
	exit 1
fi

# The first and the last refresh of top, "..." for those between; the
# figures of this run.  Refreshes start with "vmraplctl top - " and end
# where the next one or the next "==" section starts.
awk -v kver="$kver" -v secs="$secs" -v date="$(date -u -r "$raw" +%Y-%m-%d)" \
    -v head="$head" -v block="$block" -v figs="$figs" '
function flush_top(   i) {
	if (!ntop)
		return
	for (i = 1; i <= nfirst; i++)
		out[++nout] = first[i]
	if (ntop > 2)
		out[++nout] = "..."
	if (ntop > 1)
		for (i = 1; i <= nlast; i++)
			out[++nout] = last[i]
	ntop = 0
}
/^vmraplctl top - / {
	ntop++
	nlast = 0
	intop = 1
}
/^== / && intop {
	intop = 0
	# drop the blank line that ends the last refresh
	if (nlast && last[nlast] == "")
		nlast--
	if (nfirst && first[nfirst] == "")
		nfirst--
	flush_top()
	out[++nout] = ""
}
intop {
	if (ntop == 1)
		first[++nfirst] = $0
	else
		last[++nlast] = $0
	if ($1 == "ID") {
		for (i = 1; i <= NF; i++)
			if ($i == "pkg_W")
				wcol = i
	} else if (wcol && $1 ~ /^[0-9]+$/) {
		w = $(wcol) + 0
		if (!($3 in lo) || w < lo[$3])
			lo[$3] = w
		if (!($3 in hi) || w > hi[$3])
			hi[$3] = w
		nref[$3]++
	}
	next
}
{
	out[++nout] = $0
}
# "NAME  guest: ... W   books, whole run: J in S s = W W": the whole run
/^[^ ]+ +guest: .* books, whole run: / { hostw[$1] = $(NF - 1); next }
# the summary, from the first read of each guest to its last: VM secs
# books-J books-W guest-J guest-W diff-%
/^== summary/ { insum = 1; next }
insum && /^VM / { next }
insum && NF == 7 { vm[++nvm] = $1; diff[$1] = $7; next }
insum && NF == 0 && nvm { insum = 0 }
END {
	flush_top()
	while (nout && out[nout] == "")
		nout--
	printf "The start and the end of what it printed (a run of %s on %s; the whole `make demo`, with the dependencies installed and its build, initramfs and boot included, took %d s; between the two parts shown here it printed the VMs'"'"' command lines, the refreshes of `vmraplctl top` and what each guest read):\n", date, kver, secs > head
	for (i = 1; i <= nout; i++)
		print out[i] > block
	printf "In this run the host charged" > figs
	for (i = 1; i <= nvm; i++)
		printf "%s %s %.2f W", sep(i), vm[i], hostw[vm[i]] > figs
	printf " over their runs; over the %d refreshes of `top` they ranged", nref[vm[1]] > figs
	for (i = 1; i <= nvm; i++)
		printf "%s %.2f to %.2f W", sep(i), lo[vm[i]], hi[vm[i]] > figs
	printf ".  From each guest'"'"'s first read to its last, the powers the guests computed from their own counters were" > figs
	for (i = 1; i <= nvm; i++)
		printf "%s %s %%", sep(i), diff[vm[i]] > figs
	printf " off the host'"'"'s over the same reads.\n" > figs
}
function sep(i) {
	return i == 1 ? "" : (i == nvm ? " and" : ",")
}' "$body"
# The README's part of the block: the first line (the source), then from
# the summary to the end.
{
	head -n 1 "$block"
	echo
	sed -n '/^== summary/,$p' "$block"
} > "$excerpt"
{
	fmt -w 74 "$head"
	echo
	echo '```'
	cat "$excerpt"
	echo '```'
	echo
	fmt -w 74 "$figs"
	# The same run's plot (scripts/plot-demo.sh), copied next to the
	# README below, once the README is written; a --from check keeps the
	# one already there.
	if [[ -z $from && -f build/demo/power.png ]] ||
	   [[ -f Documentation/images/demo-power.png ]]; then
		echo
		echo "![Each VM's power over the run: the host's charge (lines) and what its guest computed from its own MSR 0x611 (points)](Documentation/images/demo-power.png)"
		echo
		fmt -w 74 <<< "The plot is this run's build/demo/power.png, which \`make demo\` draws with gnuplot (scripts/plot-demo.sh) from every read each guest made; \`make readme-demo\` copied it here."
	fi
} > "$gen"

if ! grep -q '^In this run the host charged [^ ]* [0-9.]* W' "$gen" ||
   ! grep -q '^== summary' "$gen"; then
	echo "readme-demo: could not read the demo's output in $raw; $readme left as it is" >&2
	exit 1
fi

# Between the markers, the generated text; everything else as it was.
awk -v gen="$gen" '
$0 == "<!-- demo:begin -->" {
	print
	print "<!-- generated by scripts/readme-demo.sh (make readme-demo): do not edit -->"
	while ((getline l < gen) > 0)
		print l
	skip = 1
	next
}
$0 == "<!-- demo:end -->" { skip = 0 }
!skip' "$readme" > "$readme.new"
mv "$readme.new" "$readme"
if [[ -z $from && -f build/demo/power.png ]]; then
	mkdir -p Documentation/images
	cp build/demo/power.png Documentation/images/demo-power.png
fi
echo "readme-demo: $readme updated from $raw (the run took $secs s)"
