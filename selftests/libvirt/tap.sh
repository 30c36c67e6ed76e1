# SPDX-License-Identifier: GPL-2.0
# KTAP for the booted root's test programs (selftests/libvirt), as the
# rig's run.sh reads it: "ok N name", "not ok N name", "# " lines of
# diagnosis, and the plan "1..N" at the end (tap_end).
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
diag() { sed 's/^/# /'; }
# check NAME COMMAND...: ok when the command succeeds; its output is the
# diagnosis, shown in full when it fails and its last 5 lines when not.
check() {
	local name=$1 out
	shift
	out=$("$@" 2>&1)
	if [ $? = 0 ]; then
		ok "$name"
		[ -z "$out" ] || printf '%s\n' "$out" | tail -n 5 | diag
	else
		notok "$name"
		[ -z "$out" ] || printf '%s\n' "$out" | tail -n 30 | diag
	fi
}
tap_end() {
	echo "1..$n"
	[ "$failed" = 0 ]
}
