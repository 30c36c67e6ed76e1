#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a wedged rig guest's CPUs are, read from outside it.

The rig's watchdog runs this, before it ends the boot, when the guest's
console stays silent (a hang) or prints an RCU stall: a guest whose CPUs all
spin with interrupts off prints nothing at all, and the report of one that
still prints may not name the CPU that holds what the others wait for.

Usage: hangdump.py SOCKET LOG SYSTEM_MAP [KO...]
       hangdump.py --rename SYSTEM_MAP DUMP
       hangdump.py --wedged DUMP1 DUMP2

SOCKET is QEMU's QMP socket (-qmp unix:SOCKET,server=on,wait=off); the
human monitor stays where the rig always had it, muxed with the console on
stdio.  For every vCPU, the dump holds its registers (HMP's info registers,
through QMP's human-monitor-command; a vCPU in a nested guest shows the
nested guest's), the kernel text words of its stack, and each address
named: the kernel's from SYSTEM_MAP, moved by the KASLR offset the rig's
/init printed ("### KSYM _text"), or as an offset from _text where the
map is Debian's stub; the modules' from their symbol tables (readelf), at
the .text address their last load printed ("### MODTEXT name addr", from
/init and from the selftests' vr_load()).  KO: the .ko files to name
addresses in (the built vmrapl.ko, the kernel's kvm and kvm-amd,
compressed or not).  Prints the dump.  --rename names the _text offsets
of a dump from a real System.map, or a /proc/kallsyms of any boot of the
same kernel.  --wedged compares two dumps taken 10 s apart and exits 0
when the guest is wedged outside vmrapl: some CPU had interrupts off in
both, and none that did had a vmrapl function on its stacks (run.sh
retries such a stall once, as it does a hang).  No part of it runs in the guest.
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile

KERNEL_TEXT_MAX = 64 << 20     # no kernel's text is larger
KERNEL_HALF = 0xff00000000000000   # 5-level paging; 4-level's is above
DECOMPRESS = {'.xz': ['xz', '-dc'], '.zst': ['zstd', '-qdc'],
              '.gz': ['gzip', '-dc']}


def hmp(sock_path, cmds, timeout=20.0):
    """Run HMP commands through QMP's human-monitor-command; a command
    is a string, or (string, cpu index).  Returns their outputs."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sock_path)
    f = s.makefile('rw')

    def reply():
        while True:
            line = f.readline()
            if not line:
                raise OSError('QMP closed the connection')
            msg = json.loads(line)
            if 'return' in msg or 'error' in msg:
                return msg

    f.readline()        # the greeting
    f.write(json.dumps({'execute': 'qmp_capabilities'}) + '\n')
    f.flush()
    reply()
    out = []
    for c in cmds:
        args = {'command-line': c if isinstance(c, str) else c[0]}
        if not isinstance(c, str):
            args['cpu-index'] = c[1]
        f.write(json.dumps({'execute': 'human-monitor-command',
                            'arguments': args}) + '\n')
        f.flush()
        msg = reply()
        out.append(msg.get('return') if 'return' in msg
                   else 'error: %s' % msg['error'].get('desc'))
    s.close()
    return out


def load_map(path):
    """(addr, name) of the text symbols of a System.map or kallsyms."""
    syms = []
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return syms
    for ln in text.splitlines():
        p = ln.split()
        if len(p) >= 3 and p[1] in ('t', 'T', 'w', 'W'):
            syms.append((int(p[0], 16), p[2]))
    syms.sort()
    return syms


def ko_syms(path, base):
    """A module file's .text functions at @base, compressed or not."""
    ext = os.path.splitext(path)[1]
    if ext not in DECOMPRESS:
        return ko_text_syms(path, base)
    with tempfile.NamedTemporaryFile(suffix='.ko') as t:
        subprocess.run(DECOMPRESS[ext] + [path], stdout=t, check=False)
        return ko_text_syms(t.name, base)


def ko_text_syms(path, base):
    """A module's functions in its .text section, at .text's address."""
    def readelf(opt):
        return subprocess.run(['readelf', '-W', opt, path],
                              capture_output=True, text=True,
                              check=False).stdout
    idx = None
    size = 0
    for ln in readelf('-S').splitlines():
        m = re.match(r'\s*\[\s*(\d+)\]\s+\.text\s+\S+\s+\S+\s+\S+\s+(\S+)',
                     ln)
        if m:
            idx = m.group(1)
            size = int(m.group(2), 16)
    syms = []
    for ln in readelf('-s').splitlines():
        p = ln.split()
        if len(p) == 8 and p[3] == 'FUNC' and p[6] == idx:
            syms.append((int(p[1], 16) + base, p[7]))
    syms.sort()
    # The end of .text, so that nothing past it is named.
    syms.append((base + size, None))
    return syms


def name(addr, tables):
    for tag, syms, lo, hi in tables:
        if not lo <= addr < hi:
            continue
        best = None
        for a, n in syms:
            if a > addr:
                break
            best = (a, n)
        if best and best[1]:
            return '%s+0x%x%s' % (best[1], addr - best[0], tag)
    return None


def rename(smap, dump):
    """Name a dump's _text+0x... offsets from a real System.map (or a
    /proc/kallsyms of any boot of the same kernel): prints the dump."""
    ksyms = load_map(smap)
    link = dict((n, a) for a, n in ksyms).get('_text')
    if link is None:
        print('hangdump: no _text in %s' % smap, file=sys.stderr)
        return 1
    table = [('', ksyms, link, link + KERNEL_TEXT_MAX)]

    def sub(m):
        return name(link + int(m.group(1), 16), table) or m.group(0)
    with open(dump) as f:
        for ln in f:
            print(re.sub(r'_text\+0x([0-9a-f]+)', sub, ln), end='')
    return 0


def is_stack(w):
    """A kernel address that is 8-byte aligned: a stack pointer, maybe
    (-cpu max has 5-level paging: the kernel's half starts at 0xff00...;
    CPU 0's idle task runs on init_stack, inside the kernel image)."""
    return w >= KERNEL_HALF and not w & 7


def iret_frame(words, i):
    """The ip, cs, flags, sp, ss an entry to the kernel pushed, at words[i]:
    the end of a pt_regs.  Matched by its shape, not by the entry stub's
    name (Debian's System.map is a stub): the kernel's or user space's
    code segment, flags with their always-set bit 1, a stack, its segment."""
    if i + 5 > len(words):
        return None
    ip, cs, flags, sp, ss = words[i:i + 5]
    if (cs, ss) == (0x10, 0x18) or (cs, ss) == (0x10, 0):
        where = 'kernel'
    elif (cs, ss) == (0x33, 0x2b):
        where = 'user'
    else:
        return None
    if not flags & 2 or flags >> 22 or not sp or sp & 7:
        return None
    if where == 'kernel' and (ip < KERNEL_HALF or not is_stack(sp)):
        return None
    return ip, flags, where


def read_words(sock, c, addr, n):
    """Up to n 8-byte words of vCPU c's memory from addr, to the first
    it cannot read.  HMP's x prints 16 bytes a line and drops a whole line
    it cannot read (memory_dump(), monitor/hmp-cmds-target.c, QEMU
    10.0.2), so the read starts 16-byte aligned: a stack's top word, 8
    bytes below the unmapped guard page when sp is 8 mod 16, would
    otherwise go with the guard page's half of its line."""
    start = addr & ~15
    count = n + (addr - start) // 8
    out = hmp(sock, [('x/%dgx 0x%x' % (count, start), c)])[0]
    mem = {}
    for ln in out.splitlines():
        m = re.match(r'\s*([0-9a-f]+):(.*)', ln)
        if not m:
            continue
        for k, w in enumerate(re.findall(r'0x([0-9a-f]{16})', m.group(2))):
            mem[int(m.group(1), 16) + 8 * k] = int(w, 16)
    words = []
    while len(words) < n and addr + 8 * len(words) in mem:
        words.append(mem[addr + 8 * len(words)])
    return words


def scan_stack(sock, c, sp, tables, label, depth):
    """Print the kernel text words on up to 4 KiB of a vCPU's stack from
    sp, and the first pt_regs on it (where an interrupt or exception came
    in, and whether interrupts were on there).  When the read ends at a
    page boundary (the guard page) on a stack address, that word is the
    top of an IRQ stack: the interrupted context's stack pointer, saved
    there by call_on_irqstack().  It is followed depth more times, for
    where the interrupt came in (the holder of a lock the CPU spins on)."""
    want = 512
    words = read_words(sock, c, sp, want)
    seen = 0
    regs_at = None
    for i, w in enumerate(words):
        n = name(w, tables)
        if n:
            print('    [%s+0x%03x] %s' % (label, 8 * i, n))
            seen += 1
        frame = None if regs_at is not None else iret_frame(words, i)
        if frame:
            ip, flags, where = frame
            regs_at = i
            print('    [%s+0x%03x] pt_regs: interrupted in %s at %s, '
                  'flags 0x%x (interrupts %s there)'
                  % (label, 8 * i, where, name(ip, tables) or '0x%x' % ip,
                     flags, 'on' if flags & 0x200 else 'OFF'))
    end = sp + 8 * len(words)
    if (depth and words and len(words) < want and not end & 0xfff and
            is_stack(words[-1]) and not sp <= words[-1] < end):
        print('    [%s+0x%03x] the top of an IRQ stack: the interrupted '
              'context\'s stack:' % (label, 8 * (len(words) - 1)))
        scan_stack(sock, c, words[-1], tables, 'irq-' + label, depth - 1)
    if not seen and tables:
        print('    (no kernel text on the first 4 KiB of its stack)')


def stuck_cpus(dump):
    """{cpu: (interrupts off, a vmrapl function on its stacks)} of a dump."""
    cpus = {}
    cur = None
    try:
        f = open(dump, errors='replace')
    except OSError:
        return cpus     # no dump: nothing is known to be wedged
    with f:
        for ln in f:
            m = re.match(r'--- CPU (\d+): RIP (.*); interrupts (on|OFF)', ln)
            if m:
                cur = int(m.group(1))
                cpus[cur] = [m.group(3) == 'OFF', '[vmrapl]' in m.group(2)]
            elif re.match(r'=== CPU', ln):
                cur = None
            elif cur is not None and ln.startswith('    [') and \
                    '[vmrapl]' in ln:
                cpus[cur][1] = True
    return cpus


def wedged(dump1, dump2):
    """The emulator's, not vmrapl's: some CPU had interrupts off in both
    dumps, and no CPU that did had a vmrapl function on its stacks in
    either.  Exit 0 then, and name them; 1 otherwise."""
    a, b = stuck_cpus(dump1), stuck_cpus(dump2)
    off = [c for c in a if c in b and a[c][0] and b[c][0]]
    ours = [c for c in off if a[c][1] or b[c][1]]
    if off and not ours:
        print('CPU %s: interrupts off in both dumps, no vmrapl function on '
              'their stacks' % ', '.join(map(str, off)))
        return 0
    if ours:
        print('CPU %s: interrupts off in both dumps, in vmrapl'
              % ', '.join(map(str, ours)))
    else:
        print('no CPU had interrupts off in both dumps')
    return 1


def main():
    if len(sys.argv) == 4 and sys.argv[1] == '--rename':
        return rename(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 4 and sys.argv[1] == '--wedged':
        return wedged(sys.argv[2], sys.argv[3])
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    sock, log, smap = sys.argv[1:4]
    kos = sys.argv[4:]
    try:
        with open(log, errors='replace') as f:
            console = f.read()
    except OSError:
        console = ''
    tables = []
    m = re.findall(r'### KSYM _text ([0-9a-f]+)', console)
    if m:
        text = int(m[-1], 16)
        ksyms = load_map(smap)
        link = dict((n, a) for a, n in ksyms).get('_text')
        if link is not None:
            ksyms = [(a - link + text, n) for a, n in ksyms]
        else:
            # Debian's /boot/System.map is a stub (the real one is in
            # the -dbg package): name kernel text by its offset, which
            # a real System.map or vmlinux resolves later.
            ksyms = [(text, '_text')]
        tables.append(('', ksyms, text, text + KERNEL_TEXT_MAX))
    texts = {}
    for mod, addr in re.findall(r'### MODTEXT (\S+) (?:0x)?([0-9a-f]+)',
                                console):
        texts[mod.replace('-', '_')] = int(addr, 16)
    for ko in kos:
        mod = os.path.basename(ko).split('.')[0].replace('-', '_')
        if mod not in texts or not os.path.exists(ko):
            continue
        syms = ko_syms(ko, texts[mod])
        if len(syms) > 1:
            tables.append((' [%s]' % mod, syms, texts[mod], syms[-1][0]))

    try:
        info = hmp(sock, ['info cpus'])[0]
    except OSError as e:
        print('hangdump: no monitor at %s: %s' % (sock, e))
        return 1
    cpus = [int(c) for c in re.findall(r'CPU #(\d+)', info)]
    print('=== hangdump: %d vCPUs (info cpus)' % len(cpus))
    print(info)
    for c in cpus:
        regs = hmp(sock, [('info registers', c)])[0]
        rip = re.search(r'RIP=([0-9a-f]+)', regs)
        rsp = re.search(r'RSP=([0-9a-f]+)', regs)
        rflags = re.search(r'RFL=([0-9a-f]+)', regs)
        print('\n=== CPU %d' % c)
        print(regs)
        if not rip or not rsp:
            continue
        rip = int(rip.group(1), 16)
        fl = int(rflags.group(1), 16) if rflags else 0
        where = name(rip, tables) or '0x%x' % rip
        if rip < KERNEL_HALF:
            where += ' (user space, or a nested guest)'
        print('--- CPU %d: RIP %s; interrupts %s' %
              (c, where, 'on' if fl & 0x200 else 'OFF'))
        scan_stack(sock, c, int(rsp.group(1), 16), tables, 'rsp', 2)
    if not m:
        print('hangdump: no kernel symbols (no "### KSYM _text" line in %s)'
              % log)
    return 0


if __name__ == '__main__':
    sys.exit(main())
