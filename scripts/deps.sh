#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building, linting and the QEMU rig need (Debian 12).
# Only runs apt-get when something is missing; prints what it skipped.
# Then the trixie build root and the 7.x kernels (scripts/kernels.sh) and
# the rig's QEMU with RAPL (scripts/qemu.sh), in /var/cache/vmrapl, never
# in the machine's own apt sources.
#
# Usage: scripts/deps.sh [--check] [--base] [--qemu-nolib]
#   --check: exit 1 if anything is missing, install nothing
#   --base:  the apt packages only, not the trixie build root and the
#            rig's QEMU with RAPL (make demo needs neither)
#   --qemu-nolib: also the same QEMU series built without libvmrapl
#            (QEMU_VMRAPL_LIB=no scripts/qemu.sh), which .ci/run adds
#
# The QEMU builds (CPU, 4 to 6 min each) run in the background beside the
# downloads and debootstraps (network and dpkg), their output in
# build/deps-qemu*.log.
set -euo pipefail

pkgs=(
	build-essential
	linux-headers-amd64 linux-image-amd64
	linux-headers-6.12-amd64 linux-image-6.12-amd64
	linux-source-6.1
	qemu-system-x86 busybox-static cpio kmod dkms sparse
	libnuma-dev libmicrohttpd-dev xz-utils zstd gzip perl git
	prometheus
	# pictures: gnuplot draws the demo's and the bench's plots (no X);
	# Debian's Chromium screenshots Prometheus's graph page headless
	gnuplot-nox chromium fonts-dejavu-core
	# "make doc-check" puts the RST through docutils (scripts/doc-check.py)
	python3-docutils
	# the debug kernel of "make check-debug" (scripts/debug-kernel.sh)
	flex bison libelf-dev libssl-dev bc
	# the trixie build root for the 7.x kernels (scripts/kernels.sh),
	# and the Debian 12 root the packages are tested in (deb-test.sh)
	debootstrap
	# "make deb" (scripts/deb.sh): dpkg-buildpackage with debhelper and
	# dh_dkms, then lintian
	dpkg-dev debhelper dh-dkms lintian
	# "make qemu" (scripts/qemu.sh), QEMU 10 for the rig's rapl variant;
	# its meson >= 1.5 and python3-pycotap come from bookworm-backports,
	# installed by scripts/qemu.sh itself with a private sources list;
	# libglib2.0-dev also has gmodule-2.0, which --enable-plugins needs
	libglib2.0-dev libpixman-1-dev libslirp-dev libfdt-dev zlib1g-dev
	ninja-build pkg-config python3-venv curl patch
	qemu-system-data seabios ipxe-qemu
	# "make check-qemu-next": QEMU 10.1 and later build their device
	# trees (pc-bios/dtb), which the +ds tarball does not carry, with dtc
	device-tree-compiler
	# perf in the rig's rapl variant (selftests/rig/mkinitramfs.sh copies
	# the binary and its libraries into that initramfs), and turbostat
	# in its nested guest
	linux-perf linux-cpupower
	# a backtrace of the rig's QEMU when it dies of a signal
	# (selftests/rig/run.sh reads its core dump)
	gdb
)

missing=()
present=()
for p in "${pkgs[@]}"; do
	if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]]; then
		present+=("$p")
	else
		missing+=("$p")
	fi
done

top=$(cd "$(dirname "$0")/.." && pwd)

# The nested guest of the rapl variant runs Debian's node_exporter (its
# rapl collector reads powercap).  Only its binary is taken, from the
# package apt downloads (apt-get download, the machine's own sources),
# so that no exporter service is installed on this machine:
# /var/cache/vmrapl/guest-tools/<package>_<version>/.
tools=${VMRAPL_CACHE:-/var/cache/vmrapl}/guest-tools
node_exporter_dir() { # the extracted package of the candidate version
	local v
	v=$(apt-cache policy prometheus-node-exporter 2>/dev/null |
	    awk '/Candidate:/ { print $2 }')
	[[ -n $v && $v != "(none)" ]] || return 1
	echo "$tools/prometheus-node-exporter_${v//:/%3a}"
}
node_exporter_present() {
	local d
	d=$(node_exporter_dir) && [[ -x $d/usr/bin/prometheus-node-exporter ]]
}
node_exporter_fetch() {
	local d tmp deb
	d=$(node_exporter_dir) || { echo "deps: no candidate for prometheus-node-exporter" >&2; return 1; }
	tmp=$(mktemp -d)
	chmod 0755 "$tmp"	# apt's download sandbox (_apt) writes there
	(cd "$tmp" && apt-get download -q prometheus-node-exporter) ||
		{ rm -rf "$tmp"; return 1; }
	deb=$(ls "$tmp"/prometheus-node-exporter_*.deb)
	mkdir -p "$d.new"
	dpkg-deb -x "$deb" "$d.new"
	rm -rf "$d" "$tmp"
	mv "$d.new" "$d"
	echo "deps: node_exporter for the nested guest: $d"
}

