#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Smoke test of vmrapl-vmm on real KVM, without the vmrapl module: every
# guest program in vRAPL-off mode, the duty cycle seen by schedstat, the
# close orders, usage errors, and the full MSR-exit path via --fake-vrapl.
# Prints TAP version 13.  Usage: smoke.sh [path/to/vmrapl-vmm]

VMM=${1:-$(dirname "$0")/../../build/userspace/vmm/vmrapl-vmm}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-smoke.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
skip() { n=$((n + 1)); echo "ok $n $* # SKIP"; }
diag() { sed 's/^/# /' "$@"; }

# json FILE KEY: the first numeric value of "KEY" in FILE.
json() { grep -o "\"$2\": -\{0,1\}[0-9.]*" "$1" | head -n1 | sed 's/.*: //'; }
# msrjson FILE MSR KEY: KEY of the rdmsr-loop entry of MSR (first vCPU).
msrjson() {
	grep "\"msr\": \"$2\"" "$1" | head -n1 | grep -o "\"$3\": [0-9]*" |
		sed 's/.*: //'
}

# run NAME EXPECTED_RC ARGS...: run the VMM, output in $TMP/NAME.{out,err}
run() {
	name=$1 want=$2
	shift 2
	timeout 60 "$VMM" "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		notok "$name: exit code $rc, expected $want"
		diag "$TMP/$name.err"
		return 1
	fi
	return 0
}

echo "TAP version 13"
echo "1..21"

if [ ! -x "$VMM" ]; then
	echo "Bail out! $VMM not built"
	exit 1
fi

for g in spin idle pio-loop duty:25 rdmsr-loop rdmsr-loop:amd; do
	name=$(echo "$g" | tr ':' '-')
	if run "$name" 0 --guest "$g" --rapl=off --vcpus 2 --duration 0.5 --json; then
		if grep -q '"exit_code": 0' "$TMP/$name.out" &&
		   grep -q '"mode": "off"' "$TMP/$name.out"; then
			ok "guest $g runs in vRAPL-off mode"
		else
			notok "guest $g: bad summary"
			diag "$TMP/$name.out"
		fi
	fi
done

# pio-loop is exit-heavy.
pio=$(json "$TMP/pio-loop.out" pio)
if [ "${pio:-0}" -gt 1000 ]; then
	ok "pio-loop exits a lot ($pio port writes in 0.5 s)"
else
	notok "pio-loop: only ${pio:-0} port writes"
fi

# rdmsr-loop off: KVM's own answers (0 or #GP), but the loop reports.
rep=$(json "$TMP/rdmsr-loop.out" reports)
if [ "${rep:-0}" -gt 10 ]; then
	ok "rdmsr-loop reports without vRAPL ($rep rounds)"
else
	notok "rdmsr-loop: ${rep:-0} reports"
fi

# duty:25 is ~25% busy as the scheduler sees it.
"$VMM" --guest duty:25 --rapl=off --duration 2.5 --print-tids \
	> "$TMP/duty.out" 2> "$TMP/duty.err" &
pid=$!
tid=
# The VMM prints its tids once its vCPUs exist: up to 5 s on a loaded
# machine (the shell may look before the redirection made the file).
for _ in $(seq 50); do
	tid=$(awk '/^tids:/ { print $2; exit }' "$TMP/duty.out" 2> /dev/null)
	[ -n "$tid" ] && break
	sleep 0.1
