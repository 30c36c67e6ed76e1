#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The simulator runs of "make full", one vrsim invocation a line, run
# JOBS at a time (they are independent: each writes its own files).
#
#   runs.sh list                 the runs, "STEM ARGS..." a line
#   runs.sh run DIR JOBS [SIZE]  run them all into DIR, JOBS in parallel,
#                                SIZE (e.g. "--seeds 2 --secs 60") added
#                                to every run (default: none, full size)
#
# Each run writes DIR/STEM.md (and DIR/STEM.json for the tables' runs)
# and its stderr to DIR/STEM.err; a run that fails (conservation or the
# model's self-check) fails the whole, after every run has finished.
# Stems: vrsim (the default model, the tables), policy-* (--policy busy,
# none), the comparison runs of results.sh, break-* (results-break.py),
# matrix-* (every model option alone, the combined row, and each with
# --idle-lead 10: results-matrix.py) and sweep-* (the sensitivity
# sweeps: results-matrix.py) and limit (the power-limit bench, its own
# scenario: --secs does not size it).  The matrix and sweep runs that are the
# same as a break run are not run twice: results-matrix.py reads the
# break run.
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)

# The combined row (issue 36): every model option at once.
COMBINED="--pc6-delay-us 1000 --update-us 1500 --esu 16 --smt --leakage --mem-uncore"
# The learned target's idle lead covers the homogeneous workloads.
HOMOG="steady,bursty,bursty-jitter,phases,oversubscribed,floating,vmm-io"
HOMOG="$HOMOG,short-lived,wrap,never-idle,mostly-idle,turbo,spread,packed,lone"

# At full size, the --idle-lead runs simulate 120 s (10 seeds), not 300:
# the whole of "make full" then takes about 36 min of wall time on the
# 2-CPU build machine, two runs at a time (87 CPU-min at 300 s).  A SIZE
# given to "run" sizes them as every other run.
LEAD_SECS="--secs 120"

list() {
	cat <<LIST
sweep-period-250 --period-us 250
vrsim --json @/full.json
limit --limit-bench --limit-series @/limit-series.csv --json @/limit.json
policy-busy --policy busy --json @/policy-busy.json
policy-none --policy none --json @/policy-none.json
policy-busy-no-pc6 --no-pc6 --policy busy --json @/policy-busy-no-pc6.json
bursty-instant --only bursty --latch-us 1 --lag-us 0
hetero-switches --only heterogeneous --switches-only
packed-no-host --only packed --no-host-floor
drift-mostly-idle --only mostly-idle --floor-drift 5
drift-spread --only spread --floor-drift 5
lead --only steady,lone,never-idle,vmm-io --idle-lead 10
lead-drift --only steady,lone,never-idle,vmm-io --idle-lead 10 --floor-drift 5
break-pc6-500 --pc6-delay-us 500 --json @/break-pc6-500.json
break-pc6-3000 --pc6-delay-us 3000 --json @/break-pc6-3000.json
break-no-pc6 --no-pc6 --json @/break-no-pc6.json
break-update-500 --update-us 500 --json @/break-update-500.json
break-update-2000 --update-us 2000 --json @/break-update-2000.json
break-esu-16 --esu 16 --json @/break-esu-16.json
break-update-500-lag --only bursty,mostly-idle --update-us 500 --lag-us 250
break-update-2000-lag --only bursty,mostly-idle --update-us 2000 --lag-us 1000
matrix-pc6-1000 --pc6-delay-us 1000 --json @/matrix-pc6-1000.json
matrix-update-1500 --update-us 1500 --json @/matrix-update-1500.json
matrix-smt --smt --json @/matrix-smt.json
matrix-leakage --leakage --json @/matrix-leakage.json
matrix-mem-uncore --mem-uncore --json @/matrix-mem-uncore.json
matrix-combined $COMBINED --json @/matrix-combined.json
matrix-default-lead --only $HOMOG --idle-lead 10 $LEAD_SECS
matrix-pc6-1000-lead --only $HOMOG --idle-lead 10 $LEAD_SECS --pc6-delay-us 1000
matrix-no-pc6-lead --only $HOMOG --idle-lead 10 $LEAD_SECS --no-pc6
matrix-update-1500-lead --only $HOMOG --idle-lead 10 $LEAD_SECS --update-us 1500
matrix-esu-16-lead --only $HOMOG --idle-lead 10 $LEAD_SECS --esu 16
matrix-smt-lead --only $HOMOG --idle-lead 10 $LEAD_SECS --smt
matrix-leakage-lead --only $HOMOG --idle-lead 10 $LEAD_SECS --leakage
matrix-mem-uncore-lead --only $HOMOG --idle-lead 10 $LEAD_SECS --mem-uncore
matrix-combined-lead --only $HOMOG --idle-lead 10 $LEAD_SECS $COMBINED
sweep-update-250 --update-us 250
sweep-update-1000 --update-us 1000
sweep-period-4000 --period-us 4000
LIST
}

# One run: "STEM ARGS..." with @ for DIR; $1 DIR, $2 SIZE.
one() {
	local dir=$1 size=$2 stem args t0 rc=0
	read -r stem args <<< "$3"
	args=${args//@/$dir}
	t0=$(date +%s)
	# shellcheck disable=SC2086
	nice -n 10 "$here/vrsim" $size $args > "$dir/$stem.md" \
		2> "$dir/$stem.err" || rc=$?
	echo "$stem $(( $(date +%s) - t0 )) s rc=$rc" >&2
	return $rc
}

case "${1:-}" in
list)
	list
	;;
run)
	dir=$2 jobs=${3:-2} size=${4:-}
	[ -z "$size" ] || LEAD_SECS=
	export -f one
	export here
	export LEAD_SECS
	list | xargs -P "$jobs" -I{} bash -c 'one "$@"' _ "$dir" "$size" {}
	;;
*)
	echo "usage: runs.sh list | run DIR JOBS [SIZE]" >&2
	exit 2
	;;
esac