check=0 base=0 nolib=0
for a in "$@"; do
	case $a in
	--check) check=1 ;;
	--base) base=1 ;;
	--qemu-nolib) nolib=1 ;;
	*) echo "deps: unknown argument $a" >&2; exit 2 ;;
	esac
done

if [[ $check == 1 ]]; then
	rc=0
	if [[ ${#missing[@]} -gt 0 ]]; then
		echo "deps: missing: ${missing[*]}"
		rc=1
	fi
	[[ $base == 1 ]] && exit $rc
	node_exporter_present ||
		{ echo "deps: the nested guest's node_exporter is not extracted"; rc=1; }
	"$top/scripts/kernels.sh" check || rc=1
	"$top/scripts/deb-test.sh" --root-check ||
		{ echo "deps: the packages' test root is not made (make deps)"; rc=1; }
	"$top/scripts/libvirt-test.sh" --root-check ||
		{ echo "deps: the hypervisor root of make check-libvirt is not made (make deps)"; rc=1; }
	"$top/scripts/qemu.sh" path > /dev/null 2>&1 ||
		{ echo "deps: the rig's QEMU with RAPL is not built (make qemu)"; rc=1; }
	if [[ $nolib == 1 ]]; then
		QEMU_VMRAPL_LIB=no "$top/scripts/qemu.sh" path > /dev/null 2>&1 ||
			{ echo "deps: the QEMU without libvmrapl is not built"; rc=1; }
	fi
	exit $rc
fi

echo "deps: already installed, skipped: ${present[*]:-none}"
if [[ ${#missing[@]} -eq 0 ]]; then
	echo "deps: nothing to install"
else
	echo "deps: installing: ${missing[*]}"
	if [[ $(id -u) != 0 ]]; then
		echo "deps: need root to install packages" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
[[ $base == 1 ]] && exit 0

# QEMU 10 with the emulated RAPL counters, for the rig (and with
# --qemu-nolib the same series without libvmrapl), cached under
# /var/cache/vmrapl/qemu: built in the background while the rest is
# fetched.
qemu_libs=(yes)
[[ $nolib == 1 ]] && qemu_libs+=(no)
qemu_todo=()
for lib in "${qemu_libs[@]}"; do
	if bin=$(QEMU_VMRAPL_LIB=$lib "$top/scripts/qemu.sh" path 2> /dev/null); then
		echo "deps: QEMU (libvmrapl: $lib) present: $bin"
	else
		qemu_todo+=("$lib")
	fi
done
qemu_pid=
if [[ ${#qemu_todo[@]} -gt 0 ]]; then
	mkdir -p "$top/build"
	echo "deps: building QEMU (libvmrapl: ${qemu_todo[*]}) in the background (build/deps-qemu-*.log)"
	(
		for lib in "${qemu_todo[@]}"; do
			QEMU_VMRAPL_LIB=$lib "$top/scripts/qemu.sh" build \
				> "$top/build/deps-qemu-$lib.log" 2>&1 || exit 1
		done
	) &
	qemu_pid=$!
fi

if node_exporter_present; then
	echo "deps: the nested guest's node_exporter present: $(node_exporter_dir)"
else
	node_exporter_fetch
fi
if "$top/scripts/kernels.sh" check > /dev/null; then
	echo "deps: trixie build root and kernels present: $("$top/scripts/kernels.sh" list | tr '\n' ' ')"
else
	"$top/scripts/kernels.sh" setup
fi
# The clean Debian 12 root the packages are tested in (make deb-test):
# a debootstrap with Debian's kernel and headers, 2 to 3 minutes, cached.
if "$top/scripts/deb-test.sh" --root-check; then
	echo "deps: the packages' test root present"
else
	"$top/scripts/deb-test.sh" --root
fi
# The hypervisor root "make check-libvirt" boots: that root with systemd,
# Debian's libvirt and QEMU and AppArmor (about a minute), cached.
if "$top/scripts/libvirt-test.sh" --root-check; then
	echo "deps: the hypervisor root present"
else
	"$top/scripts/libvirt-test.sh" --root
fi
if [[ -n $qemu_pid ]]; then
	t0=$SECONDS
	qrc=0
	wait "$qemu_pid" || qrc=$?
	for lib in "${qemu_todo[@]}"; do
		[[ -f $top/build/deps-qemu-$lib.log ]] || continue
		tail -n "$([[ $qrc == 0 ]] && echo 2 || echo 30)" \
			"$top/build/deps-qemu-$lib.log"
	done
	if [[ $qrc != 0 ]]; then
		echo "deps: the QEMU build failed (build/deps-qemu-*.log)" >&2
		exit 1
	fi
	echo "deps: QEMU built; waited $((SECONDS - t0)) s for it after the rest"
fi
