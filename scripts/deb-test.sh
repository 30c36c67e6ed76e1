#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make deb-test": vmrapl's Debian packages (scripts/deb.sh) in a clean
# Debian 12 root, as an operator installs, upgrades and purges them.
# Prints TAP.
#
# The root is a debootstrap of bookworm (minbase) with what the packages
# depend on, Debian's kernel and its headers (linux-image-amd64,
# linux-headers-amd64), cached in
# $VMRAPL_CACHE/deb-root (made once, a few minutes; the machine's own apt
# sources are not touched).  Each run mounts a throwaway overlay on it,
# in a private mount namespace, so the cached root never changes and
# nothing stays mounted.  The packages are built twice: this tree as
# VERSION, and as VERSION~pre1, the older version an upgrade starts from.
#
#   build          both versions build; lintian: no error, no warning
#   install        the older packages install (dpkg -i), all configured
#   dkms           DKMS built and installed the module for the root's
#                  kernel: dkms status, the .ko, its version
#   unit           the exporter's and vmrapl-limitd's units are enabled,
#                  as Debian enables its prometheus exporters (not
#                  started: no systemd here)
#   upgrade        the packages of VERSION over them: DKMS has only the
#                  new version, built and installed; the old source gone
#   purge          every file the packages installed is gone: the root's
#                  file list equals the one before the install; DKMS has
#                  no vmrapl; no unit enabled
#   no headers     without kernel headers, vmrapl-dkms still installs and
#                  is configured, and DKMS says why it built nothing
#
# Usage: scripts/deb-test.sh            (as root)
#        scripts/deb-test.sh --root     make the cached root only
#        scripts/deb-test.sh --root-check   exit 0 if it is made
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${VMRAPL_CACHE:-/var/cache/vmrapl}/deb-root
root=$cache/root
mirror=${VMRAPL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
version=$(tr -d ' \n' < "$top/VERSION")
old=$version~pre1
out=$top/build/deb-test

if [[ ${1:-} == --root-check ]]; then
	[[ -f $root/.vmrapl-deb-root ]]
	exit
fi
[[ ${1:-} == --root ]] || echo "TAP version 13"
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
check() { # name command...: ok when the command succeeds
	local name=$1
	shift
	if "$@" > "$out/step.log" 2>&1; then
		ok "$name"
	else
		notok "$name"
		sed 's/^/# /' "$out/step.log" | tail -n 25
	fi
}
bail() { echo "Bail out! $*"; exit 1; }

[[ $(id -u) == 0 ]] || bail "needs root (debootstrap, chroot, mount)"
mkdir -p "$out"

# ---- the cached root ----------------------------------------------------
make_root() {
	[[ -f $root/.vmrapl-deb-root ]] && return 0
	command -v debootstrap > /dev/null || bail "debootstrap missing (scripts/deps.sh)"
	rm -rf "$root.tmp"
	mkdir -p "$cache"
	echo "# debootstrap bookworm (minbase) into $root (once)"
	debootstrap --variant=minbase bookworm "$root.tmp" "$mirror" \
		> "$cache/debootstrap.log" 2>&1 ||
		bail "debootstrap failed ($cache/debootstrap.log)"
	# What the packages depend on, Debian's kernel and the headers DKMS
	# builds against; no recommends, as a minimal server would have it.
	chroot "$root.tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends dkms libmicrohttpd12 linux-image-amd64 \
		linux-headers-amd64 \
		> "$cache/apt.log" 2>&1 || bail "apt-get install in the root failed ($cache/apt.log)"
	chroot "$root.tmp" apt-get clean
	touch "$root.tmp/.vmrapl-deb-root"
	rm -rf "$root"
	mv "$root.tmp" "$root"
}
make_root
[[ ${1:-} == --root ]] && exit 0

# ---- the packages ---------------------------------------------------------
# The userspace unit tests are make check's (nocheck), the debug symbols
# nobody here reads (noautodbgsym); lintian checks the packages of
# VERSION, the older ones are the same tree.  Both at once, a core each.
check "build: $version (lintian clean) and $old" \
	env DEB_BUILD_OPTIONS="nocheck noautodbgsym" bash -c "
		'$top/scripts/deb.sh' '$out/new' & new=\$!
		DEB_VERSION='$old' LINTIAN=no '$top/scripts/deb.sh' '$out/old'; rc=\$?
		wait \$new && [ \$rc = 0 ]"
debs() { # dir version
	ls "$1"/vmrapl-dkms_"$2"_all.deb "$1"/vmrapl-tools_"$2"_amd64.deb \
	   "$1"/libvmrapl1_"$2"_amd64.deb "$1"/libvmrapl-dev_"$2"_amd64.deb
}
debs "$out/new" "$version" > /dev/null 2>&1 && debs "$out/old" "$old" > /dev/null 2>&1 ||
	bail "the packages did not build"

# ---- the scenario, in an overlay, in a private mount namespace ----------
# Everything below runs in one chroot session per step (in_root), on the
# same overlay.  A step prints what it checked; its exit says pass.
work=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/upper" "$work/work" "$work/merged"
mkdir -p "$work/upper/debs"
cp "$out"/new/*_"$version"_*.deb "$out"/old/*_"$old"_*.deb "$work/upper/debs/"
rm -f "$work"/upper/debs/*dbgsym*

# The root's files (no virtual file systems, no dpkg/apt/dkms state,
# logs or caches): what purge must bring back.
cat > "$work/upper/files.sh" <<'EOF'
find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp \
	-o -path /debs -o -path /var/lib/dpkg -o -path /var/log \
	-o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dkms \
	-o -path /var/lib/systemd/deb-systemd-helper-enabled \
	-o -path /var/lib/systemd/deb-systemd-helper-masked \
	-o -path /run -o -name '*.files.txt' -o -path /files.sh \) -prune \
	-o -print | sort
EOF

cat > "$work/upper/scenario.sh" <<EOF
#!/bin/bash
# One step of deb-test.sh inside the root: \$1 names it.
set -u
new=$version old=$old
kver=\$(ls /lib/modules | sort -V | tail -n1)
pkgs="vmrapl-dkms vmrapl-tools libvmrapl1 libvmrapl-dev"
configured() { for p in \$pkgs; do
	[ "\$(dpkg-query -W -f='\${db:Status-Status} \${Version}' \$p 2>/dev/null)" = "installed \$1" ] ||
		{ echo "\$p: \$(dpkg-query -W -f='\${db:Status-Abbrev} \${Version}' \$p 2>&1)"; return 1; }
	done; }
ko() { ls /lib/modules/\$kver/updates/dkms/vmrapl.ko* 2>/dev/null | head -n1; }
case \$1 in
files)	bash /files.sh > /\$2.files.txt ;;
install)
	dpkg -i /debs/*_\${old}_*.deb || exit 1
	configured "\$old" ;;
dkms)
	dkms status -m vmrapl
	dkms status -m vmrapl | grep -qx "vmrapl/\$old, \$kver, x86_64: installed" || exit 1
	[ -n "\$(ko)" ] || { echo "no vmrapl.ko in /lib/modules/\$kver/updates/dkms"; exit 1; }
	v=\$(modinfo -F version "\$(ko)"); echo "modinfo: \$v"
	[ "\$v" = "\$old" ] ;;
unit)
	ls -l /etc/systemd/system/multi-user.target.wants/vmrapl-exporter.service \
		/etc/systemd/system/multi-user.target.wants/vmrapl-limitd.service ;;
upgrade)
	dpkg -i /debs/*_\${new}_*.deb || exit 1
	configured "\$new" || exit 1
	dkms status -m vmrapl
	[ "\$(dkms status -m vmrapl)" = "vmrapl/\$new, \$kver, x86_64: installed" ] || exit 1
	[ ! -e /usr/src/vmrapl-\$old ] || { echo "/usr/src/vmrapl-\$old left"; exit 1; }
	v=\$(modinfo -F version "\$(ko)"); echo "modinfo: \$v"
	[ "\$v" = "\$new" ] ;;
purge)
	dpkg --purge \$pkgs || exit 1
	bash /files.sh > /after.files.txt
	diff /before.files.txt /after.files.txt || exit 1
	if [ -n "\$(dkms status -m vmrapl)" ]; then dkms status -m vmrapl; exit 1; fi
	! ls /etc/systemd/system/*/vmrapl-exporter.service \
		/etc/systemd/system/*/vmrapl-limitd.service 2>/dev/null ;;
noheaders)
	dpkg --purge \$(dpkg-query -W -f='\${Package}\n' 'linux-headers-*' 'linux-kbuild-*') \
		> /dev/null || exit 1
	dpkg -i /debs/vmrapl-dkms_\${new}_all.deb 2>&1 | tee /noheaders.log
	[ "\$(dpkg-query -W -f='\${db:Status-Status}' vmrapl-dkms)" = installed ] || exit 1
	grep -i "header" /noheaders.log ;;
esac
EOF
chmod +x "$work/upper/scenario.sh"

# shellcheck disable=SC2016 # expanded by the inner shell
unshare --mount --propagation private /bin/bash -c '
	set -e
	root=$1 work=$2 out=$3 old=$4 new=$5
	mount -t overlay overlay \
		-o "lowerdir=$root,upperdir=$work/upper,workdir=$work/work" "$work/merged"
	mount -t proc proc "$work/merged/proc"
	mount --bind /dev "$work/merged/dev"
	mount -t tmpfs tmpfs "$work/merged/tmp"
	in_root() {
		chroot "$work/merged" /usr/bin/env -i \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			DEBIAN_FRONTEND=noninteractive /scenario.sh "$@"
	}
	step() { # name scenario-step
		if in_root "$2" > "$out/step-$2.log" 2>&1; then
			echo "PASS $1"
		else
			echo "FAIL $1"
			sed "s/^/# /" "$out/step-$2.log" | tail -n 25
		fi
	}
	in_root files before
	step "install: the $old packages, all configured" install
	step "dkms: the module built and installed for the root'"'"'s kernel, version $old" dkms
	step "unit: vmrapl-exporter.service and vmrapl-limitd.service enabled" unit
	step "upgrade to $new: DKMS has only $new, built and installed; the old source gone" upgrade
	step "purge: the root'"'"'s files as before the install; no DKMS entry; no unit" purge
	step "no headers: vmrapl-dkms installs, configured; DKMS says why it built nothing" noheaders
' deb-test "$root" "$work" "$out" "$old" "$version" > "$out/scenario.log" 2>&1
while IFS= read -r line; do
	case $line in
	"PASS "*) ok "${line#PASS }" ;;
	"FAIL "*) notok "${line#FAIL }" ;;
	"# "*) echo "$line" ;;
	*) echo "# $line" ;;
	esac
done < "$out/scenario.log"
[[ $n -ge 7 ]] || { notok "the scenario ran to its end ($out/scenario.log)"; }
echo "1..$n"
[[ $failed == 0 ]]
