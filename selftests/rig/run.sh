#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a Debian kernel under QEMU (TCG) with the rig initramfs, run the
# selftests inside and decide pass/fail on the host.
#
# Usage: run.sh KVER [--variant numa|debug|rapl|intel|icount] [--mode tests|demo|bench|prom|shell|try]
#               [--timeout SECONDS] [--no-build-initramfs]
#
# Variants: numa (two NUMA nodes per package), debug (a kernel with KASAN,
# lockdep, kmemleak, UBSAN, debugobjects and failslab, see
# scripts/debug-kernel.sh: 3 GiB of memory, longer timeouts, and the
# kmemleak report the guest prints at the end is judged too), rapl (the
# rig's QEMU, that of "make qemu", emulating AMD RAPL counters from a power
# model: an AMD family 0x19 CPU with rapl=on; the model's truth is written
# to build/rig-<KVER>-rapl.truth and is readable in the guest as the
# fw_cfg file opt/org.vmrapl/rapl; see Documentation/testing.rst), intel
# (the same model behind Intel's register set: an Ice Lake server CPU,
# family 6 model 0x6a, with rapl=on; no KVM, since TCG has no VMX: only
# vmrapl's host source runs, and only the intel* programs; the truth in
# build/rig-<KVER>-intel.truth), icount
# (the rig's QEMU with the vr-icount TCG plugin loaded, which
# counts guest instructions between marker instructions and writes the
# counts to build/rig-<KVER>-icount[-<mode>].icount; with --mode bench only
# bench_ctxsw runs, in its instruction-count mode: bench/rig/collect.sh
# turns both files into instructions per context switch).
#
# Environment: RIG_KERNEL (the kernel image, default /boot/vmlinuz-KVER, or
# the one scripts/kernels.sh extracted for KVER), RIG_ROOT_IMAGE (boot a
# Debian root from this ext4 image instead of the rig's initramfs: its
# kernel in RIG_KERNEL, its own initramfs in RIG_INITRD; the disk is
# virtio, written to a throwaway snapshot, and the root's own programs
# print the rig's "###" lines; scripts/libvirt-test.sh),
# RIG_MODDIR (its modules with modules.dep, default /lib/modules/KVER; for
# a kernel that is not installed, e.g. the debug kernel's staging dir),
# RIG_TIMEOUT (whole boot, default 900 s, debug 3600 s), RIG_TEST_TIMEOUT
# (per program, default 300 s, debug and rapl 900 s), RIG_EXPECTED (space separated test names;
# default: one per selftests/vmrapl/*.c, without demo*, bench* and prom*,
# which only run in --mode demo, bench and prom), RIG_EXTRA_CMDLINE,
# RIG_ONLY (tests and bench modes: space separated programs to run;
# the run then expects only those), RIG_PROM_PORT (--mode prom: the host
# port, on 127.0.0.1, that QEMU's user network forwards to the guest
# exporter's 9877; default 19877), RIG_QEMU (the QEMU binary of every
# variant, default the one "make qemu" cached),
# RIG_PLUGIN (icount variant: the plugin .so, default "scripts/qemu.sh
# plugin"'s), RIG_ICOUNT_PROF=1 (icount variant: the plugin's per-instruction
# profile too), RIG_RAPL_CORE_MW (rapl-core-mw, default
# 12000:12000:12000:6000: package 1 heterogeneous), RIG_RAPL_IDLE_MW,
# RIG_RAPL_UNCORE_MW (the model's powers), RIG_RAPL_UPDATE_US (the
# counters' update interval, rapl-update-us, default 1500; set empty:
# QEMU's 1000),
# RIG_RAPL_PC6_DELAY_US (the package C-state entry delay,
# rapl-pc6-delay-us, default 1000; either set empty: QEMU's default),
# RIG_RAPL_DRAM_IDLE_MW and RIG_RAPL_DRAM_MW (intel variant: the DRAM
# term's floor and per-busy-vCPU power), RIG_INTEL_CPU (intel variant:
# the CPU model, default Icelake-Server,model=106), RIG_INTEL_WRAP_J,
# RIG_INTEL_WRAP_PP0_J and RIG_INTEL_WRAP_DRAM_J (intel variant: how
# many joules of its own energy each counter starts below its wrap,
# defaults 900, 330 and 200).
#
# Writes build/rig-<KVER>[-<variant>].log (console) and .result
# ("passed=N failed=N skipped=N"); prints "rig KVER: N passed, N failed,
# N skipped"; exits non-zero when the run failed.  RIG_TAG replaces
# "<KVER>[-<variant>]" in those names (and in what it prints), for a run
# that must not overwrite the usual one's logs.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:?usage: run.sh KVER [--variant numa] [--mode MODE] [--timeout S]}
shift
variant=
mode=tests
timeout=
build_initramfs=1
while [[ $# -gt 0 ]]; do
	case $1 in
	--variant) variant=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--no-build-initramfs) build_initramfs=0; shift ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
# The debug kernel runs everything several times slower (KASAN, lockdep,
# kmemleak under TCG): longer limits, unless given.
test_timeout=${RIG_TEST_TIMEOUT:-300}
silence=${RIG_SILENCE:-240}
if [[ $variant == debug ]]; then
	timeout=${timeout:-${RIG_TIMEOUT:-3600}}
	test_timeout=${RIG_TEST_TIMEOUT:-900}
	silence=${RIG_SILENCE:-600}
