#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernels newer than what Debian 12's userland can build for.
#
# Debian's trixie-backports suite ships kernels up to the 7.x line, but
# their headers need a trixie userland (linux-kbuild-7.x links against
# glibc >= 2.38 and wants gcc-14).  This script keeps, outside the
# checkout, under $VMRAPL_CACHE (default /var/cache/vmrapl):
#
#   trixie-root/        a debootstrap'ed trixie build root (minbase) with
#                       trixie-backports in a private sources list, make,
#                       gcc-14, sparse, dkms and the headers of each kernel
#   kernels/<KVER>/     each kernel's image and modules packages, extracted
#                       (not installed) for the QEMU rig, with modules.dep
#   kernels.list        the kernels chosen: the newest release of every
#                       series that Debian ships with headers, inside the
#                       supported window (dkms.conf's BUILD_EXCLUSIVE_KERNEL)
#
# Usage:
#   kernels.sh setup          create or complete all of the above
#   kernels.sh check          exit 1 (and say what) if setup has not run
#   kernels.sh list           the chosen kernels, oldest first
#   kernels.sh root           the build root's path
#   kernels.sh has KVER       exit 0 if KVER's headers are in the build root
#   kernels.sh image KVER     the extracted vmlinuz of KVER
#   kernels.sh moddir KVER    the extracted /lib/modules/KVER
#   kernels.sh run CMD...     CMD inside the build root, with the checkout
#                             bind-mounted at its own path, in a private
#                             mount namespace (nothing stays mounted)
#
# Environment: VMRAPL_CACHE, DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${VMRAPL_CACHE:-/var/cache/vmrapl}
root=$cache/trixie-root
kdir=$cache/kernels
list=$cache/kernels.list
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

die() { echo "kernels: $*" >&2; exit 1; }

# The window, written once in dkms.conf.
window() {
	sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$top/dkms.conf"
}

in_root() { # command... (root's own paths; no checkout needed)
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

make_root() {
	[[ -f $root/.vmrapl-root ]] && return 0
	command -v debootstrap > /dev/null || die "debootstrap missing (run scripts/deps.sh)"
	echo "kernels: debootstrap trixie (minbase) into $root"
	rm -rf "$root.tmp"
	mkdir -p "$cache"
	debootstrap --variant=minbase trixie "$root.tmp" "$mirror" > "$cache/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$cache/debootstrap.log"; die "debootstrap failed (log: $cache/debootstrap.log)"; }
	# The backports suite lives in the build root's own sources only.
	cat > "$root.tmp/etc/apt/sources.list.d/vmrapl-backports.sources" <<-EOF
	Types: deb
	URIs: $mirror
	Suites: trixie-backports
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	rm -rf "$root"
	mv "$root.tmp" "$root"
	touch "$root/.vmrapl-root"
}

# The newest release of each series with an amd64 headers package in
# trixie-backports, inside the window, newer than what the host builds.
choose() {
	local re
	re=$(window)
	in_root apt-cache pkgnames linux-headers- |
		sed -n 's/^linux-headers-\([0-9][0-9.]*+deb13-amd64\)$/\1/p' |
		sort -V | awk -F. '{ s = $1 "." $2; best[s] = $0 } END { for (s in best) print best[s] }' |
		sort -V | while read -r k; do
			# Series the host's own headers cover (6.1, 6.12) stay there.
			[[ ${k%%.*} -ge 7 || $k =~ ^6\.(1[3-9]|[2-9][0-9])\. ]] || continue
			[[ $k =~ $re ]] && echo "$k"
		done
}

