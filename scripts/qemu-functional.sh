#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The QEMU series' functional test (tests/functional/test_x86_64_vmrapl.py,
# patch 0023, installed by "make qemu" beside its binary) on this
# machine, as QEMU's own test runner would run it; prints its TAP.  Here,
# without the vmrapl module, the tests that need /dev/vmrapl skip and say
# why, and the one that needs only KVM runs where /dev/kvm is usable; the
# rig's rapl variant runs all of them against the module
# (selftests/vmrapl/rapl_qemu_functional.c).
#
# Usage: scripts/qemu-functional.sh [path/to/qemu-system-x86_64]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
qemu=${1:-$("$top/scripts/qemu.sh" path)}
tree=$(dirname "$qemu")/functional
test=$tree/tests/functional/test_x86_64_vmrapl.py
[[ -f $test ]] || { echo "qemu-functional: no $test (make qemu)" >&2; exit 1; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-qemu-functional.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Debian's python3, which has python3-pycotap (scripts/qemu.sh installs it).
cd "$tree/tests/functional"
QEMU_TEST_QEMU_BINARY=$qemu QEMU_BUILD_ROOT=$scratch \
PYTHONPATH=$tree/python:$tree/tests/functional \
	/usr/bin/python3 "$test"