fi
# The rapl variant's rapl_qemu boots three nested guests and migrates
# one (110 to 140 s: 13 to 37 s per boot).
[[ $variant == rapl ]] && test_timeout=${RIG_TEST_TIMEOUT:-900}
# A person at the console (shell, try): no silence watchdog, four hours.
interactive=0
if [[ $mode == shell || $mode == try ]]; then
	interactive=1
	silence=${RIG_SILENCE:-$((1 << 30))}
	timeout=${timeout:-${RIG_TIMEOUT:-14400}}
fi
timeout=${timeout:-${RIG_TIMEOUT:-900}}

tag=$kver${variant:+-$variant}
[[ $mode == tests ]] || tag=$tag-$mode
tag=${RIG_TAG:-$tag}
# One initramfs per variant: the rapl variant's holds perf as well.
initrd=$top/build/rig/initramfs-$kver${variant:+-$variant}.cpio.gz
if [[ -n ${RIG_ROOT_IMAGE:-} ]]; then
	initrd=${RIG_INITRD:?RIG_ROOT_IMAGE needs RIG_INITRD, the initramfs of the root}
	build_initramfs=0
fi
log=$top/build/rig-$tag.log
result=$top/build/rig-$tag.result
# A kernel that is not installed but extracted from its packages by
# scripts/kernels.sh (the trixie-backports 7.x kernels): boot that.
if [[ -z ${RIG_KERNEL:-} && ! -r /boot/vmlinuz-$kver ]] &&
   img=$("$top/scripts/kernels.sh" image "$kver") && [[ -r $img ]]; then
	export RIG_KERNEL=$img
	RIG_MODDIR=$("$top/scripts/kernels.sh" moddir "$kver")
	export RIG_MODDIR
fi
kernel=${RIG_KERNEL:-/boot/vmlinuz-$kver}
mkdir -p "$top/build/rig"
rm -f "$result" "$log.hang1.cpus" "$log.stall1.cpus" "$log.stall1.cpus2"

if [[ ! -r $kernel ]]; then
	echo "run.sh: $kernel missing (install linux-image for $kver, or set RIG_KERNEL)" >&2
	echo "passed=0 failed=1 skipped=0" > "$result"
	exit 1
fi
# Every variant boots the QEMU that "make qemu" cached (10.0.2 with the
# project's patches), or RIG_QEMU; Debian 12's own QEMU 7.2 broke the
# nested guests' world switch once or twice a make check (a guest's
# triple fault with its vCPU thread's stack end overwritten, interrupts
# taken with IF clear: Documentation/testing.rst, "Which QEMU").
if ! qemu_bin=${RIG_QEMU:-$("$top/scripts/qemu.sh" path)}; then
	echo "rig $tag: no QEMU: run \"make qemu\" (scripts/qemu.sh), or set RIG_QEMU" >&2
	echo "passed=0 failed=1 skipped=0" > "$result"
	exit 1
fi
if ! command -v "$qemu_bin" > /dev/null; then
	echo "rig $tag: RIG_QEMU=$qemu_bin: no such program" >&2
	echo "passed=0 failed=1 skipped=0" > "$result"
	exit 1
fi
read -r -a firmware <<< "$("$top/scripts/qemu.sh" firmware)"
if [[ $build_initramfs == 1 ]]; then
	"$top/selftests/rig/mkinitramfs.sh" "$kver" "$initrd" "$variant" || {
		echo "passed=0 failed=1 skipped=0" > "$result"
		exit 1
	}
fi

cmdline="console=ttyS0,115200 panic=-1 printk.time=1 loglevel=7"
[[ -n ${RIG_ROOT_IMAGE:-} ]] && cmdline="root=/dev/vda rw $cmdline"
# make try: the kernel's warnings on the terminal, not its boot chatter.
[[ $mode == try ]] && cmdline=${cmdline/loglevel=7/loglevel=4}
# TCG vCPUs share two host cores; give RCU more slack before it reports a
# stall so the check catches real stalls, not emulation hiccups.
cmdline+=" rcupdate.rcu_cpu_stall_timeout=60"
cmdline+=" rig.mode=$mode rig.timeout=$test_timeout"
# Memory corruption that KASAN would catch on the debug kernel, cheaply on
# Debian's: freed pages are poisoned and checked when next allocated
# ("pagealloc: memory corruption", a write to a page after its free), and
# KFENCE samples a slab allocation every 100 ms into a guarded page (a
# "BUG: KFENCE" report for an access out of bounds or after free).  A full
# 7.3.4 run took 285 s with both against 279 s without.  Not for the debug
# kernel (KASAN does both), nor for bench, demo and prom, whose figures
# would carry the poisoning.  The rapl variant has it too since the
# package-less-cores estimate counts the cores' own energy: the
# poisoning's work on idle CPUs had taken rapl.static_busy_package to
# -13 % when it summed their weights (testing.rst).
if [[ $mode == tests && $variant != debug ]]; then
	cmdline+=" page_poison=1 kfence.sample_interval=100"
