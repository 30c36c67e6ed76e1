#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check-libvirt": an operator's hypervisor, booted in the rig.  A
# Debian 12 root with systemd, Debian's libvirt (libvirt-daemon-system,
# its AppArmor profiles on), Debian's QEMU, and the project's QEMU (that
# of "make qemu") in /usr/local, as an operator who built it would have
# it, boots in the rig's rapl variant (emulated AMD RAPL) from an ext4
# image; vmrapl's packages of VERSION~pre1 are installed in it, and the
# programs of selftests/libvirt run at boot, as the rig's programs do
# (selftests/libvirt/rig-root prints the rig's "###" lines; run.sh
# judges the run as any other):
#
#   deb      the packages on a booted host: the module loaded at boot,
#            the exporter's unit serving; the upgrade to VERSION in place
#   libvirt  domains defined and started with virsh, with vmrapl and
#            without, their names and UUIDs in vmraplctl and the
#            exporter, the guest's own energy, save and restore, destroy
#            and undefine, and what a blocked /dev/vmrapl says
#
# Why an image: the root needs its own systemd as PID 1, udev and a real
# block device for DKMS's and libvirt's state; a 9p or virtiofs root
# needs an initramfs of our own making for Debian's kernel, where an
# ext4 image boots Debian's initramfs as it is.  The image is written
# from the cached root and this run's layer (mke2fs -d, no loop mount),
# and QEMU runs it on a throwaway snapshot.
#
# The root (debootstrap bookworm, deb-test.sh's, with the packages below)
# is made once into $VMRAPL_CACHE/hv-root (make deps, about a minute).
#
# Usage: scripts/libvirt-test.sh            (as root)
#        scripts/libvirt-test.sh --root     make the cached root only
#        scripts/libvirt-test.sh --root-check   exit 0 if it is made
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${VMRAPL_CACHE:-/var/cache/vmrapl}/hv-root
root=$cache/root
version=$(tr -d ' \n' < "$top/VERSION")
old=$version~pre1
out=$top/build/libvirt-test
# What an operator's hypervisor runs, beside what deb-test.sh's root has
# (dkms, Debian's kernel and headers): systemd as init, udev, libvirt
# with the QEMU driver, Debian's QEMU, AppArmor; jq and curl for the
# tests.  No recommends.
packages="systemd-sysv udev dbus libvirt-daemon-system libvirt-clients
	qemu-system-x86 apparmor jq curl"
stamp="packages: $(echo $packages)"

die() { echo "libvirt-test: $*" >&2; exit 1; }

if [[ ${1:-} == --root-check ]]; then
	[[ $(cat "$root/.vmrapl-hv-root" 2>/dev/null) == "$stamp" ]]
	exit
fi
[[ $(id -u) == 0 ]] || die "needs root (chroot, mount)"

# ---- the cached root ----------------------------------------------------
make_root() {
	[[ $(cat "$root/.vmrapl-hv-root" 2>/dev/null) == "$stamp" ]] && return 0
	"$top/scripts/deb-test.sh" --root-check || "$top/scripts/deb-test.sh" --root ||
		die "deb-test.sh's root could not be made"
	local base=${VMRAPL_CACHE:-/var/cache/vmrapl}/deb-root/root
	rm -rf "$root.tmp"
	mkdir -p "$cache"
	echo "libvirt-test: the hypervisor root, from $base, into $root (once)"
	cp -a "$base" "$root.tmp" || die "copying $base failed"
	rm -f "$root.tmp/.vmrapl-deb-root"
	cp /etc/resolv.conf "$root.tmp/etc/resolv.conf"
	# shellcheck disable=SC2086 # the package list
	unshare --mount --propagation private /bin/bash -c '
		set -e
		mount -t proc proc "$1/proc"
		mount --bind /dev "$1/dev"
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
			chroot "$1" apt-get update -q
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
			chroot "$1" apt-get install -y -q --no-install-recommends ${@:2}
		chroot "$1" apt-get clean
	' hv-root "$root.tmp" $packages > "$cache/apt.log" 2>&1 ||
		die "apt-get install in the root failed ($cache/apt.log)"
	echo "$stamp" > "$root.tmp/.vmrapl-hv-root"
	rm -rf "$root"
	mv "$root.tmp" "$root"
}
make_root
[[ ${1:-} == --root ]] && exit 0

# ---- this run's layer ---------------------------------------------------
qemu=$("$top/scripts/qemu.sh" path) || die "no QEMU of make qemu (scripts/qemu.sh)"
kver=$(ls "$root/lib/modules" | sort -V | tail -n1)
mkdir -p "$out"
rm -rf "$out/new" "$out/old"
# The packages of this tree, as VERSION and as VERSION~pre1 (deb-test.sh
# checks lintian on them; the image needs them only), a core each.
echo "libvirt-test: the packages of $version and $old"
env DEB_BUILD_OPTIONS="nocheck noautodbgsym" LINTIAN=no "$top/scripts/deb.sh" "$out/new" \
	> "$out/deb-new.log" 2>&1 &
