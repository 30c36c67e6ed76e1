#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the busybox initramfs the test rig boots.
#
# Usage: mkinitramfs.sh KVER OUT [VARIANT]
#
# Contents:
#   /bin/busybox + one symlink per applet
#   /lib/modules/<KVER>/*.ko  the KVM chain of the installed image, in load
#                             order (listed in /etc/rig/modules), decompressed;
#                             the virtio NIC's (/etc/rig/modules.net, prom mode)
#                             the kernel's own RAPL drivers, fw_cfg, msr,
#                             tun and vhost_net (/etc/rig/modules.rapl,
#                             rapl variant; intel variant: no tun or
#                             vhost_net, and of the KVM chain kvm.ko
#                             alone); vhost_net elsewhere
#                             (/etc/rig/modules.vhost, loaded by its test)
#   /vmrapl.ko                build/<KVER>/vmrapl.ko (or $VMRAPL_KO)
#   /vr_fakekvm.ko            the test module beside it (make testmod)
#   /tests/*                  static test programs from build/selftests/
#                             (or $RIG_TESTS_DIR)
#   /bin/vmrapl-exporter      static, or else the dynamic build with its
#                             shared libraries and loader (from ldd)
#   /usr/bin/perf             rapl and intel variants only: Debian's linux-perf binary
#                             with its shared libraries and loader (ldd)
#   /usr/bin/qemu-system-x86_64, /usr/share/qemu-fw/, /l2/{vmlinuz,initrd.gz}
#                             rapl variant only: the QEMU of "make qemu"
#                             (stripped, with its libraries), the firmware
#                             it needs to boot a kernel, and the nested
#                             guest selftests/vmrapl/rapl_qemu.c boots
#                             with it: this kernel's image and the L2 image
#   /usr/bin/python3, /usr/lib/python3.N, /qemu-functional
#                             rapl variant only, with that QEMU: Debian's
#                             python3 and QEMU's functional test of the
#                             vmrapl backend (rapl_qemu_functional.c)
#   /bin/rdmsr                selftests/rig/rdmsr.c (static)
#   /etc/rig/udev.rules       udev/60-vmrapl.rules, applied by /init
#   /etc/rig/debug.skip       selftests/rig/debug.skip (--variant debug)
#   /etc/rig/try-hint         selftests/rig/try-hint (rig.mode=try)
#   /init                     selftests/rig/init
#
# VARIANT l2 builds that nested guest's image instead: busybox, the RAPL
# drivers and virtio_net (/etc/rig/modules.rapl), msr, rdmsr and perf, and
# selftests/rig/l2-init as /init; no KVM, no vmrapl, no tests.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:?usage: mkinitramfs.sh KVER OUT [VARIANT]}
out=${2:?usage: mkinitramfs.sh KVER OUT [VARIANT]}
variant=${3:-}
ko=${VMRAPL_KO:-$top/build/$kver/vmrapl.ko}
fakekvm_ko=$(dirname "$ko")/fakekvm/vr_fakekvm.ko
tests_dir=${RIG_TESTS_DIR:-$top/build/selftests}
# RIG_MODDIR: the modules of a kernel that is not installed (the debug
# kernel's modules_install staging dir); it must hold modules.dep.
moddir=${RIG_MODDIR:-/lib/modules/$kver}
# Top of the module chain; modules.dep supplies the rest (irqbypass, kvm,
# ccp on kernels where kvm-amd links against the PSP driver).
want_mods=(kvm-amd)
# The virtio NIC of rig.mode=prom (loaded by /init in that mode only, from
# /etc/rig/modules.net); virtio_pci is built in on some kernels.
net_mods=(virtio_pci virtio_net)
# The rapl variant (/etc/rig/modules.rapl): the kernel's own readers of
# the emulated counters, the powercap driver (intel_rapl_msr, which also
# serves AMD) and perf's power PMU (rapl); qemu_fw_cfg for the model's
# truth; msr for /dev/cpu/N/msr.  rapl_qemu's vhost-net NIC needs tun
# and vhost_net in the rig (L1), and virtio_net in its nested guest (the
# l2 image, whose /init loads this list too).
rapl_mods=(intel_rapl_msr rapl qemu_fw_cfg msr)
# vhost-net in every variant (/etc/rig/modules.vhost, not loaded by /init):
# threads.vhost_worker_of_reused_pid loads it for the kernel-thread vhost
# workers of kernels before 6.4.
vhost_mods=(vhost_net)
case $variant in
rapl) rapl_mods+=(tun vhost_net) ;;
l2) rapl_mods+=(virtio_net) ;;
# An Intel CPU under TCG has no VMX: kvm-intel cannot load, and kvm-amd
# refuses a CPU that is not AMD.  vmrapl needs kvm.ko's symbols only.
intel) want_mods=(kvm) ;;
esac