fi
[[ -n $variant ]] && cmdline+=" rig.variant=$variant"
[[ -n ${RIG_EXTRA_CMDLINE:-} ]] && cmdline+=" $RIG_EXTRA_CMDLINE"
[[ -n ${RIG_ONLY:-} ]] && cmdline+=" rig.only=$(echo $RIG_ONLY | tr ' ' ',')"

cpu=max
known_re=
truth=$top/build/rig-$tag.truth
icount=$top/build/rig-$tag.icount
smp=4,sockets=2,cores=2
mem=2G
[[ $variant == debug ]] && mem=3G	# KASAN's shadow is an eighth of it
plugin=()
if [[ $variant == icount ]]; then
	if ! so=${RIG_PLUGIN:-$("$top/scripts/qemu.sh" plugin)}; then
		echo "passed=0 failed=1 skipped=0" > "$result"
		exit 1
	fi
	rm -f "$icount"
	plugin=(-plugin "$so,out=$icount")
	# A per-instruction profile of the kernel, named with the guest's
	# symbols (bench_ctxsw hands them over); bench/rig/collect.sh reads it.
	if [[ ${RIG_ICOUNT_PROF:-0} == 1 ]]; then
		plugin=(-plugin "$so,out=$icount,prof=on")
		cmdline+=" rig.prof=1"
	fi
fi
# QEMU's own log (-d cpu_reset): "Triple fault" when the emulated machine
# itself triple-faults, which -no-reboot turns into a silent, clean exit.
# -nodefaults: q35's default devices include an empty CD-ROM on its AHCI
# controller, which QEMU 10.0.2 emulates so that Debian's SeaBIOS 1.16.2
# waits out its 32 s ATA timeout before every boot (QEMU 7.2 did not);
# the console and the human monitor are the serial line, muxed on stdio,
# as -nographic had them.
# dump-guest-core=off: a core dump of QEMU (boot() below) leaves the
# guest's RAM out.
# The power model's options of the rapl and intel variants (QEMU's
# rapl=on, patches 0002, 0010, 0011), after the CPU model: the powers are
# the tests' expectations, which they read back from the truth ($truth),
# never from here.  A package draws its uncore for RIG_RAPL_PC6_DELAY_US
# (1 ms) after its last core idles before it drops to its floor (set
# empty: none), and the counters update every RIG_RAPL_UPDATE_US (1.5 ms,
# not QEMU's 1 ms: vmrapl assumes neither; rapl.c's
# update_interval_measured checks what it timed).
rapl_model_opts() {
	local o=,rapl=on
	o+=,rapl-core-mw=${RIG_RAPL_CORE_MW:-12000:12000:12000:6000}
	# APERF: core 3 at 0.76 of the others' frequency for half their
	# power (dynamic power grows as f^2.5 or so): cycles weigh it, but
	# not as much as its energy (rapl.heterogeneous_percore).
	o+=,rapl-core-mhz=${RIG_RAPL_CORE_MHZ:-2000:2000:2000:1520}
	o+=,rapl-idle-mw=${RIG_RAPL_IDLE_MW:-8000},rapl-uncore-mw=${RIG_RAPL_UNCORE_MW:-4000}
	[[ -n ${RIG_RAPL_UPDATE_US-1500} ]] &&
		o+=,rapl-update-us=${RIG_RAPL_UPDATE_US-1500}
	[[ -n ${RIG_RAPL_PC6_DELAY_US-1000} ]] &&
		o+=,rapl-pc6-delay-us=${RIG_RAPL_PC6_DELAY_US-1000}
	echo "$o,rapl-truth=$truth"
}
qemu=("$qemu_bin" "${firmware[@]}" "${plugin[@]}" -machine q35,dump-guest-core=off -accel tcg,thread=multi
	-m "$mem" -nographic -nodefaults -serial mon:stdio -no-reboot
	-d cpu_reset -D "$log.qemu"
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline")
case $variant in
"") ;;
numa)
	# Two packages, each split into two NUMA nodes like AMD's NPS2:
	# nodes 0,1 hold package 0's CPUs 0,1; nodes 2,3 hold package 1's
	# CPUs 2,3.  The kernel warns once at boot (topology_sane(): cache
	# siblings on different nodes), before any module is loaded; that one
	# warning is known and tolerated in this variant.  (Giving each node
	# its own die avoids it but makes every die a package of its own on
	# this emulated AMD CPU, which defeats the purpose.)
	known_re='smpboot\.c:[0-9]+ topology_sane'
	for n in 0 1 2 3; do
		qemu+=(-object "memory-backend-ram,id=mem$n,size=512M"
		       -numa "node,nodeid=$n,cpus=$n,memdev=mem$n")
	done
	;;
debug)
	# Nothing more on the command line: the kernel's config makes it
	# the debug rig (/init scans kmemleak when the kernel has it).
	;;
rapl)
	# AMD family 0x19 (Zen 3) so that amd_rapl (intel_rapl_msr) and
	# perf's power PMU bind; the model's parameters are the tests'
	# expectations (selftests/vmrapl/rapl.c reads them back from the
	# truth, never from here).
	rm -f "$truth"
	cpu=max,family=25,model=1$(rapl_model_opts)
	# Counters start 1700 J below 2^32 units of 2^-16 J, so that they
	# wrap during the run: /init runs the rapl program first, and its
	# wrap test waits for the wrap (about 80 s after boot; the test
	# starts some 50 s after boot, with package 0 at about 950 J).
	cpu+=,x-rapl-start=$(( (1 << 32) - ${RIG_RAPL_WRAP_J:-1700} * 65536 ))
	;;
