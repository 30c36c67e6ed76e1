#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check": every build, lint, unit, DKMS and rig step, run to the end
# even when one fails, then a summary table and one closing line
# "N passed, N failed".  Exit status is non-zero when anything failed.
#
# Environment:
#   RIG_VARIANTS     extra rig variants (default "numa"; empty: none), run on RIG_VARIANT_KVER
#   RIG_VARIANT_KVER kernel for the variants (default: oldest installed)
#   CHECK_SKIP       steps to skip, e.g. "rig dkms" ("prom": the Prometheus scrape)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logdir=$top/build/check
mkdir -p "$logdir"

declare -a s_name=() s_pass=() s_fail=() s_skip=() s_time=()
total_pass=0 total_fail=0 total_skip=0

record() { # name pass fail skip seconds
	s_name+=("$1"); s_pass+=("$2"); s_fail+=("$3"); s_skip+=("$4"); s_time+=("$5")
	total_pass=$((total_pass + $2)); total_fail=$((total_fail + $3))
	total_skip=$((total_skip + $4))
	echo "check: $1: $2 passed, $3 failed, $4 skipped (${5}s)"
}

skipping() { [[ " ${CHECK_SKIP:-} " == *" $1 "* ]]; }

# Known, explained notices that are not findings.  glibc marks
# getaddrinfo() with a link-time note for static links; libnuma.a's
# affinity.o (pulled in by any libnuma call) references it for
# affinity_ip(), which the static NUMA selftest never reaches.
allowed_re="in function .affinity_ip.:|warning: Using 'getaddrinfo' in statically linked applications"

findings() { # regex log
	grep -E "$1" "$2" | grep -Ev "$allowed_re"
}

# One-test step: runs a command, logs it, passes on exit 0 and (optionally)
# no line matching a "finding" regex.
single() { # name findings-regex command...
	local name=$1 re=$2 start rc log
	shift 2
	log=$logdir/$(echo "$name" | tr ' /' '__').log
	echo "check: --- $name"
	start=$(date +%s)
	"$@" > "$log" 2>&1
	rc=$?
	if [[ $rc == 0 && -n $re ]] && findings "$re" "$log" | grep -q .; then
		findings "$re" "$log" | head -n 20
		rc=1
	fi
	if [[ $rc != 0 ]]; then
		tail -n 30 "$log"
		record "$name" 0 1 0 $(( $(date +%s) - start ))
	else
		record "$name" 1 0 0 $(( $(date +%s) - start ))
	fi
}

# TAP step: counts ok / not ok / # SKIP lines from a command's output; a
# non-zero exit without any "not ok" counts as one extra failure.
tap() { # name command...
	local name=$1 start rc log p f s
	shift
	log=$logdir/$(echo "$name" | tr ' /' '__').log
	echo "check: --- $name"
	start=$(date +%s)
	"$@" > "$log" 2>&1
	rc=$?
	s=$(grep -Ec '^(not )?ok [0-9]+.*# *[Ss][Kk][Ii][Pp]' "$log")
	p=$(grep -E '^ok [0-9]+' "$log" | grep -Evc '# *[Ss][Kk][Ii][Pp]')
	f=$(grep -E '^not ok [0-9]+' "$log" | grep -Evc '# *[Ss][Kk][Ii][Pp]')
	grep -E '^not ok [0-9]+' "$log" | grep -Ev '# *[Ss][Kk][Ii][Pp]'
	if [[ $rc != 0 && $f == 0 ]]; then
		tail -n 30 "$log"
		f=1
	fi
	record "$name" "$p" "$f" "$s" $(( $(date +%s) - start ))
}

# 1. dependencies
if scripts/deps.sh --check > /dev/null 2>&1; then
	echo "check: deps present"
else
	single "deps" "" scripts/deps.sh
fi

mapfile -t kvers < <(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null |
	sed 's|^/usr/src/linux-headers-||' | sort -V)