# Image (vmlinuz) and modules of KVER, extracted from its packages.
extract() { # kver
	local k=$1 dst=$kdir/$1 deps p debs=()
	[[ -f $dst/.done ]] && return 0
	rm -rf "$dst" "$cache/debs-$k"
	mkdir -p "$dst" "$cache/debs-$k"
	# 7.x splits linux-image-KVER into linux-binary-KVER (vmlinuz) and
	# linux-modules-KVER; older series ship one package.
	deps=$(in_root apt-cache depends "linux-image-$k" |
		sed -n "s/^ *Depends: \(linux-\(binary\|modules\)-$k\)$/\1/p" | sort -u | tr "\n" " ")
	# shellcheck disable=SC2086
	in_root sh -c "cd /tmp && rm -f ./*.deb && apt-get download -q linux-image-$k $deps" \
		> /dev/null || die "downloading linux-image-$k failed"
	mv "$root"/tmp/*.deb "$cache/debs-$k/"
	for p in "$cache/debs-$k"/*.deb; do
		dpkg-deb -x "$p" "$dst"
		debs+=("$(basename "$p")")
	done
	rm -rf "$cache/debs-$k"
	# Merged /usr: modules may sit under usr/lib/modules.
	if [[ ! -d $dst/lib/modules/$k && -d $dst/usr/lib/modules/$k ]]; then
		mkdir -p "$dst/lib/modules"
		ln -s "../../usr/lib/modules/$k" "$dst/lib/modules/$k"
	fi
	# 7.x ships the image as /usr/lib/modules/KVER/vmlinuz.
	if [[ ! -f $dst/boot/vmlinuz-$k && -f $dst/lib/modules/$k/vmlinuz ]]; then
		mkdir -p "$dst/boot"
		ln -s "../lib/modules/$k/vmlinuz" "$dst/boot/vmlinuz-$k"
	fi
	[[ -f $dst/boot/vmlinuz-$k ]] || die "no vmlinuz for $k in ${debs[*]}"
	# modules.builtin* come from no binary package; depmod does without.
	depmod -b "$dst" "$k" 2>&1 | grep -v 'could not open modules.builtin' >&2 || true
	[[ -s $dst/lib/modules/$k/modules.dep ]] || die "depmod for $k failed"
	touch "$dst/.done"
	echo "kernels: extracted ${debs[*]} into $dst"
}

setup() {
	local ks=() k pkgs
	[[ $(id -u) == 0 ]] || die "setup needs root (debootstrap, chroot)"
	make_root
	echo "kernels: apt-get update in the build root"
	in_root apt-get update -q > "$cache/apt-update.log" 2>&1 ||
		{ tail -n 20 "$cache/apt-update.log"; die "apt-get update failed"; }
	mapfile -t ks < <(choose)
	[[ ${#ks[@]} -gt 0 ]] || die "no kernel series with headers in trixie-backports inside the window $(window)"
	pkgs="make gcc-14 sparse dkms kmod"
	for k in "${ks[@]}"; do
		pkgs+=" linux-headers-$k"
	done
	echo "kernels: installing into the build root: $pkgs"
	# shellcheck disable=SC2086
	in_root apt-get install -y -q --no-install-recommends $pkgs > "$cache/apt-install.log" 2>&1 ||
		{ tail -n 20 "$cache/apt-install.log"; die "apt-get install failed"; }
	in_root apt-get clean
	for k in "${ks[@]}"; do
		extract "$k"
	done
	printf '%s\n' "${ks[@]}" > "$list.tmp"
	mv "$list.tmp" "$list"
	echo "kernels: ready: ${ks[*]}"
}

check() {
	local k
	[[ -f $root/.vmrapl-root && -s $list ]] || { echo "kernels: no build root at $root"; return 1; }
	while read -r k; do
		[[ -d $root/usr/src/linux-headers-$k && -f $kdir/$k/.done ]] ||
			{ echo "kernels: $k incomplete"; return 1; }
	done < "$list"
}

run() { # command...
	[[ -f $root/.vmrapl-root ]] || die "no build root at $root (run 'make deps')"
	mkdir -p "$root$top"
	# The checkout at its own path, so build/<KVER>'s symlinks resolve;
	# the mount dies with the namespace.
	exec unshare --mount --propagation private /bin/bash -c '
		set -e
		mount --bind "$1" "$2$1"
		mount -t proc proc "$2/proc"
		root=$2 dir=$3
		shift 3
		exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 ${MAKEFLAGS:+MAKEFLAGS="$MAKEFLAGS"} \
			/bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$dir" "$@"
	' vmrapl-kernels "$top" "$root" "$PWD" "$@"
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
setup) setup ;;
check) check ;;
list) [[ -f $list ]] && cat "$list" ;;
root) echo "$root" ;;
has) [[ -f $root/.vmrapl-root && -d $root/usr/src/linux-headers-${1:?KVER} ]] ;;
image) echo "$kdir/${1:?KVER}/boot/vmlinuz-$1" ;;
moddir) echo "$kdir/${1:?KVER}/lib/modules/$1" ;;
run) [[ ${1:-} == -- ]] && shift; run "$@" ;;
*) sed -n '20,31s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