intel)
	# Ice Lake-X (family 6, model 0x6a): intel_rapl_msr and perf's
	# power PMU bind by model, with the PKG, PP0 and DRAM domains, and
	# both read its DRAM counter in a fixed 2^-16 J.  QEMU's
	# Icelake-Server says model 0x86 (134, Snow Ridge's number to
	# Linux: powercap binds with the client defaults, perf's power PMU
	# not at all), hence model=106.  TCG lacks some of its features
	# (AVX-512, TSX...): QEMU warns and leaves them out.
	# The model's powers are the rapl variant's; intel.c reads them
	# back from the truth.
	rm -f "$truth"
	cpu=${RIG_INTEL_CPU:-Icelake-Server,model=106}$(rapl_model_opts)
	cpu+=,rapl-dram-idle-mw=${RIG_RAPL_DRAM_IDLE_MW:-3000},rapl-dram-mw=${RIG_RAPL_DRAM_MW:-1500}
	# Every counter starts RIG_INTEL_WRAP_J (PKG), _PP0_J and _DRAM_J of
	# its own energy below 2^32 of its units (PKG and PP0 at the ESU,
	# 2^-14 J; DRAM 2^-16 J), so that each wraps once during intel's
	# wrap test, which /init runs first.  Before it the boot draws 308 J
	# of PKG and 136 of PP0 on 6.12, 793 and 346 on 7.3.4 (whose PP0
	# wrapped before the test at 330 J): each start leaves a third of it
	# to spare on 7.3.4.
	cpu+=,x-rapl-start=$(( (1 << 32) - ${RIG_INTEL_WRAP_J:-1200} * 16384 ))
	cpu+=,x-rapl-start-pp0=$(( (1 << 32) - ${RIG_INTEL_WRAP_PP0_J:-550} * 16384 ))
	cpu+=,x-rapl-start-dram=$(( (1 << 32) - ${RIG_INTEL_WRAP_DRAM_J:-280} * 65536 ))
	;;
icount)
	# The plugin is loaded above; the guest is the default rig's.
	;;
*) echo "run.sh: unknown variant $variant" >&2; exit 2 ;;
esac
# No display adapter and, but for the prom mode's, no network card: the
# console is the serial line, and q35's default VGA and e1000e only add
# PCI BARs for the guest to size, which is where QEMU 10.0.2 died of
# SIGSEGV twice (address_space_translate_internal(), before vmrapl).
qemu+=(-cpu "$cpu" -smp "$smp" -vga none)
if [[ -n ${RIG_ROOT_IMAGE:-} ]]; then
	qemu+=(-drive "file=$RIG_ROOT_IMAGE,if=virtio,format=raw,snapshot=on")
fi
# QMP on a socket, for the watchdog's dump of a wedged guest (hangdump.py);
# the console and the human monitor stay muxed on stdio.
mon=$log.qmp
rm -f "$mon"
qemu+=(-qmp "unix:$mon,server=on,wait=off")
if [[ $mode == prom ]]; then
	qemu+=(-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:${RIG_PROM_PORT:-19877}-:9877"
	       -device virtio-net-pci,netdev=n0)
else
	qemu+=(-nic none)
fi

stdin=/dev/null
fg=()
if [[ $interactive == 1 && -t 0 ]]; then
	stdin=/dev/stdin
	# timeout(1) runs QEMU in a process group of its own, in the
	# background of the terminal: QEMU's first tcsetattr() of it (raw
	# mode for the console) stopped it with SIGTTOU, before the BIOS.
	fg=(--foreground)
fi

# Where a wedged guest's vCPUs are, from QEMU's monitor, before the
# watchdog ends the boot: $log.cpus, or $log.cpus2 for the second of a
# stall's two dumps (selftests/rig/hangdump.py).  Its kernel's System.map
# sits next to its image.
smap=$(dirname "$kernel")/System.map-$kver
[[ -r $smap ]] || smap=/boot/System.map-$kver
dump_cpus() {
	local kos=("${VMRAPL_KO:-$top/build/$kver/vmrapl.ko}")

	kos+=("${RIG_MODDIR:-/lib/modules/$kver}"/kernel/arch/x86/kvm/kvm*.ko*)
	timeout 120 python3 "$top/selftests/rig/hangdump.py" "$mon" "$log" \
		"$smap" "${kos[@]}" > "$log.cpus${1:-}" 2>&1
}

