#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The supported kernel window (dkms.conf's BUILD_EXCLUSIVE_KERNEL, which
# Kbuild applies, and kmod/compat.h's #error): builds the module against
# KDIR in a scratch mirror while pretending the kernel is 6.0, 7.4 and 8.0,
# and with no dkms.conf to read, and expects each to stop at the #error;
# 6.19 and 7.0 (inside) and the real series must compile.  TAP output.
#
# Usage: scripts/window-test.sh KDIR
set -u
kdir=$1
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-window.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/kmod"
ln -s "$top/Kbuild" "$work/Kbuild"
ln -s "$top/uapi" "$work/uapi"
ln -s "$top"/kmod/*.[ch] "$work/kmod/"
# A tree with a VERSION but no dkms.conf, for the third case.
cp "$top/VERSION" "$work/"
n=0 fail=0
echo "TAP version 13"
# Each case compiles one object, kmod/main.o: the window is decided in
# Kbuild's flags, the same for every object, and main.c includes
# compat.h, whose #error stops it outside the window (the module's full
# builds are make check's "module build" steps).
try() { # description, expect (pass|error), extra make args...
	local d=$1 want=$2 out rc
	shift 2
	out=$(make -s -C "$kdir" M="$work" VMRAPL_SRCTREE="$top" "$@" kmod/main.o 2>&1)
	rc=$?
	n=$((n + 1))
	if [[ $want == pass && $rc == 0 ]] ||
	   [[ $want == error && $rc != 0 && $out == *"outside that window"* ]]; then
		echo "ok $n $d"
	else
		fail=$((fail + 1))
		echo "not ok $n $d"
		tail -n 5 <<< "$out" | sed 's/^/# /'
	fi
	make -s -C "$kdir" M="$work" clean > /dev/null 2>&1
}
try "a 6.0 kernel stops at compat.h's #error" error PATCHLEVEL=0
try "a 7.4 kernel stops at compat.h's #error" error VERSION=7 PATCHLEVEL=4
try "an 8.0 kernel stops at compat.h's #error" error VERSION=8 PATCHLEVEL=0
try "a 6.19 kernel is inside the window" pass PATCHLEVEL=19
try "a 7.0 kernel is inside the window" pass VERSION=7 PATCHLEVEL=0
try "without dkms.conf the build stops at the #error" error \
	VMRAPL_SRCTREE="$work"
try "the real kernel compiles" pass
echo "1..$n"
[[ $fail == 0 ]]
