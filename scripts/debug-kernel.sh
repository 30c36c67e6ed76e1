#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the debug kernel of "make check-debug": Debian's
# linux-source-6.1, "make allnoconfig" + selftests/rig/debug.config +
# "make olddefconfig", x86_64; bzImage, modules, and the modules installed
# to a staging directory.  The result is cached outside the checkout, keyed
# by the linux-source version and the fragment's hash, so a second call with
# the same source and fragment does nothing:
#
#   $VMRAPL_DEBUG_KERNEL_CACHE/<source version>-<sha256(fragment):12>/
#     vmlinuz              the bzImage
#     build/               the whole build tree (KDIR for vmrapl.ko)
#     modules/lib/modules/<release>/   modules_install staging (modules.dep)
#     kernelrelease        the release string (…-vmrapl-debug)
#     build.log            the build's output
#     .done                written last: the entry is complete
#
# Usage: scripts/debug-kernel.sh [--print-dir | --print-env]
#   (no argument)  build if needed, then print the KDIR/KVER/RIG_* lines
#   --print-dir    print the cache directory of this source+fragment, build nothing
#   --print-env    like no argument, but print only shell assignments
#
# Environment: VMRAPL_LINUX_SOURCE (tarball, default
# /usr/src/linux-source-6.1.tar.xz), VMRAPL_DEBUG_KERNEL_CACHE (default
# /var/cache/vmrapl/debug-kernel), VMRAPL_DEBUG_CONFIG (fragment, default
# selftests/rig/debug.config), JOBS (default 2).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${VMRAPL_LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
fragment=${VMRAPL_DEBUG_CONFIG:-$top/selftests/rig/debug.config}
cache=${VMRAPL_DEBUG_KERNEL_CACHE:-/var/cache/vmrapl/debug-kernel}
jobs=${JOBS:-2}
mode=${1:-}

die() { echo "debug-kernel: $*" >&2; exit 1; }

[[ -f $tarball ]] || die "$tarball missing (scripts/deps.sh installs linux-source-6.1)"
[[ -f $fragment ]] || die "$fragment missing"

# The source's version: the Debian package's when the tarball is the
# package's, else the tarball's own hash.
srcver=
pkg=$(dpkg-query -S "$tarball" 2>/dev/null | cut -d: -f1 || true)
if [[ -n $pkg ]]; then
	srcver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
fi
[[ -n $srcver ]] || srcver=tar$(sha256sum "$tarball" | cut -c1-12)
fraghash=$(sha256sum "$fragment" | cut -c1-12)
dir=$cache/$(basename "$tarball" .tar.xz)-$srcver-$fraghash

print_env() {
	local rel
	rel=$(cat "$dir/kernelrelease")
	echo "DEBUG_KDIR=$dir/build"
	echo "DEBUG_KVER=$rel"
	echo "RIG_KERNEL=$dir/vmlinuz"
	echo "RIG_MODDIR=$dir/modules/lib/modules/$rel"
}

if [[ $mode == --print-dir ]]; then
	echo "$dir"
	exit 0
fi
[[ -z $mode || $mode == --print-env ]] || die "unknown argument $mode"

say() { [[ $mode == --print-env ]] && echo "$*" >&2 || echo "$*"; }

if [[ -f $dir/.done ]]; then
	say "debug-kernel: cached: $dir ($(cat "$dir/kernelrelease"))"
	print_env
	exit 0
fi

mkdir -p "$cache"
exec 9> "$dir.lock"
flock 9	# another build of the same entry: wait for it
if [[ -f $dir/.done ]]; then
	say "debug-kernel: cached: $dir ($(cat "$dir/kernelrelease"))"
	print_env
	exit 0
fi

start=$(date +%s)
mkdir -p "$dir"
log=$dir/build.log
# An interrupted build resumes: the extraction is kept once complete and
# make is incremental.
if [[ ! -f $dir/.extracted ]]; then
	say "debug-kernel: extracting $(basename "$tarball") to $dir/build"
	rm -rf "$dir/build"
	mkdir -p "$dir/build"
	tar -xJf "$tarball" -C "$dir/build" --strip-components=1
	touch "$dir/.extracted"
fi
cd "$dir/build"
kmake() { nice -n 19 make ARCH=x86_64 -j"$jobs" "$@"; }
if [[ ! -f .config.done ]]; then
	say "debug-kernel: configuring (allnoconfig + $(basename "$fragment") + olddefconfig)"
	cp "$fragment" .debug.config
	kmake allnoconfig > "$log" 2>&1
	scripts/kconfig/merge_config.sh -m .config .debug.config >> "$log" 2>&1
	kmake olddefconfig >> "$log" 2>&1
	# Every line of the fragment must have survived olddefconfig.
	bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) grep -qxF -- "$line" .config || { say "debug-kernel: not applied: $line"; bad=1; } ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}
			! grep -q "^$sym=" .config || { say "debug-kernel: not applied: $line"; bad=1; } ;;
		esac
	done < .debug.config
	[[ $bad == 0 ]] || die "the fragment does not apply cleanly (see above)"
	touch .config.done
fi
say "debug-kernel: building bzImage and modules (make -j$jobs, nice 19; log $log)"
if ! kmake bzImage modules >> "$log" 2>&1; then
	tail -n 40 "$log" >&2
	die "build failed (log $log)"
fi
rel=$(make -s ARCH=x86_64 kernelrelease)
rm -rf "$dir/modules"
kmake modules_install INSTALL_MOD_PATH="$dir/modules" >> "$log" 2>&1 ||
	die "modules_install failed (log $log)"
# modules_install points these back at the build tree; nothing needs them.
rm -f "$dir/modules/lib/modules/$rel/build" "$dir/modules/lib/modules/$rel/source"
cp arch/x86/boot/bzImage "$dir/vmlinuz"
echo "$rel" > "$dir/kernelrelease"
secs=$(( $(date +%s) - start ))
echo "$secs" > "$dir/build-seconds"
touch "$dir/.done"
say "debug-kernel: built $rel in ${secs}s: $dir"
print_env
