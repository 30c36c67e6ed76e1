#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Smoke test of QEMU's -accel kvm,vmrapl=on (Documentation/qemu.rst) on
# real KVM without the vmrapl module: fake-vmrapl.so (LD_PRELOAD) stands
# in for /dev/vmrapl.  It checks the options and their errors, the attach
# (register set, ESU, topology, overhead threads), the MSR filter and the
# CPUID bit QEMU installs, what a guest reads and writes (rdmsr-guest, a
# multiboot kernel), and a migration to a file and back.  What it cannot
# check is the module itself: the values are the fake page's.
#
# Prints TAP version 13.  Usage: smoke.sh [path/to/qemu-system-x86_64]
# (default: scripts/qemu.sh path).  Needs a usable /dev/kvm, cc with -m32
# and python3; skips without them.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
qemu=${1:-$("$top/scripts/qemu.sh" path 2> /dev/null)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmrapl-qemu-smoke.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "TAP version 13"
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
[[ -n $qemu && -x $qemu ]] || skip_all "no QEMU (make qemu)"
[[ -r /dev/kvm && -w /dev/kvm ]] || skip_all "/dev/kvm not usable"
command -v python3 > /dev/null || skip_all "no python3"

cc -O1 -g -Wall -fPIC -shared -I"$top/uapi" -o "$tmp/fake.so" \
	"$here/fake-vmrapl.c" -ldl || skip_all "fake-vmrapl.so does not build"
gflags=(-m32 -ffreestanding -fno-pic -fno-pie -fno-stack-protector -O1 -nostdlib)
cc "${gflags[@]}" -c -o "$tmp/g1.o" "$here/rdmsr-guest.S" &&
	cc "${gflags[@]}" -c -o "$tmp/g2.o" "$here/rdmsr-guest.c" &&
	ld -m elf_i386 --no-warn-rwx-segments -T "$here/rdmsr-guest.ld" -o "$tmp/guest.elf" \
		"$tmp/g1.o" "$tmp/g2.o" ||
	skip_all "rdmsr-guest does not build (cc -m32)"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
# expect NAME FILE PATTERN...: every extended regex is in FILE
expect() {
	local name=$1 file=$2 p
	shift 2
	for p in "$@"; do
		if ! grep -E -q -- "$p" "$file"; then
			notok "$name"
			echo "# missing: $p"
			sed 's/^/# /' "$file" | grep -v "host doesn't support" | head -n 30
			return
		fi
	done
	ok "$name"
}

fw=(-L /usr/share/qemu -L /usr/share/seabios)
base=(-machine pc -m 64 -display none -nodefaults "${fw[@]}")
amd=(-cpu EPYC,vendor=AuthenticAMD)

# q NAME ENV... -- QEMU-ARGS...: run QEMU (20 s at most), output and exit
# status in $tmp/NAME
q() {
	local name=$1 env=()
	shift
	while [[ $1 != -- ]]; do env+=("$1"); shift; done
	shift
	env LD_PRELOAD="$tmp/fake.so" "${env[@]}" timeout 20 "$qemu" "$@" \
		< "$tmp/quit.qmp" > "$tmp/$name" 2>&1
	echo "rc=$?" >> "$tmp/$name"
}
# For the runs with -qmp stdio: stop as soon as the machine is built.
printf '%s\n' '{"execute":"qmp_capabilities"}' '{"execute":"quit"}' > "$tmp/quit.qmp"

# Options and errors
printf '%s\n' '{"execute":"qmp_capabilities"}' \
	'{"execute":"qom-list-properties","arguments":{"typename":"kvm-accel"}}' \
	'{"execute":"quit"}' |
	timeout 20 "$qemu" -machine none -accel tcg -display none -qmp stdio \
		> "$tmp/props" 2>&1
expect "kvm accel has vmrapl, vmrapl-period-ms, vmrapl-regset" "$tmp/props" \
	'"name": "vmrapl"' '"name": "vmrapl-period-ms"' '"name": "vmrapl-regset"'
q excl -- -accel kvm,vmrapl=on,rapl=on "${base[@]}" -S
expect "rapl=on and vmrapl=on refuse each other" "$tmp/excl" \
	'rapl=on and vmrapl=on are mutually exclusive' '^rc=1$'
q noperm FAKE_OPEN_ERR=13 -- -accel kvm,vmrapl=on "${base[@]}" -S
expect "no permission on /dev/vmrapl: a clear error" "$tmp/noperm" \
	'vmrapl=on: permission denied on /dev/vmrapl' '^rc=1$'
q nodev FAKE_OPEN_ERR=2 -- -accel kvm,vmrapl=on "${base[@]}" -S
expect "no module: a clear error" "$tmp/nodev" \
	'vmrapl=on: /dev/vmrapl does not exist \(is the vmrapl module loaded\?\)' '^rc=1$'
q busy FAKE_ATTACH_ERR=17 -- -accel kvm,vmrapl=on "${base[@]}" -S
expect "VM already attached: a clear error" "$tmp/busy" \
	'vmrapl=on: this VM is already attached to vmrapl' '^rc=1$'
q period FAKE_MIN_PERIOD_US=100000 -- -accel kvm,vmrapl=on,vmrapl-period-ms=10 \
	"${base[@]}" -S
expect "a period below unpriv_period_ms: a clear error" "$tmp/period" \
	'vmrapl-period-ms=10 is below what vmrapl allows a VMM without CAP_PERFMON' '^rc=1$'
q range -- -accel kvm,vmrapl=on,vmrapl-period-ms=20000 "${base[@]}" -S
expect "a period out of range: a clear error" "$tmp/range" \
	'vmrapl-period-ms=20000 is out of range \(1 to 10000\)' '^rc=1$'
q dombad -- -accel kvm,vmrapl=on,vmrapl-domains=pkg:gpu "${base[@]}" -S
expect "vmrapl-domains with an unknown name: a clear error" "$tmp/dombad" \
	"vmrapl-domains=pkg:gpu: 'gpu' is not a domain" '^rc=1$'
q domnopkg -- -accel kvm,vmrapl=on,vmrapl-domains=core "${base[@]}" -S
expect "vmrapl-domains without pkg: a clear error" "$tmp/domnopkg" \
	'vmrapl-domains=core: the pkg domain is required' '^rc=1$'
q envbad QEMU_VMRAPL=vmrapl=on,vmrapl-colour=red -- -accel kvm "${base[@]}" -S
expect "QEMU_VMRAPL with an unknown name: a clear error" "$tmp/envbad" \
	"QEMU_VMRAPL=vmrapl=on,vmrapl-colour=red: 'vmrapl-colour' is not a vmrapl property" '^rc=1$'
q env QEMU_VMRAPL=vmrapl=on,vmrapl-period-ms=50 -- -accel kvm "${base[@]}" "${amd[@]}" -S -qmp stdio
expect "QEMU_VMRAPL with -accel kvm: attached, its period set" "$tmp/env" \
	'ATTACH_VM kvm_fd [0-9]+ nr_vcpus 1 regset 2 esu 14' \
	'SET_POLICY flags 2 guest_period_us 50000'
q domdram -- -accel kvm,vmrapl=on,vmrapl-domains=pkg:dram "${base[@]}" -S
expect "vmrapl-domains the host does not serve: named" "$tmp/domdram" \
	"vmrapl-domains=pkg:dram: this host's vmrapl does not serve dram" '^rc=1$'

# Attach
q attach -- -accel kvm,vmrapl=on,vmrapl-period-ms=50 "${base[@]}" "${amd[@]}" \
	-smp 4,sockets=2,cores=2 -object iothread,id=io0 -S -qmp stdio
expect "AMD: attach, topology by socket, period, main loop + I/O thread, filter, CPUID" \
	"$tmp/attach" \
	'ATTACH_VM kvm_fd [0-9]+ nr_vcpus 4 regset 2 esu 14' \
	'SET_TOPOLOGY nr_vcpus 4 map 0 0 1 1 \(vpkgs 2\)' \
	'SET_POLICY flags 2 guest_period_us 50000' \
	"ADD_TASK tid [0-9]+ .* = the process's main thread" \
	'ADD_TASK tid [0-9]+ \(qemu-system-x86\)$' \
	'SET_MSR_FILTER .* 0xc0010299/1/rw 0xc001029a/1/rw 0xc001029b/1/rw' \
	'0x80000007 edx 0x4000 \(bit 14 set\)'
q intel -- -accel kvm,vmrapl=on "${base[@]}" -cpu Skylake-Server,vendor=GenuineIntel \
	-smp 8,sockets=2,dies=2,cores=2 -S -qmp stdio
expect "Intel: topology by die, the Intel MSRs, Skylake-X's DRAM unit" "$tmp/intel" \
	'ATTACH_VM kvm_fd [0-9]+ nr_vcpus 8 regset 1 esu 16' \
	'SET_TOPOLOGY nr_vcpus 8 map 0 0 1 1 2 2 3 3 \(vpkgs 4\)' \
	'SET_MSR_FILTER .* 0x606/1/rw 0x610/1/rw 0x611/1/rw 0x614/1/rw 0x639/1/rw 0xe2/1/rw 0x613/1/rw 0x61b/1/rw'
q intelc -- -accel kvm,vmrapl=on "${base[@]}" -cpu Skylake-Client,vendor=GenuineIntel -S -qmp stdio
expect "Intel client model: vmrapl's default unit" "$tmp/intelc" \
	'ATTACH_VM kvm_fd [0-9]+ nr_vcpus 1 regset 1 esu 14'
if grep -q 'bit 14 set' "$tmp/intel"; then
	notok "Intel: no AMD RAPL CPUID bit"
else
	ok "Intel: no AMD RAPL CPUID bit"
fi

# What a guest sees
guest=(-kernel "$tmp/guest.elf" -chardev stdio,id=dbg
	-device isa-debugcon,iobase=0xe9,chardev=dbg -device isa-debug-exit,iobase=0xf4)
q gamd -- -accel kvm,vmrapl=on "${base[@]}" "${amd[@]}" -smp 2 "${guest[@]}"
expect "AMD guest: CPUID bit, unit/core/package from the page, writes #GP" "$tmp/gamd" \
	'80000007.edx 0x0000000000004000 RAPL bit set' \
	'rdmsr 0x00000000c0010299 = 0x00000000000a0e03' \
	'rdmsr 0x00000000c001029a = 0x00000000000007d0' \
	'rdmsr 0x00000000c001029b = 0x00000000000003e8' \
	'wrmsr 0xc001029b #GP' '^rc=3$'
if grep -q READ_MSR "$tmp/gamd"; then
	notok "AMD guest: every read from the page, no READ_MSR ioctl"
else
	ok "AMD guest: every read from the page, no READ_MSR ioctl"
fi
# (The fake's log lines land inside the guest's, between the write and
# what the guest says of it.)
q gintel -- -accel kvm,vmrapl=on,vmrapl-regset=intel "${base[@]}" "${amd[@]}" -smp 1 \
	"${guest[@]}"
expect "vmrapl-regset=intel: the Intel MSRs answer, the AMD ones #GP, 0x610 writes go to vmrapl" \
	"$tmp/gintel" 'RAPL bit clear' \
	'rdmsr 0x00000000c001029b #GP' \
	'rdmsr 0x0000000000000606 = 0x00000000000a0e03' \
	'rdmsr 0x0000000000000611 = 0x00000000000003e8' \
	'rdmsr 0x0000000000000639 = 0x00000000000007d0' \
	'WRITE_MSR vcpu 0 msr 0x610 data 0x5$' '^no fault$' \
	'WRITE_MSR vcpu 0 msr 0x610 data 0x1000000$' '^#GP$' '^rc=3$'
q goff -- -accel kvm "${base[@]}" "${amd[@]}" -smp 1 "${guest[@]}"
expect "without vmrapl: no CPUID bit, AMD RAPL MSRs #GP" "$tmp/goff" \
	'RAPL bit clear' 'rdmsr 0x00000000c001029b #GP' '^rc=3$'

# Migration to a file and back
cat > "$tmp/qmp.py" << 'EOF'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
for _ in range(100):
    try:
        s.connect(sys.argv[1])
        break
    except OSError:
        time.sleep(0.1)
f = s.makefile('rw')
def recv():
    while True:
        m = json.loads(f.readline())
        if 'event' not in m:
            return m
def cmd(c, **a):
    f.write(json.dumps({'execute': c, 'arguments': a}) + '\n')
    f.flush()
    return recv()
recv()
cmd('qmp_capabilities')
if sys.argv[2] == 'out':
    cmd('migrate', uri='file:' + sys.argv[3])
else:
    cmd('migrate-incoming', uri='file:' + sys.argv[3])
for _ in range(200):
    r = cmd('query-migrate')['return']
    if r.get('status') in ('completed', 'failed'):
        break
    time.sleep(0.1)
print('migration', r.get('status'), r.get('error-desc', ''))
try:
    cmd('quit')
except Exception:
    pass
EOF
mig=(-accel kvm,vmrapl=on "${base[@]}" "${amd[@]}" -smp 4,sockets=2,cores=2)
# migr NAME ENV... -- QEMU-ARGS...: QEMU with a QMP socket, driven by qmp.py
migr() {
	local name=$1 dir=$2 env=()
	shift 2
	while [[ $1 != -- ]]; do env+=("$1"); shift; done
	shift
	env LD_PRELOAD="$tmp/fake.so" "${env[@]}" timeout 30 "$qemu" "$@" \
		-qmp "unix:$tmp/$name.sock,server=on,wait=off" \
		< /dev/null > "$tmp/$name" 2>&1 &
	timeout 30 python3 "$tmp/qmp.py" "$tmp/$name.sock" "$dir" "$tmp/mig" \
		>> "$tmp/$name.qmp" 2>&1
	wait
	cat "$tmp/$name.qmp" >> "$tmp/$name"
}
migr src out FAKE_STATE_BASE=900000 -- "${mig[@]}" -S
expect "migration out: GET_STATE saved" "$tmp/src" \
	'GET_STATE esu 14 vpkgs 2 vcpus 4' 'migration completed'
migr dst in -- "${mig[@]}" -incoming defer
expect "migration in: SET_STATE restores the saved counters" "$tmp/dst" \
	'SET_STATE esu 14 vpkgs 2 vcpus 4: 900000 900001 900002 900100 900101 900102 \| 900007 900008 900009 900010'
migr dstoff in -- -accel kvm "${base[@]}" "${amd[@]}" -smp 4,sockets=2,cores=2 \
	-incoming defer
expect "migration into a QEMU without vmrapl=on: refused, clearly" "$tmp/dstoff" \
	'Unknown (savevm )?section or instance .vmrapl. 0'
migr dstintel in -- -accel kvm,vmrapl=on,vmrapl-regset=intel "${base[@]}" "${amd[@]}" \
	-smp 4,sockets=2,cores=2 -incoming defer
expect "migration into another register set: refused, clearly" "$tmp/dstintel" \
	'the incoming guest saw the AMD RAPL MSRs, this QEMU gives it the Intel ones'

echo "1..$n"
[[ $failed == 0 ]]