done
if [ -n "$tid" ] && [ -r "/proc/$tid/schedstat" ]; then
	sleep 0.3
	read -r a da _ < "/proc/$tid/schedstat"
	t0=$(awk '{ print int($1 * 1000) }' /proc/uptime)
	sleep 1.5
	read -r b db _ < "/proc/$tid/schedstat"
	t1=$(awk '{ print int($1 * 1000) }' /proc/uptime)
	pct=$(( (b - a) / 10000 / (t1 - t0) ))
	# schedstat's second field is run-queue delay: time the thread
	# wanted the CPU and another task had it.  Past a tenth of the
	# window the machine, not the VMM, decides the duty cycle.
	wait_pct=$(( (db - da) / 10000 / (t1 - t0) ))
	wait $pid
	if [ "$wait_pct" -gt 10 ]; then
		skip "duty:25: waited ${wait_pct}% of the window for a CPU: too loaded to measure"
	elif [ "$pct" -ge 18 ] && [ "$pct" -le 32 ]; then
		ok "duty:25 is ${pct}% busy per schedstat"
	else
		notok "duty:25 is ${pct}% busy per schedstat (run-queue wait ${wait_pct}%)"
	fi
else
	wait $pid
	notok "duty:25: no tid printed"
	diag "$TMP/duty.out" "$TMP/duty.err"
fi

# --print-tids prints one tid per vCPU, before the run.
if run tids 0 --guest idle --rapl=off --vcpus 3 --duration 0.2 --print-tids; then
	cnt=$(awk '/^tids:/ { print NF - 1; exit }' "$TMP/tids.out")
	if [ "$cnt" = 3 ]; then
		ok "--print-tids prints 3 tids"
	else
		notok "--print-tids printed '${cnt}' tids"
	fi
fi

if run kvmfirst 0 --guest spin --vcpus 2 --duration 0.2 --close-order kvm-first --json; then
	ok "--close-order kvm-first"
fi

# The whole MSR-exit path on real KVM: filter, user-space exits, handler.
if run fake 0 --guest rdmsr-loop --fake-vrapl --vcpus 2 --duration 1.5 --json; then
	v=$(msrjson "$TMP/fake.out" 0x611 violations)
	w=$(msrjson "$TMP/fake.out" 0x611 wraps)
	c=$(msrjson "$TMP/fake.out" 0x611 count)
	u=$(msrjson "$TMP/fake.out" 0x606 last)
	gp=$(json "$TMP/fake.out" gp)
	if [ "${c:-0}" -gt 10 ] && [ "$v" = 0 ] && [ "${w:-0}" -ge 1 ] &&
	   [ "$u" = $((0xA0E03)) ] && [ "$gp" = 0 ]; then
		ok "fake vRAPL intel: $c reads of 0x611, $w wrap(s), no violations"
	else
		notok "fake vRAPL intel: count=$c wraps=$w violations=$v unit=$u gp=$gp"
		diag "$TMP/fake.out"
	fi
fi

if run fakeamd 0 --guest rdmsr-loop --fake-vrapl --rapl amd --duration 1 --json; then
	v=$(msrjson "$TMP/fakeamd.out" 0xc001029b violations)
	c=$(msrjson "$TMP/fakeamd.out" 0xc001029b count)
	f=$(msrjson "$TMP/fakeamd.out" 0xc001029a faults)
	if [ "${c:-0}" -gt 10 ] && [ "$v" = 0 ] && [ "$f" = 0 ]; then
		ok "fake vRAPL amd: $c reads of 0xc001029b, no violations"
	else
		notok "fake vRAPL amd: count=$c violations=$v faults=$f"
		diag "$TMP/fakeamd.out"
	fi
fi

# The summary: one unit per quantity (J), domain names, and "not
# measured" (JSON: null) for the domain the source lacks (AMD: DRAM).
if run summary 0 --guest spin --fake-vrapl --rapl amd --duration 0.5; then
	if grep -q '^vRAPL: fake (in-process page, no module), domains pkg core, ' "$TMP/summary.out" &&
	   grep -Eq '^vm: pkg [0-9]+\.[0-9]{3} J \(overhead 0\.000 J\), core [0-9]+\.[0-9]{3} J, dram not measured, runtime [0-9.]+ s$' "$TMP/summary.out" &&
	   grep -Eq '^vcpu 0 .*, host pkg [0-9]+\.[0-9]{3} J$' "$TMP/summary.out" &&
	   ! grep -q ' uJ\|0x[0-9a-f]*,' "$TMP/summary.out"; then
		ok "text summary: J, domain names, dram not measured"
	else
		notok "text summary"
		diag "$TMP/summary.out"
	fi
