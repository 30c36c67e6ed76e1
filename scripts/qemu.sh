#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make qemu": build QEMU 10.0.2 (x86_64-softmmu only) with the project's
# patch series, userspace/qemu/patches/*.patch (0001-0002: the emulated AMD
# RAPL counters of the rig's rapl variant; 0003-0008: -accel
# kvm,vmrapl=on, Documentation/qemu.rst; 0009: a TCG fix that the rig's
# nested guests need; 0010: the emulated counters' update interval and a
# package C-state entry delay; 0011: Intel's RAPL registers from the same
# model on an Intel CPU model, the rig's intel variant; 0012: the unit of
# Intel server guests, whose DRAM counter is read in 2^-16 J; 0013: APERF
# and MPERF from the model, rapl-core-mhz; 0014: the registers turbostat
# reads beside Intel's RAPL; 0015: the model with hotplug, MTTCG only, no
# migration; 0016: vmrapl-domains, migrated; 0017: QEMU_VMRAPL, for
# libvirt; 0018: vCPUs keyed by APIC ID; 0019: the amd-rapl CPUID
# feature; 0020: the vmrapl properties only with libvmrapl; 0021: a fix to
# QEMU's RAPL helper backend after hotplug; 0022: rapl-backend=helper|vmrapl;
# 0023: the functional test; 0024: vmrapl's state in vmrapl.c, the MSR
# filter and topology shared with the helper backend; 0025: amd-rapl's
# default after -cpu's properties; 0026: a QEMU that cannot list vhost's
# workers starts; 0027: the guest's power limit writes go to vmrapl), and
# cache the binary outside the checkout:
#
#   $VMRAPL_CACHE/qemu/<version>-<hash>/qemu-system-x86_64
#
# <hash> covers the patches, libvmrapl's source and headers (libvmrapl.c,
# libvmrapl.h, uapi/linux/vmrapl.h) and this script's build recipe, so a
# rerun with none of them changed is instant, and CI rebuilds only when
# one of them does.
#
# It is configured with --enable-vmrapl: libvmrapl is built first, with
# the tree's userspace/Makefile ("lib"), into a staging prefix inside the
# build directory that holds libvmrapl.a, libvmrapl.h, linux/vmrapl.h and
# a vmrapl.pc pointing there, and no libvmrapl.so; QEMU's meson finds it
# through PKG_CONFIG_PATH, so the binary links libvmrapl statically and
# runs where no libvmrapl.so is installed (the rig's initramfs).
#
# It is configured with --enable-plugins (TCG plugins; QEMU 10 would enable
# them by default when gmodule-2.0 is found, the flag makes a build without
# them fail instead of silently lacking them).  The plugin API header,
# include/qemu/qemu-plugin.h of that source, is installed next to the
# binary, and "plugin" builds the project's own instruction-counting plugin,
# userspace/qemu/plugins/vr-icount.c, against it (the rig's icount variant,
# Documentation/testing.rst):
#
#   $VMRAPL_CACHE/qemu/<version>-<hash>/include/qemu-plugin.h
#   $VMRAPL_CACHE/qemu/<version>-<hash>/plugins/vr-icount-<srchash>.so
#
# <srchash> covers the plugin's source and compiler flags only, so editing
# the plugin rebuilds it in a second, not QEMU.
#
# With the binary, the series' functional test and what it imports (the
# source's python/qemu and tests/functional/qemu_test), which the rig's
# rapl variant runs against the module
# (selftests/vmrapl/rapl_qemu_functional.c):
#
#   $VMRAPL_CACHE/qemu/<version>-<hash>/functional/{python,tests/functional}
#
# QEMU_VMRAPL_LIB=no: the same series configured --disable-vmrapl (no
# libvmrapl), as a distribution without the library would build it, in a
# directory of its own (the flags are in <hash>): .ci/run checks that its
# accelerator has no vmrapl properties (scripts/qemu-model-test.py).
#
# Usage: scripts/qemu.sh [build]   build unless cached, print the binary
#        scripts/qemu.sh path      print the cached binary; exit 1 if none
#        scripts/qemu.sh plugin    build the vr-icount plugin unless cached
#                                  (needs the binary), print the .so
#        scripts/qemu.sh firmware  print the -L flags for Debian's firmware
#        scripts/qemu.sh key       print <version>-<hash>
#
# Where things come from (Debian 12):
#   - The source is Debian's bookworm-backports QEMU: its orig tarball only
#     (qemu_10.0.2+ds.orig.tar.xz; the .dsc and debian.tar.xz are not
#     needed), its sha256 checked against the Sources index.
#   - Build tools from bookworm itself are in scripts/deps.sh's list.
#     meson >= 1.5 and python3-pycotap exist only in bookworm-backports
#     (bookworm's meson is 1.0): this step installs those two, and only
#     those, from that suite.
#   - Every apt command here uses a private configuration: a sources file,
#     lists and archive cache of its own under $VMRAPL_CACHE/qemu/apt
#     (Dir::Etc::SourceList, Dir::Etc::SourceParts, Dir::State::Lists,
#     Dir::Cache).  The machine's own apt sources are never touched, and
#     its apt-get update never sees backports, so nothing else on the
#     machine is upgraded from there.
#   - The +ds tarball has no edk2 firmware blobs; the build does not
#     unpack them (meson.build's unpack_edk2_blobs forced false) and runs
#     with Debian's firmware files instead (see "firmware").
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
version=10.0.2
srcpkg=qemu
tarball=qemu_${version}+ds.orig.tar.xz
mirror=${VMRAPL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${VMRAPL_CACHE:-/var/cache/vmrapl}/qemu
patchdir=$top/userspace/qemu/patches
# Debian's firmware path (its qemu-system-data, seabios and ipxe-qemu), as
# Debian's own QEMU has it: the binary boots with them wherever it is
# installed (Documentation/operations.rst, "Under libvirt").
configure_flags=(--target-list=x86_64-softmmu --enable-kvm --enable-tcg
	--enable-slirp --enable-plugins --enable-vmrapl --disable-docs
	--disable-install-blobs
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu)
# What QEMU compiles and links of libvmrapl (part of the cache key).
vmrapl_srcs=("$top/userspace/lib/libvmrapl.c" "$top/userspace/lib/libvmrapl.h"
	"$top/uapi/linux/vmrapl.h")
if [[ ${QEMU_VMRAPL_LIB:-yes} == no ]]; then
	configure_flags=("${configure_flags[@]/--enable-vmrapl/--disable-vmrapl}")
fi
firmware_flags=(-L /usr/share/qemu -L /usr/share/seabios -L /usr/lib/ipxe/qemu)
# QEMU_NEXT=1: the newest release that Debian's sid or trixie-backports
# lists and the mirror serves (resolved by "build", kept in next.version
# for "path" and "key"), with the series, where a patch of
# patches/next/ replaces the one of the same number (that tree differs
# there), and without Rust.
next=${QEMU_NEXT:-0}
if [[ $next == 1 ]]; then
	version=$(cat "$cache/next.version" 2>/dev/null) || version=unresolved
	tarball=qemu_${version}+ds.orig.tar.xz
	configure_flags+=(--disable-rust)
fi
series() { # the patches applied, in order
	local p n o
	for p in "$patchdir"/*.patch; do
		[[ -e $p ]] || continue
		n=$(basename "$p")
		o=
		if [[ $next == 1 ]]; then
			o=$(compgen -G "$patchdir/next/${n%%-*}-*.patch" | head -n1) || true
		fi
		echo "${o:-$p}"
	done
}

die() { echo "qemu.sh: $*" >&2; exit 1; }

key() {
	local h
	h=$({
		series | while read -r p; do cat "$p"; done
		cat "${vmrapl_srcs[@]}"
		echo "${configure_flags[*]}"
		echo "recipe 4"
	} | sha256sum | cut -c1-16)
	echo "$version-$h"
}

dest=$cache/$(key)
bin=$dest/qemu-system-x86_64

plugin_src=$top/userspace/qemu/plugins/vr-icount.c
plugin_cflags=(-O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 -fPIC -shared)

# The plugin, built against the header installed with the binary.
build_plugin() {
	local h so
	[[ -x $bin && -f $dest/include/qemu-plugin.h ]] ||
		die "$bin (with include/qemu-plugin.h) not built (make qemu)"
	h=$({ cat "$plugin_src"; echo "${plugin_cflags[*]}"; } | sha256sum | cut -c1-16)
	so=$dest/plugins/vr-icount-$h.so
	if [[ ! -f $so ]]; then
		mkdir -p "$dest/plugins"
		# shellcheck disable=SC2046 # pkg-config prints several flags
		cc "${plugin_cflags[@]}" -I"$dest/include" $(pkg-config --cflags glib-2.0) \
			-o "$so.tmp" "$plugin_src" || die "vr-icount plugin build failed"
		mv "$so.tmp" "$so"
		echo "qemu.sh: built $so" >&2
	fi
	echo "$so"
}

case ${1:-build} in
path)
	[[ -x $bin ]] || { echo "qemu.sh: $bin not built (make qemu)" >&2; exit 1; }
	echo "$bin"
	exit 0 ;;
plugin)
	build_plugin
	exit 0 ;;
firmware)
	echo "${firmware_flags[*]}"
	exit 0 ;;
key)
	key
	exit 0 ;;
build) ;;
*) die "unknown command $1" ;;
esac

# ---- QEMU_NEXT: which release ----------------------------------------
# Newest first, the first whose orig tarball the mirror serves (it may
# list a version whose files it does not carry).  Sets version, tarball,
# want_sha and dir, and the destination.
if [[ $next == 1 ]]; then
	naptdir=$cache/apt-next
	mkdir -p "$naptdir/lists/partial" "$naptdir/cache/archives/partial" "$naptdir/none.d"
	for suite in sid trixie-backports; do
		echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main"
	done > "$naptdir/sources.list"
	napt=(-o "Dir::Etc::SourceList=$naptdir/sources.list"
		-o "Dir::Etc::SourceParts=$naptdir/none.d"
		-o "Dir::State::Lists=$naptdir/lists" -o "Dir::Cache=$naptdir/cache")
	apt-get "${napt[@]}" update -q >&2 || die "apt-get update (sid, trixie-backports sources) failed"
	want_sha=
	# One line per upstream version (its Debian revisions share a tarball).
	for u in $(apt-cache "${napt[@]}" showsrc "$srcpkg" |
		   awk '/^Version:/ { v = $2; sub(/^[0-9]+:/, "", v); sub(/-[^-]*$/, "", v); print v }' |
		   sort -uVr); do
		t=qemu_$u.orig.tar.xz
		sha=$(apt-cache "${napt[@]}" showsrc "$srcpkg" | awk -v f="$t" '
			/^Checksums-Sha256:/ { on = 1; next }
			/^[^ ]/ { on = 0 }
			on && $3 == f && !done { print $1; done = 1 }')
		[[ -n $sha ]] || continue
		d=$(apt-cache "${napt[@]}" showsrc "$srcpkg" | awk -v f="$t" '
			/^Package:/ { d = ""; hit = 0 }
			/^Directory:/ { d = $2 }
			$NF == f { hit = 1 }
			hit && d != "" && !done { print d; done = 1 }')
		d=${d:-pool/main/q/qemu}
		if curl -fsI -o /dev/null "$mirror/$d/$t"; then
			version=${u%+ds}
			tarball=$t
			want_sha=$sha
			dir=$d
			break
		fi
		echo "qemu.sh: $t is listed but $mirror does not serve it: skipped" >&2
	done
	[[ -n $want_sha ]] || die "no QEMU release of sid or trixie-backports can be downloaded"
	echo "$version" > "$cache/next.version"
	echo "qemu.sh: QEMU_NEXT: $version" >&2
	dest=$cache/$(key)
	bin=$dest/qemu-system-x86_64
fi

if [[ -x $bin ]]; then
	echo "qemu.sh: cached: $bin" >&2
	echo "$bin"
	exit 0
fi

# Two builds at once (.ci/run's set-up builds this QEMU and the one without
# libvmrapl side by side) share the apt lists and the tarball: one fetches
# while the other waits.
mkdir -p "$cache"
exec 9> "$cache/fetch.lock"
flock 9
# ---- private apt configuration (never the machine's sources) ----------
aptdir=$cache/apt
mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$aptdir/none.d"
kr=/usr/share/keyrings/debian-archive-keyring.gpg
cat > "$aptdir/sources.list" <<EOF
deb [signed-by=$kr] $mirror bookworm main
deb [signed-by=$kr] $mirror bookworm-backports main
deb-src [signed-by=$kr] $mirror bookworm-backports main
EOF
apt_opts=(-o "Dir::Etc::SourceList=$aptdir/sources.list"
	-o "Dir::Etc::SourceParts=$aptdir/none.d"
	-o "Dir::State::Lists=$aptdir/lists"
	-o "Dir::Cache=$aptdir/cache")
papt_get() { apt-get "${apt_opts[@]}" "$@"; }
papt_cache() { apt-cache "${apt_opts[@]}" "$@"; }

meson_ok() {
	local v
	v=$(/usr/bin/python3 -c 'import mesonbuild.coredata as c; print(c.version)' 2>/dev/null) || return 1
	dpkg --compare-versions "$v" ge 1.5
}
pycotap_ok() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' python3-pycotap 2>/dev/null) == installed ]]
}

updated=0
papt_update() {
	[[ $updated == 1 ]] && return 0
	papt_get update -q >&2
	updated=1
}
if ! meson_ok || ! pycotap_ok; then
	[[ $(id -u) == 0 ]] || die "need root to install meson and python3-pycotap from bookworm-backports"
	papt_update
	# pkg/suite: these two from backports, their dependencies from bookworm
	DEBIAN_FRONTEND=noninteractive papt_get install -y -q --no-install-recommends \
		meson/bookworm-backports python3-pycotap/bookworm-backports >&2
	meson_ok || die "meson >= 1.5 still missing"
fi

# ---- the source tarball, checked against the Sources index ------------
if [[ $next != 1 ]]; then
compgen -G "$aptdir/lists/*_bookworm-backports_main_source_Sources*" > /dev/null || papt_update
# The awk scripts read all of apt-cache's output (no early exit): under
# pipefail, apt-cache's SIGPIPE would end this script without a word.
want_sha=$(papt_cache showsrc "$srcpkg" | awk -v f="$tarball" '
	/^Checksums-Sha256:/ { on = 1; next }
	/^[^ ]/ { on = 0 }
	on && $3 == f && !done { print $1; done = 1 }')
dir=$(papt_cache showsrc "$srcpkg" | awk -v f="$tarball" '
	/^Package:/ { d = ""; hit = 0 }
	/^Directory:/ { d = $2 }
	$NF == f { hit = 1 }
	hit && d != "" && !done { print d; done = 1 }')
[[ -n $want_sha ]] || die "$tarball not in the bookworm-backports Sources index"
dir=${dir:-pool/main/q/qemu}
fi
if [[ ! -f $cache/$tarball ]] ||
   [[ $(sha256sum < "$cache/$tarball" | cut -d' ' -f1) != "$want_sha" ]]; then
	curl -fsSL -o "$cache/$tarball.part" "$mirror/$dir/$tarball"
	mv "$cache/$tarball.part" "$cache/$tarball"
fi
got_sha=$(sha256sum < "$cache/$tarball" | cut -d' ' -f1)
[[ $got_sha == "$want_sha" ]] || die "$tarball: sha256 $got_sha, Sources index says $want_sha"
echo "qemu.sh: $tarball sha256 $got_sha (matches the Sources index)" >&2
flock -u 9
exec 9>&-

# ---- unpack, patch, build ---------------------------------------------
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xJf "$cache/$tarball" -C "$work" --no-same-owner
src=$(echo "$work"/qemu-*)
[[ -d $src ]] || die "unexpected tarball layout"
while read -r p; do
	echo "qemu.sh: applying ${p#"$patchdir/"}" >&2
	patch -d "$src" -p1 --batch --quiet < "$p" || die "${p#"$patchdir/"} does not apply"
done < <(series)
# No edk2 blobs in the +ds tarball: do not unpack them.
sed -i 's/^\(    unpack_edk2_blobs = \)bzip2\.found()$/\1false/' "$src/meson.build"
grep -q '^    unpack_edk2_blobs = false$' "$src/meson.build" ||
	die "meson.build: unpack_edk2_blobs not found (another QEMU version?)"

start=$(date +%s)

# libvmrapl for --enable-vmrapl: the static library only, so that
# -lvmrapl cannot pick a shared one.
stage=$work/vmrapl
mkdir -p "$stage/lib/pkgconfig" "$stage/include/vmrapl/linux"
if [[ ${QEMU_VMRAPL_LIB:-yes} != no ]]; then
	nice -n 10 make -s -C "$top/userspace" O="$work/vmrapl-build" \
		PREFIX="$stage" LIBDIR="$stage/lib" INCLUDEDIR="$stage/include" lib >&2 ||
		die "libvmrapl build failed"
	cp "$work/vmrapl-build/lib/libvmrapl.a" "$stage/lib/"
	cp "$work/vmrapl-build/lib/vmrapl.pc" "$stage/lib/pkgconfig/"
	cp "$top/userspace/lib/libvmrapl.h" "$stage/include/"
	cp "$top/uapi/linux/vmrapl.h" "$stage/include/vmrapl/linux/"
fi

mkdir -p "$src/build"
(
	cd "$src/build"
	# The image's default python3 may be another interpreter that cannot
	# see Debian's meson: configure with Debian's.
	PKG_CONFIG_PATH="$stage/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
	nice -n 10 ../configure --python=/usr/bin/python3 "${configure_flags[@]}" \
		> configure.log 2>&1 || { tail -n 30 configure.log >&2; exit 1; }
	nice -n 10 ninja qemu-system-x86_64 > ninja.log 2>&1 ||
		{ grep -E -B2 -A10 'error' ninja.log | head -n 60 >&2; exit 1; }
) || die "build failed"
secs=$(( $(date +%s) - start ))
# libvmrapl linked in, and not needed at run time (no grep -q: pipefail
# would see the writer's SIGPIPE).
if [[ ${QEMU_VMRAPL_LIB:-yes} == no ]]; then
	if nm "$src/build/qemu-system-x86_64" | grep ' T vmrapl_attach$' > /dev/null; then
		die "qemu-system-x86_64 contains libvmrapl (QEMU_VMRAPL_LIB=no)"
	fi
else
	nm "$src/build/qemu-system-x86_64" | grep ' T vmrapl_attach$' > /dev/null ||
		die "qemu-system-x86_64 does not contain libvmrapl"
fi
if readelf -d "$src/build/qemu-system-x86_64" | grep 'NEEDED.*libvmrapl' > /dev/null; then
	die "qemu-system-x86_64 needs a shared libvmrapl"
fi

mkdir -p "$dest.tmp/include"
cp "$src/build/qemu-system-x86_64" "$dest.tmp/"
cp "$src/include/qemu/qemu-plugin.h" "$dest.tmp/include/"
# The test's place in the tree: tests/functional/ in 10.0, a directory
# per target since 10.1; installed under the one name.
for t in "$src/tests/functional/test_x86_64_vmrapl.py" \
	 "$src/tests/functional/x86_64/test_vmrapl.py"; do
	[[ -f $t ]] || continue
	mkdir -p "$dest.tmp/functional/python" "$dest.tmp/functional/tests/functional"
	cp -a "$src/python/qemu" "$dest.tmp/functional/python/"
	cp -a "$src/tests/functional/qemu_test" "$dest.tmp/functional/tests/functional/"
	cp "$t" "$dest.tmp/functional/tests/functional/test_x86_64_vmrapl.py"
done
{
	echo "version $version"
	echo "tarball $tarball sha256 $got_sha"
	echo "patches $(series | sed "s|^$patchdir/||" | tr '\n' ' ')"
	echo "configure ${configure_flags[*]}"
	if [[ ${QEMU_VMRAPL_LIB:-yes} == no ]]; then
		echo "libvmrapl none"
	else
		echo "libvmrapl static, sha256 $(cat "${vmrapl_srcs[@]}" | sha256sum | cut -c1-16) of ${vmrapl_srcs[*]#"$top/"}"
	fi
	echo "build_seconds $secs"
	echo "nproc $(nproc)"
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$dest.tmp/BUILD-INFO"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "qemu.sh: built $bin in ${secs}s (configure + ninja, nice 10, $(nproc) CPUs)" >&2
echo "$bin"
