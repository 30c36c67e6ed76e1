#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build vmrapl through DKMS for each given kernel without touching the
# system's DKMS state: source, dkms and install trees all live in a
# temporary directory, and module signing is switched off so dkms does not
# create a MOK key pair under /var/lib/dkms.
#
# Usage: scripts/dkms-test.sh VERSION KVER...
# Builds for every KVER but the newest with "dkms build"; the newest gets
# what a kernel upgrade gets, "dkms autoinstall", which must build and
# install it (AUTOINSTALL).  Prints "ok N ..." / "not ok N ..." lines (TAP)
# and exits non-zero if any failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
ver=${1:?usage: dkms-test.sh VERSION KVER...}
shift
kvers=("$@")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-dkms.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src/vmrapl-$ver
mkdir -p "$src" "$tmp/tree" "$tmp/install"
cp -a "$top/Kbuild" "$top/Makefile" "$top/dkms.conf" "$top/VERSION" \
	"$top/kmod" "$top/uapi" "$src/"
sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$ver\"/" "$src/dkms.conf"
# Drop any objects a developer built in the source tree.
find "$src" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete

dkms_opts=(--sourcetree "$tmp/src" --dkmstree "$tmp/tree" --installtree "$tmp/install")
# The install tree stands for /lib/modules: DKMS 3.x (trixie) looks for
# each kernel's headers there, as <tree>/<KVER>/build.
for k in "${kvers[@]}"; do
	mkdir -p "$tmp/install/$k"
	[[ -e /lib/modules/$k/build ]] && ln -s "/lib/modules/$k/build" "$tmp/install/$k/build"
done
export sign_file=/nonexistent/vmrapl-dkms-test-no-signing

echo "TAP version 13"
echo "1..${#kvers[@]}"
newest=${kvers[${#kvers[@]}-1]}
n=0 rc=0
if ! dkms add -m vmrapl -v "$ver" "${dkms_opts[@]}" > "$tmp/add.log" 2>&1; then
	cat "$tmp/add.log"
	for k in "${kvers[@]}"; do
		n=$((n + 1)); echo "not ok $n dkms build $k # dkms add failed"
	done
	exit 1
fi
for k in "${kvers[@]}"; do
	n=$((n + 1))
	log=$tmp/build-$k.log
	if [[ $k == "$newest" && ${#kvers[@]} -gt 0 ]]; then
		# A newly installed kernel: autoinstall builds and installs.
		mkdir -p "$tmp/install/$k"
		if dkms autoinstall -k "$k" "${dkms_opts[@]}" > "$log" 2>&1 &&
		   ko=$(ls "$tmp/install/$k"/updates/dkms/vmrapl.ko* 2>/dev/null | head -n1) &&
		   [[ -n $ko ]]; then
			echo "ok $n dkms autoinstall $k, as after a kernel upgrade ($(basename "$ko"))"
		else
			sed 's/^/# /' "$log"
			echo "not ok $n dkms autoinstall $k"
			rc=1
		fi
		continue
	fi
	if dkms build -m vmrapl -v "$ver" -k "$k" "${dkms_opts[@]}" > "$log" 2>&1 &&
	   ko=$(ls "$tmp/tree/vmrapl/$ver/$k"/*/module/vmrapl.ko* 2>/dev/null | head -n1) &&
	   [[ -n $ko ]]; then
		echo "ok $n dkms build $k ($(basename "$ko"))"
	else
		sed 's/^/# /' "$log"
		for f in "$tmp/tree/vmrapl/$ver/build/make.log"; do
			[[ -f $f ]] && sed 's/^/# make.log: /' "$f" | tail -n 40
		done
		echo "not ok $n dkms build $k"
		rc=1
	fi
done
exit $rc