if [[ ${#kvers[@]} == 0 ]]; then
	record "kernel headers present" 0 1 0 0
fi

# 2. builds (W=1, any compiler warning is a failure)
warn_re='(warning|error):'
for k in "${kvers[@]}"; do
	rm -rf "build/$k"	# a fresh build, so no warning hides behind make's up-to-date check
	single "module build $k W=1" "$warn_re" make --no-print-directory module KVER="$k" W=1
done
if [[ -f userspace/Makefile ]]; then
	single "userspace build" "$warn_re" make --no-print-directory userspace
fi
single "selftests build" "$warn_re" make --no-print-directory selftests
# The supported window: out-of-window kernels stop at compat.h's #error.
if [[ ${#kvers[@]} -gt 0 ]]; then
	tap "kernel window" scripts/window-test.sh "/usr/src/linux-headers-${kvers[0]}"
fi

# 3. unit tests; the simulator and hot-path benchmark in quick mode (one
# step: passes when they run and vmrapl's conservation holds, never on a
# timing)
tap "unit tests" make --no-print-directory unit
single "bench quick" "" make --no-print-directory bench-quick

# 4. lint
if ! skipping lint; then
	for k in "${kvers[@]}"; do
		single "sparse $k" "" make --no-print-directory sparse KVER="$k"
	done
	single "checkpatch" "" make --no-print-directory checkpatch
fi

# 5. DKMS, and install/uninstall into a staging root
if ! skipping dkms; then
	tap "dkms" make --no-print-directory dkms-test
fi
tap "install" make --no-print-directory install-test

# 6. QEMU rig
rig() { # kver [variant]
	local k=$1 v=${2:-} tag name start res p=0 f=1 s=0
	tag=$k${v:+-$v}
	name="rig $tag"
	echo "check: --- $name"
	start=$(date +%s)
	rm -f "build/rig-$tag.result"
	selftests/rig/run.sh "$k" ${v:+--variant "$v"} > "$logdir/rig-$tag.out" 2>&1
	tail -n 25 "$logdir/rig-$tag.out" | grep -E '^(rig |  )'
	res=build/rig-$tag.result
	if [[ -f $res ]]; then
		p=$(sed -n 's/.*passed=\([0-9]*\).*/\1/p' "$res")
		f=$(sed -n 's/.*failed=\([0-9]*\).*/\1/p' "$res")
		s=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' "$res")
	fi
	record "$name" "${p:-0}" "${f:-1}" "${s:-0}" $(( $(date +%s) - start ))
}
if ! skipping rig && [[ ${#kvers[@]} -gt 0 ]]; then
	for k in "${kvers[@]}"; do
		rig "$k"
	done
	for v in ${RIG_VARIANTS-numa}; do
		rig "${RIG_VARIANT_KVER:-${kvers[0]}}" "$v"
	done
	# The exporter's /metrics bodies the rig's tools test printed.
	logs=()
	for k in "${kvers[@]}"; do
		logs+=("build/rig-$k.log")
	done
	single "promtool check metrics" "" scripts/promtool-check.sh "${logs[@]}"
	# A real Prometheus scrape of the exporter (rig.mode=prom, ~75 s) on
	# the newest kernel: one test, failed by any "not ok".
	if ! skipping prom; then
		single "prometheus scrape ${kvers[-1]}" '^not ok' \
			scripts/prom-scrape.sh "${kvers[-1]}"
	fi
fi

# Summary
echo
echo "================================ check summary ================================"
printf '%-44s %7s %7s %7s %6s\n' step passed failed skipped secs
for i in "${!s_name[@]}"; do
	printf '%-44s %7d %7d %7d %6d\n' "${s_name[$i]}" "${s_pass[$i]}" "${s_fail[$i]}" \
		"${s_skip[$i]}" "${s_time[$i]}"
done
echo "==============================================================================="
echo "skipped: $total_skip"
echo "$total_pass passed, $total_fail failed"
[[ $total_fail == 0 ]]