fi
if run summaryjson 0 --guest spin --fake-vrapl --rapl amd --duration 0.5 --json; then
	if grep -Eq '"vm": \{"energy_uj": \{"pkg": [1-9][0-9]*, "core": [1-9][0-9]*, "dram": null\}' "$TMP/summaryjson.out" &&
	   grep -q '"stats_error": null' "$TMP/summaryjson.out"; then
		ok "JSON summary: uJ fields, null for the domain not measured"
	else
		notok "JSON summary"
		diag "$TMP/summaryjson.out"
	fi
fi

# --report-msr: a load that also reads its own energy counter.
for g in spin duty:30; do
	name=report-$(echo "$g" | tr ':' '-')
	if run "$name" 0 --guest "$g" --fake-vrapl --report-msr=50 --duration 1.5 --json; then
		c=$(msrjson "$TMP/$name.out" 0x611 count)
		v=$(msrjson "$TMP/$name.out" 0x611 violations)
		d=$(msrjson "$TMP/$name.out" 0x611 delta)
		if [ "${c:-0}" -ge 5 ] && [ "$v" = 0 ] && [ "${d:-0}" -gt 0 ] &&
		   grep -q '"joules": [0-9]' "$TMP/$name.out"; then
			ok "--report-msr $g: $c reads of 0x611, delta $d"
		else
			notok "--report-msr $g: count=$c violations=$v delta=$d"
			diag "$TMP/$name.out"
		fi
	fi
done

# --trace: one line per guest read; the demo's plot (scripts/plot-demo.sh,
# gnuplot) is drawn from three such traces and must be a valid PNG.
plot=$(dirname "$0")/../../scripts/plot-demo.sh
if run trace 0 --guest spin --fake-vrapl --report-msr=50 --duration 2.5 \
	--trace "$TMP/trace.txt" --json; then
	c=$(msrjson "$TMP/trace.out" 0x611 count)
	lines=$(grep -vc '^#' "$TMP/trace.txt")
	hdr=$(head -n 1 "$TMP/trace.txt")
	if [ "$hdr" != "# t_s vcpu host_pkg_uj msr_0x606 msr_0x611" ] ||
	   [ "${c:-0}" -lt 5 ] || [ "$lines" != "$c" ]; then
		notok "--trace: header '$hdr', $lines lines for ${c:-no} reads"
	elif [ ! -x "$plot" ] || ! command -v gnuplot > /dev/null; then
		skip "--trace: $lines lines; no gnuplot or $plot to draw them"
	else
		for i in 0 1 2; do
			echo "### TRACE $i vm$i BEGIN"
			cat "$TMP/trace.txt"
			echo "### TRACE $i END"
		done > "$TMP/console"
		if "$plot" "$TMP/console" "$TMP/plot" > "$TMP/plot.out" 2>&1; then
			ok "--trace: a line per read ($lines), and plot-demo.sh draws them"
		else
			notok "--trace: plot-demo.sh failed"
			diag "$TMP/plot.out"
		fi
	fi
fi

if run usage 1 --guest nonsense; then
	ok "usage error exits 1"
fi

if [ -x "$VMM.static" ]; then
	if VMM=$VMM.static run static 0 --guest pio-loop --rapl=off --duration 0.2; then
		ok "static binary runs"
	fi
else
	skip "no static binary next to $VMM"
fi

if [ -e /dev/vmrapl ]; then
	skip "--require-vrapl without the module (module is loaded)"
elif run require 3 --require-vrapl --duration 0.1; then
	ok "--require-vrapl without the module exits 3"
fi

if [ "$n" -ne 21 ]; then
	notok "test count: ran $n"
fi
[ "$failed" -eq 0 ]