newpid=$!
env DEB_BUILD_OPTIONS="nocheck noautodbgsym" LINTIAN=no DEB_VERSION="$old" \
	"$top/scripts/deb.sh" "$out/old" > "$out/deb-old.log" 2>&1 ||
	die "the $old packages did not build ($out/deb-old.log)"
wait "$newpid" || die "the $version packages did not build ($out/deb-new.log)"
rm -f "$out"/*/*dbgsym*
# The nested guests' image: the root's own kernel, with the rig's l2
# initramfs (selftests/rig/l2-init) of its modules.
RIG_MODDIR=$root/lib/modules/$kver "$top/selftests/rig/mkinitramfs.sh" "$kver" \
	"$out/l2-initrd.gz" l2 > "$out/l2.log" 2>&1 ||
	die "the nested guest's initramfs ($out/l2.log)"

work=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
up=$work/upper
mkdir -p "$up" "$work/work" "$work/merged"
mkdir -p "$up/root/rig/debs" "$up/root/rig/tests" "$up/usr/local/bin" \
	"$up/var/lib/libvirt/images" "$up/etc/systemd/system"
cp "$out"/new/*_"$version"_*.deb "$out"/old/*_"$old"_*.deb "$up/root/rig/debs/"
echo "$version" > "$up/root/rig/version"
install -m 0644 "$top/selftests/libvirt/tap.sh" "$up/root/rig/tap.sh"
install -m 0755 "$top/selftests/libvirt/rig-root" "$up/root/rig/rig-root"
install -m 0755 "$top/selftests/libvirt/deb" "$top/selftests/libvirt/libvirt" \
	"$up/root/rig/tests/"
install -m 0644 "$top/selftests/libvirt/rig-test.service" "$up/etc/systemd/system/"
# The project's QEMU where "make install" of a QEMU build puts it; its
# firmware is Debian's (qemu-system-data, seabios, ipxe-qemu), on the
# firmware path scripts/qemu.sh configures, Debian's.
strip -o "$up/usr/local/bin/qemu-system-x86_64" "$qemu"
cp "$root/boot/vmlinuz-$kver" "$up/var/lib/libvirt/images/l2-vmlinuz"
cp "$out/l2-initrd.gz" "$up/var/lib/libvirt/images/l2-initrd.gz"
echo "/dev/vda / ext4 defaults 0 1" > "$up/etc/fstab"
echo hypervisor > "$up/etc/hostname"

# shellcheck disable=SC2016 # expanded by the inner shell
unshare --mount --propagation private /bin/bash -c '
	set -e
	root=$1 work=$2 out=$3 old=$4 new=$5
	m=$work/merged
	mount -t overlay overlay -o "lowerdir=$root,upperdir=$work/upper,workdir=$work/work" "$m"
	mount -t proc proc "$m/proc"
	mount --bind /dev "$m/dev"
	mount -t tmpfs tmpfs "$m/tmp"
	run() { chroot "$m" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
	# The older packages, as an operator had them before this upgrade:
	# DKMS builds the module for the root kernel here, at native speed.
	run sh -c "dpkg -i /root/rig/debs/*_${old}_*.deb"
	# vmrapl-dkms upgraded here too: DKMS takes about 4 minutes under
	# TCG (deb-test.sh checks that upgrade natively), the tools and the
	# library in the booted root, where systemd restarts the exporter.
	run sh -c "dpkg -i /root/rig/debs/vmrapl-dkms_${new}_all.deb"
	run systemctl enable rig-test.service
	# The console carries the tests, and a getty on it would hang them up.
	run systemctl mask serial-getty@ttyS0.service
	# What an operator adds for vmrapl under libvirt
	# (Documentation/operations.rst, "Under libvirt").
	run /root/rig/tests/libvirt --setup
	umount "$m/tmp" "$m/dev" "$m/proc"
	rm -f "$out/root.img"
	mke2fs -q -t ext4 -d "$m" -L hypervisor "$out/root.img" 6G
' libvirt-test "$root" "$work" "$out" "$old" "$version" > "$out/image.log" 2>&1 ||
	die "the image could not be made ($out/image.log)"
cp "$root/boot/vmlinuz-$kver" "$out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$out/initrd.img"
cp "$root/boot/System.map-$kver" "$out/System.map-$kver"
rm -rf "$work"

echo "libvirt-test: booting the hypervisor ($kver) in the rig's rapl variant"
RIG_ROOT_IMAGE=$out/root.img RIG_KERNEL=$out/vmlinuz RIG_INITRD=$out/initrd.img \
	RIG_TAG=libvirt RIG_EXPECTED="deb libvirt" \
	"$top/selftests/rig/run.sh" "$kver" --variant rapl