# One boot.  A watchdog ends it when the console stays silent for
# RIG_SILENCE seconds (default 240; every test prints well within that):
# a guest that stopped without a word is a hang, not a slow test.
boot() {
	local qpid wpid
	rm -f "$log.hang" "$log.stall" "$log.cpus" "$log.cpus2" "$log.qemu-bt" "$log.qemu"
	touch "$log.start"
	# Core dumps on, for QEMU only: qemu_backtrace() below.
	( ulimit -c unlimited 2>/dev/null
	  exec timeout "${fg[@]}" -k 10 "$timeout" "${qemu[@]}" ) < "$stdin" > >(tee "$log") 2>&1 &
	qpid=$!
	(
		stalled=0
		while sleep 10; do
			kill -0 "$qpid" 2>/dev/null || exit 0
			# An RCU stall report (another CPU's, or a CPU's own:
			# "self-detected", which the first version missed and
			# a 6.1 boot stuck on an int3 of a text patch printed
			# every 180 s until RIG_TIMEOUT): the kernel is wedged,
			# and the report fails the run.  Give it a minute to
			# print its backtraces, dump the vCPUs twice, 10 s
			# apart, then end it rather than wait out RIG_TIMEOUT.
			# (Not a hang: retried only when the dumps show it
			# wedged outside vmrapl, below.)
			if grep -aqE 'detected stalls on CPUs|self-detected stall on CPU' "$log" 2>/dev/null; then
				stalled=$((stalled + 10))
				if (( stalled > 60 )); then
					echo "an RCU stall report, ended ${stalled}s after it" > "$log.stall"
					dump_cpus
					sleep 10
					dump_cpus 2
					kill "$qpid" 2>/dev/null
					exit 0
				fi
			fi
			age=$(( $(date +%s) - $(stat -c %Y "$log" 2>/dev/null || date +%s) ))
			if (( age > silence )); then
				echo "no console output for ${age}s" > "$log.hang"
				dump_cpus
				# timeout(1) passes the signal on to QEMU.  (A
				# pkill -f of the command line missed every
				# kernel whose name has a "+", a regex
				# operator: those hangs ran to RIG_TIMEOUT.)
				kill "$qpid" 2>/dev/null
				exit 0
			fi
		done
	) &
	wpid=$!
	wait "$qpid"
	qrc=$?
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	sleep 1	# let tee finish the log
	qemu_backtrace
}

