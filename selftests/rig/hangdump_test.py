#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""hangdump.py's stack walk against a monitor that reads memory as QEMU
10.0.2's HMP x does (memory_dump(), monitor/hmp-cmds-target.c): 16 bytes
a line, a line it cannot read whole is "Cannot access memory" and ends
the dump.

The case is the one the rig's wedged guests showed: every vCPU spinning in
a timer interrupt on its IRQ stack, sp 8 mod 16, the stack's top word (the
interrupted context's stack pointer, call_on_irqstack()) 8 bytes below
the unmapped guard page.  The walk must follow it to the entry stub's
pt_regs and say whether the interrupted context had interrupts on.

Usage: hangdump_test.py (exit 0: all cases pass)
"""
import contextlib
import io
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hangdump  # noqa: E402

TEXT = 0xffffffff81000000
SYMS = [(TEXT, '_text'),
        (TEXT + 0x1000, 'asm_sysvec_apic_timer_interrupt'),
        (TEXT + 0x2000, 'sysvec_apic_timer_interrupt'),
        (TEXT + 0x3000, '__sysvec_apic_timer_interrupt'),
        (TEXT + 0x4000, 'hrtimer_interrupt'),
        (TEXT + 0x5000, 'ktime_get_update_offsets_now'),
        (TEXT + 0x6000, 'read_hpet'),
        (TEXT + 0x7000, 'do_idle')]
NAMED = [('', SYMS, TEXT, TEXT + 0x8000)]
# Debian's /boot/System.map is a stub: the dump names offsets from _text.
STUB = [('', [(TEXT, '_text')], TEXT, TEXT + 0x8000)]
IRQ_LO = 0xff8aa5ed40000000        # a 16 KiB IRQ stack; its guard page above
TASK_LO = 0xff8aa5ed40200000       # the interrupted task's stack


def sym(name, off):
    return dict((n, a) for a, n in SYMS)[name] + off


class Monitor:
    """Memory as a dict of 8-byte words; HMP's x/Ngx on top of it."""

    def __init__(self):
        self.mem = {}

    def put(self, addr, words):
        for i, w in enumerate(words):
            self.mem[addr + 8 * i] = w

    def hmp(self, _sock, cmds, timeout=20.0):
        out = []
        for c in cmds:
            m = re.match(r'x/(\d+)gx 0x([0-9a-f]+)$', c[0])
            n, addr = int(m.group(1)), int(m.group(2), 16)
            text = ''
            while n > 0:
                text += '%016x:' % addr
                line = min(n, 2)
                if any(addr + 8 * k not in self.mem for k in range(line)):
                    text += ' Cannot access memory\n'
                    break
                text += ''.join(' 0x%016x' % self.mem[addr + 8 * k]
                                for k in range(line)) + '\n'
                addr += 8 * line
                n -= line
            out.append(text)
        return out


def wedged_in_timer_irq(flags):
    """A vCPU spinning in read_hpet from the timer interrupt, over a task
    that was in read_hpet itself with the given flags."""
    mon = Monitor()
    top = IRQ_LO + 0x4000
    mon.put(IRQ_LO, [0] * 0x800)           # the IRQ stack, all mapped
    task_sp = TASK_LO + 0x3e00
    mon.put(TASK_LO, [0] * 0x800)
    sp = top - 0xd8                        # 8 mod 16, as in the dumps
    mon.put(sp + 0x10, [sym('ktime_get_update_offsets_now', 0x106)])
    mon.put(sp + 0x58, [sym('hrtimer_interrupt', 0x8f)])
    mon.put(sp + 0xb0, [sym('__sysvec_apic_timer_interrupt', 0x55)])
    mon.put(sp + 0xc8, [sym('sysvec_apic_timer_interrupt', 0x6c)])
    mon.put(sp + 0xd0, [task_sp])          # the stack's top word
    # The task's stack: the entry stub's return address, then pt_regs
    # (r15 .. orig_ax, ip, cs, flags, sp, ss).
    regs = [0] * 21
    regs[16] = sym('read_hpet', 0x79)
    regs[17] = 0x10
    regs[18] = flags
    regs[19] = task_sp + 0x100
    regs[20] = 0x18
    mon.put(task_sp, [sym('asm_sysvec_apic_timer_interrupt', 0x1a)] + regs)
    return mon, sp


def walk(mon, sp, tables):
    hangdump.hmp = mon.hmp
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        hangdump.scan_stack(None, 0, sp, tables, 'rsp', 2)
    return buf.getvalue()


def main():
    failed = 0
    for tables, ip in ((NAMED, 'read_hpet+0x79'), (STUB, '_text+0x6079')):
        for flags, state in ((0x46, 'OFF'), (0x246, 'on')):
            mon, sp = wedged_in_timer_irq(flags)
            out = walk(mon, sp, tables)
            want = ('interrupted in kernel at %s, flags 0x%x (interrupts '
                    '%s there)' % (ip, flags, state))
            if "the interrupted context's stack" in out and want in out:
                print("ok: the IRQ stack's top word, next to its guard "
                      'page, followed to pt_regs: %s' % want)
            else:
                print('FAIL: the walk did not reach "%s"; it printed:\n%s'
                      % (want, out))
                failed += 1
    # A read that starts 16-byte aligned returns the words asked for, from
    # the address asked for, and stops before the guard page.
    mon, sp = wedged_in_timer_irq(0x46)
    words = hangdump.read_words(None, 0, sp, 256)
    if len(words) == 0xd8 // 8 and words[0xc8 // 8] == \
            sym('sysvec_apic_timer_interrupt', 0x6c):
        print('ok: read_words from sp 8 mod 16: %d words, to the guard page'
              % len(words))
    else:
        print('FAIL: read_words from sp 8 mod 16 returned %d words'
              % len(words))
        failed += 1
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