die() { echo "mkinitramfs: $*" >&2; exit 1; }

[[ -f $moddir/modules.dep ]] || die "$moddir/modules.dep missing (install linux-image for $kver, or set RIG_MODDIR)"
[[ $variant == l2 || -f $ko ]] || die "$ko missing (run 'make KVER=$kver')"
busybox=$(command -v busybox) || die "busybox missing (apt-get install busybox-static)"
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked; install busybox-static"
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
# mktemp made it 0700, and the kernel applies the mode of "." to / at
# unpack: without this, uid 1000 cannot reach /bin or /dev at all.
chmod 0755 "$root"

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc/rig,proc,sys,dev,tmp,root,tests,run}
mkdir -p "$root/lib/modules/$kver"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
	[[ $applet == busybox ]] && continue
	[[ -e $root/bin/$applet ]] || ln -s busybox "$root/bin/$applet"
done

# Resolve the dependency closure of want_mods from modules.dep, emitting
# dependencies before their users (post-order DFS).
declare -A seen=()
order=()
dep_line() { # module name -> "path: deps..."
	local name=$1 re
	re="${name//-/[-_]}"
	grep -E "(^|/)${re}\.ko(\.xz|\.zst|\.gz)?:" "$moddir/modules.dep" | head -n1
}
visit() { # path relative to moddir
	local path=$1 line d
	[[ -n ${seen[$path]:-} ]] && return
	seen[$path]=1
	line=$(grep -E "^${path//+/\\+}:" "$moddir/modules.dep" | head -n1)
	for d in ${line#*:}; do
		visit "$d"
	done
	order+=("$path")
}
[[ $variant == l2 ]] && want_mods=() net_mods=() vhost_mods=()
for m in "${want_mods[@]}"; do
	line=$(dep_line "$m")
	[[ -n $line ]] || die "module $m not found in $moddir/modules.dep"
	visit "${line%%:*}"
done
kvm_order=("${order[@]}")
order=()
for m in "${net_mods[@]}"; do
	line=$(dep_line "$m") || true
	if [[ -z $line ]]; then
		# A kernel built without it (the debug kernel's small config)
		# has no network in rig.mode=prom; the other modes need none.
		grep -Eq "/${m//-/[-_]}\.ko\$" "$moddir/modules.builtin" 2>/dev/null ||
			echo "mkinitramfs: $m neither in modules.dep nor built in: no NIC in rig.mode=prom" >&2
		continue
	fi
	visit "${line%%:*}"
done
net_order=("${order[@]}")
order=()
for m in "${rapl_mods[@]}"; do
	line=$(dep_line "$m") || true
	# Built in, or absent from a small config (the debug kernel's): the
	# rapl variant's tests say what they miss.
	[[ -n $line ]] && visit "${line%%:*}"
done
rapl_order=("${order[@]}")
order=()
for m in "${vhost_mods[@]}"; do
	line=$(dep_line "$m") || true
	[[ -n $line ]] && visit "${line%%:*}"
done
vhost_order=("${order[@]}")

add_module() { # path relative to moddir, list file
	local path=$1 list=$2 src base
	src=$moddir/$path
	base=$(basename "$path")
	case $base in
	*.ko.xz)  xz -dc "$src" > "$root/lib/modules/$kver/${base%.xz}"; base=${base%.xz} ;;
	*.ko.zst) zstd -qdc "$src" > "$root/lib/modules/$kver/${base%.zst}"; base=${base%.zst} ;;
	*.ko.gz)  gzip -dc "$src" > "$root/lib/modules/$kver/${base%.gz}"; base=${base%.gz} ;;
	*.ko)     cp "$src" "$root/lib/modules/$kver/$base" ;;
	*)        die "unexpected module file $path" ;;
	esac
	echo "/lib/modules/$kver/$base" >> "$list"
}
: > "$root/etc/rig/modules"
for path in "${kvm_order[@]}"; do
	add_module "$path" "$root/etc/rig/modules"
done
: > "$root/etc/rig/modules.net"
for path in "${net_order[@]}"; do
	add_module "$path" "$root/etc/rig/modules.net"
done
: > "$root/etc/rig/modules.rapl"
for path in "${rapl_order[@]}"; do
	add_module "$path" "$root/etc/rig/modules.rapl"
done
: > "$root/etc/rig/modules.vhost"
for path in "${vhost_order[@]}"; do
	add_module "$path" "$root/etc/rig/modules.vhost"
done

# A dynamically linked program at DEST in the image, with the shared
# libraries ldd resolves on this host and the dynamic loader, at the same
# paths, so the loader finds them in its default directories.
add_dynamic() { # program, its path in the image
	local bin=$1 dest=$2 libs lib
	libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }') ||
		die "ldd $bin failed"
	for lib in $libs; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	mkdir -p "$root$(dirname "$dest")"
	cp "$bin" "$root$dest"
}

