#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make install" into a staging root puts down what a Debian system
# expects where it expects it, and "make uninstall" takes all of it away
# again.  TAP output.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-install.XXXXXX")
trap 'rm -rf "$stage"' EXIT
multiarch=$(cc -print-multiarch 2>/dev/null)
n=0 fail=0
check() { # description, command...
	local d=$1
	shift
	n=$((n + 1))
	if "$@" > /dev/null 2>&1; then
		echo "ok $n $d"
	else
		echo "not ok $n $d"
		fail=$((fail + 1))
	fi
}
echo "TAP version 13"
make -s -C "$top" install PREFIX=/usr DESTDIR="$stage" > "$stage.log" 2>&1
check "make install PREFIX=/usr DESTDIR=..." test $? = 0
check "libvmrapl in the multiarch libdir" \
	test -e "$stage/usr/lib/${multiarch:-.}/libvmrapl.so.1"
check "pkg-config file carries VERSION" \
	grep -qx "Version: $(cat "$top/VERSION")" \
	"$stage/usr/lib/${multiarch:-.}/pkgconfig/vmrapl.pc"
check "udev rule in /usr/lib/udev/rules.d" \
	test -f "$stage/usr/lib/udev/rules.d/60-vmrapl.rules"
check "modules-load.d loads vmrapl at boot" \
	grep -qx vmrapl "$stage/usr/lib/modules-load.d/vmrapl.conf"
check "modprobe.d file for the options" \
	test -f "$stage/etc/modprobe.d/vmrapl.conf"
check "vmraplctl in sbin" test -x "$stage/usr/sbin/vmraplctl"
check "the test VMM is not on the PATH" \
	test ! -e "$stage/usr/bin/vmrapl-vmm" -a -x "$stage/usr/lib/vmrapl/vmrapl-vmm"
check "Prometheus rules and Grafana dashboard in /usr/share/vmrapl" \
	test -f "$stage/usr/share/vmrapl/prometheus/vmrapl.rules.yml" -a \
	-f "$stage/usr/share/vmrapl/grafana/vmrapl.json"
check "vmraplctl -V says VERSION" \
	grep -q "vmraplctl $(cat "$top/VERSION") " \
	<(LD_LIBRARY_PATH="$stage/usr/lib/$multiarch" "$stage/usr/sbin/vmraplctl" -V)
make -s -C "$top" uninstall PREFIX=/usr DESTDIR="$stage" >> "$stage.log" 2>&1
check "make uninstall" test $? = 0
left=$(find "$stage" ! -type d)
check "nothing left after make uninstall" test -z "$left"
[[ -n $left ]] && sed 's/^/# left: /' <<< "$left"
rm -f "$stage.log"
echo "1..$n"
[[ $fail == 0 ]]
