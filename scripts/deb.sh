#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make deb": vmrapl's Debian packages (debian/), built from the files git
# tracks, in build/deb/vmrapl-<version>/, with dpkg-buildpackage -us -uc -b:
#
#   build/deb/vmrapl-dkms_<version>_all.deb        the module's source, DKMS
#   build/deb/vmrapl-tools_<version>_amd64.deb     vmraplctl, the exporter
#   build/deb/libvmrapl1_<version>_amd64.deb       the shared library
#   build/deb/libvmrapl-dev_<version>_amd64.deb    header, .a, pkg-config
#
# The version is VERSION's (a native package: no Debian revision), and
# debian/changelog is written from it here, so that the one version is
# written in one place.  DEB_VERSION=<v> builds the same tree as version
# <v> instead (its VERSION file too): the upgrade test builds an older
# one.  Then lintian checks the packages (LINTIAN=no skips it); a tag of
# severity error or warning fails, the overrides in debian/*.lintian-
# overrides say why each one kept is.
#
# Usage: scripts/deb.sh [OUTDIR]   (default build/deb)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/deb}
version=${DEB_VERSION:-$(tr -d ' \n' < "$top/VERSION")}
die() { echo "deb: $*" >&2; exit 1; }

for t in dpkg-buildpackage dh dh_dkms; do
	command -v "$t" > /dev/null ||
		die "$t missing (apt-get install dpkg-dev debhelper dh-dkms; scripts/deps.sh)"
done

src=$out/vmrapl-$version
rm -rf "$src"
mkdir -p "$src"
# The tracked files only, as a release tarball would have them.
git -C "$top" ls-files -z | (cd "$top" && xargs -0 cp --parents -t "$src")
echo "$version" > "$src/VERSION"
when=$(git -C "$top" log -1 --format=%aD 2>/dev/null || date -R)
what=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
cat > "$src/debian/changelog" <<CHANGELOG
vmrapl ($version) unstable; urgency=medium

  * Built from the vmrapl tree at $what (VERSION $version).

 -- Seed 0c8893cb maintainers <maintainers@users.noreply.a-seed-0c8893cb.example>  $when
CHANGELOG

(cd "$src" && dpkg-buildpackage -us -uc -b) > "$out/build-$version.log" 2>&1 ||
	{ tail -n 40 "$out/build-$version.log" >&2; die "dpkg-buildpackage failed ($out/build-$version.log)"; }
changes=$out/vmrapl_${version}_amd64.changes
[[ -f $changes ]] || die "no $changes"
ls "$out"/*_"$version"_*.deb

if [[ ${LINTIAN:-yes} != no ]]; then
	command -v lintian > /dev/null || die "lintian missing (apt-get install lintian)"
	lintian --info --display-info --fail-on error,warning "$changes"
fi