# The QEMU series' functional test (tests/functional/test_x86_64_vmrapl.py,
# which "make qemu" installs beside its binary with QEMU's python/ and
# the tests' qemu_test package) at /qemu-functional, with Debian's
# python3 (3.11 on Debian 12): its standard library (with Debian's compiled modules, so
# that nothing compiles under TCG) less what no test imports, its
# extension modules' libraries, and python3-pycotap, which qemu_test
# imports (selftests/vmrapl/rapl_qemu_functional.c runs it; about 12 MB
# gzipped).
add_functional() { # the functional/ directory of the QEMU build
	local tree=$1 py pyv lib so
	py=$(readlink -f /usr/bin/python3 2>/dev/null) || py=
	pyv=${py##*/}
	if [[ ! -d $tree || ! -x $py || ! -d /usr/lib/$pyv ||
	      ! -d /usr/lib/python3/dist-packages/pycotap ]]; then
		echo "mkinitramfs: no $tree, Debian's python3 or python3-pycotap: rapl_qemu_functional will skip" >&2
		return 0
	fi
	add_dynamic "$py" /usr/bin/python3
	mkdir -p "$root/usr/lib/python3/dist-packages"
	(cd /usr/lib && tar -cf - --exclude="$pyv/test" --exclude="$pyv/idlelib" \
		--exclude="$pyv/tkinter" --exclude="$pyv/turtledemo" \
		--exclude="$pyv/lib2to3" --exclude="$pyv/pydoc_data" \
		--exclude="$pyv/ensurepip" --exclude="$pyv/distutils" \
		--exclude="$pyv/config-*" --exclude="$pyv/site-packages" \
		--exclude="$pyv/dist-packages" --exclude='*/tests' "$pyv") |
		tar -xf - -C "$root/usr/lib"
	cp -a /usr/lib/python3/dist-packages/pycotap "$root/usr/lib/python3/dist-packages/"
	for so in "$root/usr/lib/$pyv"/lib-dynload/*.so; do
		for lib in $(ldd "$so" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
			[[ -e $root$lib ]] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
	mkdir -p "$root/qemu-functional"
	cp -a "$tree/." "$root/qemu-functional/"
}

# What the rig itself runs (not the l2 guest): vmrapl, the tests and the
# programs they drive.
l1_contents() {
	cp "$ko" "$root/vmrapl.ko"
	# The selftests' own module (make testmod), when it was built.
	if [[ -f $fakekvm_ko ]]; then
		cp "$fakekvm_ko" "$root/vr_fakekvm.ko"
	fi
	if [[ -d $tests_dir ]]; then
		find "$tests_dir" -maxdepth 1 -type f -perm -u+x -exec cp {} "$root/tests/" \;
	fi
	# A VM that stays alive all run long (see kvm-hold.c).
	${CC:-cc} -static -O2 -Wall -o "$root/bin/kvm-hold" "$top/selftests/rig/kvm-hold.c"

	# The reference VMM, for the tests and the demo that drive it.
	vmm=$top/build/userspace/vmm/vmrapl-vmm.static
	if [[ -x $vmm ]]; then
		cp "$vmm" "$root/bin/vmrapl-vmm"
	fi
	# The host tools, for selftests/vmrapl/tools.c and limit.c (the
	# exporter only when its static build linked).
	for tool in vmraplctl/vmraplctl exporter/vmrapl-exporter limitd/vmrapl-limitd; do
		if [[ -x $top/build/userspace/$tool.static ]]; then
			cp "$top/build/userspace/$tool.static" "$root/bin/${tool#*/}"
		fi
	done
	# The exporter's static link usually fails (libmicrohttpd pulls in gnutls,
	# whose static archives Debian does not ship): then take the dynamic one.
	exporter=$top/build/userspace/exporter/vmrapl-exporter
	if [[ ! -e $root/bin/vmrapl-exporter && -x $exporter ]]; then
		add_dynamic "$exporter" /bin/vmrapl-exporter
	fi
}
if [[ $variant != l2 ]]; then
	l1_contents
fi

# The rapl variant's perf_matches_powercap (selftests/vmrapl/rapl.c) runs
# perf stat on the power PMU: the binary of Debian's linux-perf
# (scripts/deps.sh), about 34 MB with its libraries, so only there.  That
# package diverts other packages' /usr/bin/perf to perf.wrapper; its own
# file list names the real binary.  Without it the test skips.  The l2
# guest's perf reads its own (virtual) power PMU.
perf=
if [[ $variant == rapl || $variant == intel || $variant == l2 ]]; then
	perf=$(dpkg -L linux-perf 2>/dev/null | grep -E '^/usr/bin/perf(_[0-9.]+)?$' | head -n1) || true
	if [[ -n $perf && -x $perf && $(head -c4 "$perf") == $'\x7fELF' ]]; then
		add_dynamic "$perf" /usr/bin/perf
	else
		echo "mkinitramfs: no perf binary (apt-get install linux-perf): rapl's perf_matches_powercap will skip" >&2
		perf=
	fi
