#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the few kernel-tree files the build needs (checkpatch.pl and its
# data files, the kselftest harness headers) from Debian's linux-source
# tarball into build/ksrc/.  Done once; a stamp file records success.
#
# Usage: scripts/ksrc.sh [OUTDIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/ksrc}
tarball=${VMRAPL_LINUX_SOURCE:-}
if [[ -z $tarball ]]; then
	tarball=$(ls -1 /usr/src/linux-source-6.*.tar.xz 2>/dev/null | sort -V | head -n1 || true)
fi
stamp=$out/.stamp

if [[ -f $stamp ]]; then
	exit 0
fi
if [[ -z $tarball || ! -f $tarball ]]; then
	echo "ksrc: no /usr/src/linux-source-6.*.tar.xz; run 'make deps'" >&2
	exit 1
fi

members=(
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
)
prefix=$(basename "$tarball" .tar.xz)
patterns=()
for m in "${members[@]}"; do
	patterns+=("$prefix/$m")
done

echo "ksrc: extracting ${#members[@]} files from $(basename "$tarball")"
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
tar -xJf "$tarball" -C "$out.tmp" --strip-components=1 "${patterns[@]}"
for m in "${members[@]}"; do
	[[ -f $out.tmp/$m ]] || { echo "ksrc: $m missing from tarball" >&2; exit 1; }
done
rm -rf "$out"
mv "$out.tmp" "$out"
basename "$tarball" > "$stamp"