# QEMU itself died of a signal (SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV:
# timeout(1) passes its status on): every thread's backtrace from its core
# dump, into $log.qemu-bt, and the core deleted.  Only where the kernel
# writes cores to files in the working directory (core_pattern "core",
# "core.%p", ...; not a pipe to a crash handler), and with gdb.  QEMU
# 10.0.2 has died so a few times in this rig, in its memory dispatch
# while the guest sized PCI BARs (below): the next time says where from.
qemu_backtrace() {
	local pat core

	case $qrc in 132 | 134 | 135 | 136 | 139) ;; *) return 0 ;; esac
	pat=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
	if [[ $pat == '|'* || $pat == */* ]] || ! command -v gdb > /dev/null; then
		echo "QEMU died of signal $((qrc - 128)); no backtrace: core_pattern is \"$pat\"${pat:+, }gdb $(command -v gdb > /dev/null && echo found || echo missing)" > "$log.qemu-bt"
		return 0
	fi
	core=$(find . -maxdepth 1 -name "${pat%%%*}*" -type f -newer "$log.start" 2>/dev/null | head -n 1)
	if [[ -z $core ]]; then
		echo "QEMU died of signal $((qrc - 128)); no core file (core_pattern \"$pat\", in $PWD)" > "$log.qemu-bt"
		return 0
	fi
	{
		echo "QEMU died of signal $((qrc - 128)): $qemu_bin, core $core"
		timeout 120 gdb -batch -nx -ex 'info threads' -ex 'thread apply all bt' \
			"$qemu_bin" "$core" 2>&1
	} > "$log.qemu-bt"
	rm -f "$core"
}

echo "rig $tag: booting (timeout ${timeout}s)"
start=$(date +%s)
boot
[[ $interactive == 1 ]] && exit "$qrc"
# Under TCG a nested-KVM guest of the 6.1 kernel has been seen to stop
# dead (no oops, no lockup report) on a loaded host.  Such a hang is
# retried once, and said so; a second hang, or any other failure, stands.
# A boot that failed before vmrapl was even loaded is retried the same
# way, in every mode (the demo's, the bench's and the prom fleet's boots
# too: one such death failed a CI run's prom-check, December 4): nothing
# of the module can have caused it.  Seen on December 1: the
# rapl variant's QEMU 10.0.2 (make qemu) dying of SIGSEGV in its memory
# dispatch (address_space_translate_internal) while the guest sized PCI
# BARs, 2 s in (1 of about 15 boots), and a 7.2.12 guest's "Oops: int3"
# in __schedule right after kvm-amd loaded (TCG and cross-modifying code,
# as above).  A failure after vmrapl loaded, during its load (a report
# whose "Modules linked in:" names it), or a load that failed, is never
# retried, with two exceptions: the emulated machine triple-faulting
# (QEMU's log) with nothing on the guest's console, no oops, panic or
# warning, which the same VM workload did with vmrapl unloaded (December
# 2, testing.rst: "Without vmrapl"), and an RCU stall the vCPU dumps show
# wedged outside vmrapl (below); a second one stands, and a retried one
# is named in the summary.
retried=
if [[ -f $log.hang && $mode == tests ]]; then
	cp "$log" "$log.hang1"
	cp "$log.qemu" "$log.hang1.qemu" 2>/dev/null
	cp "$log.cpus" "$log.hang1.cpus" 2>/dev/null
	echo "rig $tag: the guest hung, $(cat "$log.hang") (log kept in $log.hang1); booting once more"
	boot
elif [[ -f $log.stall && $mode == tests ]] &&
     why=$(python3 "$top/selftests/rig/hangdump.py" --wedged "$log.cpus" "$log.cpus2"); then
	# An RCU stall whose two dumps, 10 s apart, show a CPU with
	# interrupts off in both and no vmrapl function on the stacks of any
	# CPU that had them off: wedged outside vmrapl, as the nested-guest
	# faults of testing.rst ("How the result is decided") are.  The CPUs
	# the stall report names may well be in vmrapl, waiting with
	# interrupts on for the wedged one (vr_close_all()'s IPI): they are
	# not what stopped.  Retried once and named; a CPU wedged in vmrapl,
	# or a second stall, stands.
	cp "$log" "$log.stall1"
	cp "$log.qemu" "$log.stall1.qemu" 2>/dev/null
	cp "$log.cpus" "$log.stall1.cpus"
	cp "$log.cpus2" "$log.stall1.cpus2"
	retried="the first boot stalled, wedged outside vmrapl: $why (log kept in $log.stall1)"
	echo "rig $tag: $retried; booting once more"
	boot
elif (( qrc != 124 && qrc != 137 )) &&
     ! grep -aq '^### MODULE vmrapl LOAD' "$log" &&
     ! grep -aq 'Modules linked in:.*vmrapl' "$log" &&
     ! grep -aq '^### RIG DONE' "$log"; then
	cp "$log" "$log.early1"
	cp "$log.qemu" "$log.early1.qemu" 2>/dev/null
	why=$(grep -m1 -aoE '(Kernel panic|Oops)[^[:cntrl:]]*' "$log")
	if [[ -f $log.qemu-bt ]]; then
		mv "$log.qemu-bt" "$log.early1.qemu-bt"
		why+="${why:+; }QEMU's backtrace in $log.early1.qemu-bt"
	fi
	echo "rig $tag: the boot failed before vmrapl was loaded (qemu rc=$qrc${why:+; $why}) (log kept in $log.early1); booting once more"
	boot
elif [[ $mode == tests ]] && (( qrc != 124 && qrc != 137 )) &&
     ! grep -aq '^### RIG DONE' "$log" &&
     [[ ! -f $log.stall ]] && grep -q 'Triple fault' "$log.qemu" 2>/dev/null &&
     ! grep -aqE '\] (Kernel panic|Oops|BUG:|WARNING:|general protection|watchdog: |rcu: INFO|INFO: task)' "$log"; then
	cp "$log" "$log.triple1"
	cp "$log.qemu" "$log.triple1.qemu"
	last=$(grep -a '^### TEST .* BEGIN' "$log" | tail -n 1 | cut -d' ' -f3)
	retried="the first boot's emulated machine triple-faulted in ${last:-?}, nothing on its console (log kept in $log.triple1)"
	echo "rig $tag: $retried; booting once more"
	boot
fi
elapsed=$(( $(date +%s) - start ))

# ---- host-side verdict -------------------------------------------------
tr -d '\r' < "$log" > "$log.clean"
mv "$log.clean" "$log"

passed=0 failed=0 skipped=0
problems=()
fail() { problems+=("$*"); failed=$((failed + 1)); }

if [[ $qrc == 124 || $qrc == 137 ]]; then
	fail "boot timed out after ${timeout}s"
elif [[ -f $log.hang ]]; then
	fail "the guest hung: $(cat "$log.hang")"
elif [[ -f $log.stall ]]; then
	why=
	[[ -f $log.cpus2 ]] &&
		why=$(python3 "$top/selftests/rig/hangdump.py" --wedged "$log.cpus" "$log.cpus2")
	fail "the guest stalled: $(cat "$log.stall")${why:+ ($why)}"
elif ! grep -q '^### RIG DONE' "$log"; then
	why=
	grep -q 'Triple fault' "$log.qemu" 2>/dev/null &&
		why="; the emulated machine triple-faulted (QEMU's log: $log.qemu)"
	[[ -f $log.qemu-bt ]] && why+="; $(head -n 1 "$log.qemu-bt") (in $log.qemu-bt)"
	fail "rig did not finish (qemu rc=$qrc$why)"
fi

while read -r line; do
	fail "module load: ${line#\#\#\# MODULE }"
done < <(grep -E '^### MODULE .* LOAD FAIL' "$log")
if ! grep -q '^### MODULE vmrapl LOAD ok' "$log"; then
	grep -q '^### MODULE vmrapl LOAD FAIL' "$log" || fail "vmrapl.ko was never loaded"
fi
while read -r line; do
	fail "unload: ${line#\#\#\# }"
done < <(grep -E '^### VMRAPL UNLOAD FAIL' "$log")

# Kernel problems: only lines that carry a printk timestamp, so test
# names or test output mentioning these words do not count.  The lockdep,
# debugobjects and kmemleak reports only come from the debug kernel
# (Debian's kernels have none of these checkers), so one pattern serves
# every kernel.  kmemleak's "N new suspected memory leaks" is judged with
# the report itself, below.
kpat='(BUG: |kernel BUG at|WARNING: CPU: |WARNING: at |Oops: |general protection fault|'
kpat+='Kernel panic|RCU stall|self-detected stall|'
kpat+='detected stalls? on CPU|soft lockup|hard LOCKUP|blocked for more than [0-9]+ seconds|'
kpat+='UBSAN: |KASAN: |list_(add|del) corruption|vmrapl: leaked |'
kpat+='WARNING: (possible|inconsistent lock|suspicious RCU|bad unlock|lock held|held lock|Nested lock)|'
kpat+='possible (circular|recursive) locking|INFO: (possible|trying to register non-static)|'
kpat+='ODEBUG: |kmemleak: .*disabled|pagealloc: (memory corruption|single bit error))'
while read -r line; do
	if [[ -n $known_re ]] && grep -Eq "$known_re" <<< "$line"; then
		echo "rig $tag: known, tolerated: $line"
		continue
	fi
	fail "kernel: $line"
done < <(grep -E '^\[ *[0-9]+\.[0-9]+\] ' "$log" | sed 's/^\[ *[0-9.]*\] //' |
	grep -E "$kpat" | sort -u)

# kmemleak (debug kernel): /init prints the report of a scan while vmrapl
# is still loaded (its frames have names) and of two scans after it was
# unloaded.  Every "unreferenced object" fails the run, unless
# RIG_KMEMLEAK=vmrapl: then only those whose backtrace names vmrapl or
# holds an address no loaded module covers any more (vmrapl's, after the
# unload); the others are listed.
if grep -q '^### KMEMLEAK' "$log"; then
	klog=$log.kmemleak
	awk '/^### KMEMLEAK .*BEGIN$/ { on = 1; next } /^### KMEMLEAK .*END$/ { on = 0 }
	     on' "$log" > "$klog"
	declare -A leak_first=() leak_ours=()
	nleak=0
	# One NUL-terminated record per reported object; the same object is
	# in both reports (by address), with names in the first.
	while IFS= read -r -d '' entry; do
		first=$(head -n1 <<< "$entry")
		key=${first%% (*}
		[[ -n ${leak_first[$key]:-} ]] || leak_first[$key]="$first ($(grep -Em3 '\[<' <<< "$entry" |
			sed 's/^ *\[<[0-9a-f]*>\] //' | tr '\n' ' '))"
		if grep -Eq '\[vmrapl\]|\] 0xffffffff[a-f][0-9a-f]{7}$' <<< "$entry"; then
			leak_ours[$key]=1
		fi
	done < <(awk '/^unreferenced object/ { if (e != "") printf "%s%c", e, 0; e = "" }
		      /^unreferenced object/ || e != "" { e = e $0 "\n" }
		      END { if (e != "") printf "%s%c", e, 0 }' "$klog")
	for key in "${!leak_first[@]}"; do
		if [[ -n ${leak_ours[$key]:-} || ${RIG_KMEMLEAK:-all} != vmrapl ]]; then
			nleak=$((nleak + 1))
			fail "kmemleak${leak_ours[$key]:+ (vmrapl)}: ${leak_first[$key]}"
		else
			echo "rig $tag: kmemleak, not vmrapl's: ${leak_first[$key]}"
		fi
	done
	echo "rig $tag: kmemleak: ${#leak_first[@]} objects reported, $nleak counted"
elif [[ $variant == debug ]]; then
	fail "no kmemleak report (/init prints one when the kernel has kmemleak)"
fi

# Per-program TAP accounting.
declare -A seen_prog=()
if [[ $mode == tests ]]; then
	# Mirrors /init: numa* programs run only in (and with basic as the
	# only others in) the numa variant, rapl* only in the rapl variant
	# (with basic), intel* only in the intel variant (alone: it has no
	# KVM).
	case $variant in
	numa) keep='^(numa.*|basic)$' drop='^$' ;;
	rapl) keep='^(rapl.*|basic)$' drop='^$' ;;
	intel) keep='^intel' drop='^$' ;;
	*)    keep='.' drop='^(numa|rapl|intel)' ;;
	esac
	expected=${RIG_EXPECTED-$(cd "$top/selftests/vmrapl" 2>/dev/null &&
		ls *.c 2>/dev/null | sed 's/\.c$//' | grep -Ev '^(demo|bench|prom)' |
		grep -E "$keep" | grep -Ev "$drop" | tr '\n' ' ')}
	[[ -n ${RIG_ONLY:-} ]] && expected=$RIG_ONLY
elif [[ $mode == bench && $variant == icount ]]; then
	expected=${RIG_EXPECTED-bench_ctxsw}
elif [[ $mode == bench ]]; then
	expected=${RIG_EXPECTED-$(cd "$top/selftests/vmrapl" 2>/dev/null &&
		ls bench*.c 2>/dev/null | sed 's/\.c$//' | tr '\n' ' ')}
	[[ -n ${RIG_ONLY:-} ]] && expected=$RIG_ONLY
elif [[ $mode == prom ]]; then
	expected=${RIG_EXPECTED-$(cd "$top/selftests/vmrapl" 2>/dev/null &&
		ls prom*.c 2>/dev/null | sed 's/\.c$//' | tr '\n' ' ')}
elif [[ $mode == demo && -x $top/build/selftests/demo ]]; then
	expected=demo
else
	expected=
fi
tapfile=$(mktemp)
trap 'rm -f "$tapfile"' EXIT
awk '
/^### TEST .* BEGIN$/ { name = $3; inside = 1; next }
/^### TEST .* TIME [0-9]+$/ { print "TIME", name, $5; next }
/^### TEST .* END rc=/ { sub(/.*rc=/, ""); print "END", name, $0; inside = 0; next }
inside && /^ok [0-9]+/ {
	if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) print "SKIP", name, $0; else print "PASS", name, $0
	next
}
inside && /^not ok [0-9]+/ {
	if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) { print "SKIP", name, $0; next }
	print "FAIL", name, $0
	# What the failed test logged: its last lines, for a log cut short.
	for (i = (nd > 12 ? nd - 12 : 0); i < nd; i++) print "WHY", name, diag[i % 12]
	next
}
inside && /^#  RUN / { nd = 0; next }
inside && /^# / && !/^# +(OK|FAIL) / { diag[nd++ % 12] = $0; next }
inside && /^1\.\.[0-9]+/ { print "PLAN", name }
' "$log" > "$tapfile"

# Debug variant: tests of selftests/rig/debug.skip ("PROGRAM:TEST
# reason") still run, so the kernel's checkers see them, but a failure of
# theirs counts as skipped, with the reason (whole programs listed there
# are skipped by /init).
declare -A tolerated=()
if [[ $variant == debug && -f $top/selftests/rig/debug.skip ]]; then
	while read -r what why; do
		[[ $what == *:* ]] && tolerated[$what]=$why
	done < <(grep -Ev '^[[:space:]]*(#|$)' "$top/selftests/rig/debug.skip")
fi

declare -A p_pass=() p_fail=() p_skip=() p_plan=() p_rc=() p_tol=() p_secs=()
last_kind=
while read -r kind name rest; do
	if [[ $kind == FAIL ]]; then
		tname=$(awk '{ print $4 }' <<< "$rest")
		if [[ -n ${tolerated[$name:$tname]:-} ]]; then
			echo "rig $tag: $name: $tname failed, counted as skipped in this variant: ${tolerated[$name:$tname]}"
			kind=SKIP
			p_tol[$name]=1
		fi
	fi
	if [[ $kind == WHY ]]; then
		[[ $last_kind == FAIL ]] && problems[-1]+=$'\n'"        $rest"
		continue
	fi
	last_kind=$kind
	case $kind in
	PASS) p_pass[$name]=$(( ${p_pass[$name]:-0} + 1 )) ;;
	SKIP) p_skip[$name]=$(( ${p_skip[$name]:-0} + 1 )) ;;
	FAIL) p_fail[$name]=$(( ${p_fail[$name]:-0} + 1 ))
	      problems+=("$name: $rest") ;;
	PLAN) p_plan[$name]=1 ;;
	TIME) p_secs[$name]=$rest ;;
	END)  p_rc[$name]=$rest; seen_prog[$name]=1 ;;
	esac
done < "$tapfile"

for name in "${!seen_prog[@]}"; do
	passed=$(( passed + ${p_pass[$name]:-0} ))
	skipped=$(( skipped + ${p_skip[$name]:-0} ))
	failed=$(( failed + ${p_fail[$name]:-0} ))
	rc=${p_rc[$name]}
	if [[ -z ${p_plan[$name]:-} && $mode == tests ]]; then
		fail "$name: no TAP plan (rc=$rc)"
	elif [[ $rc != 0 && $rc != 4 && ${p_fail[$name]:-0} == 0 &&
		-z ${p_tol[$name]:-} ]]; then
		# 4 is KSFT_SKIP; anything else without a "not ok" is a crash,
		# a timeout (137) or a harness failure.
		if [[ $rc == 137 ]]; then
			fail "$name: killed after the ${test_timeout}s per-program timeout"
		else
			fail "$name: exited rc=$rc"
		fi
	fi
done
for name in $expected; do
	[[ -n ${seen_prog[$name]:-} ]] || fail "$name: expected test program did not run"
done

# The boot itself is one test: it finished, vmrapl loaded and unloaded,
# and the kernel log is clean.
if [[ ${#problems[@]} == 0 ]]; then
	passed=$((passed + 1))
	echo "rig $tag: boot, vmrapl load/unload, kernel log: ok"
fi

echo "passed=$passed failed=$failed skipped=$skipped elapsed=$elapsed" > "$result"
echo
echo "rig $tag: per program:"
for name in $(printf '%s\n' "${!seen_prog[@]}" | sort); do
	printf '  %-32s pass=%d fail=%d skip=%d rc=%s secs=%s\n' "$name" "${p_pass[$name]:-0}" \
		"${p_fail[$name]:-0}" "${p_skip[$name]:-0}" "${p_rc[$name]}" "${p_secs[$name]:-?}"
done
for p in "${problems[@]}"; do
	echo "  FAIL: $p"
done
[[ -n $retried ]] && echo "  RETRIED: $retried"
# Where a wedged guest's vCPUs were (this boot's, or the retried one's),
# each with the first kernel functions on its stacks: the whole dump is in
# the .cpus file.
for f in "$log.cpus" "$log.hang1.cpus" "$log.stall1.cpus"; do
	[[ -f $f ]] || continue
	echo "  vCPUs of the wedged guest ($f):"
	awk '/^--- CPU/ { print "    " $0; n = 0; next }
	     /^    \[/ && n < 8 { print "      " $0; n++ }
	     /^hangdump:/ { print "    " $0 }' "$f"
done
echo "rig $tag: boot+run took ${elapsed}s"
echo "rig $tag: $passed passed, $failed failed, $skipped skipped"
[[ $failed == 0 ]]
