# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by scripts/check.sh ("make check"), check-debug.sh,
# check-qemu.sh and check-intel.sh: the kernel lists, steps recorded with their
# passed/failed/skipped counts, and the closing summary whose last line is
# "N passed, N failed".  Source it with $logdir set.

declare -a s_name=() s_pass=() s_fail=() s_skip=() s_time=()
total_pass=0 total_fail=0 total_skip=0

# The kernels: host_kvers (the host's headers, oldest first), new_kvers
# (the trixie root's 7.x, scripts/kernels.sh), full_kvers (the host's and
# the newest 7.x: those the whole suite runs on).
kver_lists() {
	mapfile -t host_kvers < <(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null |
		sed 's|^/usr/src/linux-headers-||' | sort -V)
	mapfile -t new_kvers < <(scripts/kernels.sh list 2>/dev/null)
	full_kvers=("${host_kvers[@]}")
	if [[ ${#new_kvers[@]} -gt 0 ]]; then
		full_kvers+=("${new_kvers[-1]}")
	fi
}

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

# The rig's QEMU ("make qemu", scripts/qemu.sh): say which when cached,
# else build it as a step of its own.  Every rig run boots it.
rig_qemu() {
	if scripts/qemu.sh path > /dev/null 2>&1; then
		echo "check: qemu cached: $(scripts/qemu.sh path)"
	else
		single "make qemu" "" scripts/qemu.sh build
	fi
}

# A rig run (selftests/rig/run.sh; RIG_KERNEL/RIG_MODDIR, RIG_ONLY from
# the environment): its passed/failed/skipped from build/rig-<tag>.result.
rig() { # kver [variant]
	local k=$1 v=${2:-} tag name start res p=0 f=1 s=0
	tag=$k${v:+-$v}
	# RIG_NOTE names a RIG_ONLY list too long to print.
	if [[ -n ${RIG_NOTE:-} ]]; then
		name="rig $tag ($RIG_NOTE)"
	else
		name="rig $tag${RIG_ONLY:+ (only: $RIG_ONLY)}"
	fi
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
# The table of steps and the closing line; returns non-zero when anything
# failed.
summary() {
	local i
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
}