fi
# The l2 guest's other readers of its energy: turbostat (Debian's
# linux-cpupower; the MSRs through /dev/cpu/N/msr) and node_exporter's
# rapl collector (powercap), the binary scripts/deps.sh extracts from
# Debian's prometheus-node-exporter.  Without them rapl_qemu skips those
# checks.
if [[ $variant == l2 ]]; then
	turbostat=$(dpkg -L linux-cpupower 2>/dev/null | grep -E '/s?bin/turbostat$' | head -n1) || true
	if [[ -n $turbostat && -x $turbostat ]]; then
		add_dynamic "$turbostat" /usr/sbin/turbostat
	else
		echo "mkinitramfs: no turbostat (apt-get install linux-cpupower): rapl_qemu's turbostat check will skip" >&2
	fi
	node=$(ls -d "${VMRAPL_CACHE:-/var/cache/vmrapl}"/guest-tools/prometheus-node-exporter_*/usr/bin/prometheus-node-exporter 2>/dev/null | tail -n1) || true
	if [[ -n $node && -x $node ]]; then
		add_dynamic "$node" /usr/bin/node_exporter
	else
		echo "mkinitramfs: no node_exporter (scripts/deps.sh extracts it): rapl_qemu's node_exporter check will skip" >&2
	fi
fi
if [[ -f $top/udev/60-vmrapl.rules ]]; then
	cp "$top/udev/60-vmrapl.rules" "$root/etc/rig/udev.rules"
fi
# Programs the debug variant skips, and why (used by /init only there).
grep -Ev '^[[:space:]]*(#|$)' "$top/selftests/rig/debug.skip" > "$root/etc/rig/debug.skip" 2>/dev/null || true
# What make try (rig.mode=try) shows before its shell.
cp "$top/selftests/rig/try-hint" "$root/etc/rig/try-hint"
echo "$kver" > "$root/etc/rig/kver"
${CC:-cc} -static -O2 -Wall -o "$root/bin/rdmsr" "$top/selftests/rig/rdmsr.c"

# The rapl variant's rapl_qemu.c runs the QEMU of "make qemu" (the one
# that boots this rig, built with the vmrapl patches) inside the rig, on
# a nested guest: this kernel again, with the l2 image built here.  QEMU
# is stripped (81 MB with its symbols, 27 without); of the firmware, the
# BIOS and the option ROMs of a -kernel boot.  Without "make qemu" the
# test skips, and says so.
l2=
if [[ $variant == rapl ]]; then
	kernel=${RIG_KERNEL:-/boot/vmlinuz-$kver}
	qemu=${RIG_QEMU:-$("$top/scripts/qemu.sh" path 2>/dev/null)} || qemu=
	if [[ -n $qemu && -r $kernel ]]; then
		strip -o "$root/qemu.tmp" "$qemu"
		add_dynamic "$root/qemu.tmp" /usr/bin/qemu-system-x86_64
		rm "$root/qemu.tmp"
		mkdir -p "$root/usr/share/qemu-fw" "$root/l2"
		for fw in /usr/share/seabios/bios-256k.bin /usr/share/seabios/bios.bin \
			  /usr/share/qemu/linuxboot_dma.bin /usr/share/qemu/linuxboot.bin \
			  /usr/share/qemu/kvmvapic.bin /usr/share/qemu/pvh.bin; do
			if [[ -r $fw ]]; then
				cp -L "$fw" "$root/usr/share/qemu-fw/"
			fi
		done
		cp "$kernel" "$root/l2/vmlinuz"
		"$0" "$kver" "$root/l2/initrd.gz" l2 > /dev/null
		l2="$(du -h "$root/l2/initrd.gz" | cut -f1) l2 image"
		add_functional "$(dirname "$qemu")/functional"
	else
		echo "mkinitramfs: no QEMU of make qemu or no $kernel: rapl_qemu will skip" >&2
	fi
fi

if [[ $variant == l2 ]]; then
	install -m 0755 "$top/selftests/rig/l2-init" "$root/init"
else
	install -m 0755 "$top/selftests/rig/init" "$root/init"
fi

mkdir -p "$(dirname "$out")"
(cd "$root" && find . -print0 | sort -z | cpio --quiet -o -0 -H newc --owner=0:0) | \
	gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: $out ($(du -h "$out" | cut -f1), modules: $(tr '\n' ' ' < "$root/etc/rig/modules"), tests: $(ls "$root/tests" | wc -l)${perf:+, perf: $perf}${l2:+, QEMU and a $l2})"
