#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The summary at the top of bench/RESULTS.md: what was measured, against
# which truths, the targets and which were met, in one table, read from
# the sections below it (the simulator's "Targets, judged" and "Core hot
# path", the rig's target lines).  It goes between the lines
# <!-- summary:begin --> and <!-- summary:end -->, right after the title;
# an old summary there is replaced, so running it again changes nothing.
#
# Every generator of the file runs it last: bench/sim/results.sh (the
# simulator part, whose summary says the rig part is not in it yet),
# bench/rig/collect.sh (both modes) and bench/rig/keep-rig.sh.
#
# Usage: bench/summary.py FILE     (rewrites FILE in place)
#        bench/summary.py -        (stdin to stdout)
import re
import sys

BEGIN = '<!-- summary:begin -->'
END = '<!-- summary:end -->'


def strip_summary(text):
    lines = text.split('\n')
    if BEGIN in lines and END in lines:
        b, e = lines.index(BEGIN), lines.index(END)
        if b < e:
            del lines[b:e + 1]
            # the blank line the summary left after it
            if b < len(lines) and lines[b] == '':
                del lines[b]
    return lines


def find(pattern, text, flags=0):
    m = re.search(pattern, text, flags)
    return m


def words(s):
    """'steady bursty lone' -> 'steady, bursty, lone'."""
    return ', '.join(s.split())


def summary(text):
    rows = []
    note = []

    seeds = find(r'(\d+) seeds per workload, (\d+) s each', text)
    seeds_s = ('%s seeds x %s s per workload' % seeds.groups()) if seeds else 'seeds: see below'

    # Simulator targets ("## Targets, judged", bench/sim/results.sh).
    m = find(r'^- \*\*2 % on every homogeneous.*?\*\*: met on (\d+) of (\d+) workloads\.'
             r'  Missed: (.*)\.$', text, re.M)
    if m:
        y, n, miss = m.groups()
        rows.append(('per-VM energy error, vmrapl with the static power it learns '
                     '(nothing handed in), %s homogeneous workloads' % n,
                     'occupied', '<= 2 % on every workload and seed, in 1 s, 5 s and 60 s windows',
                     '%s of %s workloads; missed: %s' % (y, n, words(miss)),
                     'yes' if y == n else '**no**'))
    m = find(r'^- \*\*5 % on heterogeneous.*?\*\*: (met|NOT met) \((.*)\)\.$', text, re.M)
    if m:
        met, what = m.groups()
        what = re.sub(r'^heterogeneous: ', '', what)
        rows.append(('per-VM energy error, vmrapl with per-core energy weighting '
                     '(AMD-like per-core counters), the heterogeneous workload',
                     'occupied', '<= 5 %', what, 'yes' if met == 'met' else '**no**'))
    m = find(r'^- \*\*Ahead of every anchor.*?\*\*: on (\d+) of (\d+) workloads under all three'
             r' truths\.  Not ahead on: (.*)\.$', text, re.M)
    if m:
        y, n, miss = m.groups()
        rows.append(('vmrapl (learned static power) against QEMU vmsr 10, Scaphandre 1.0.3 '
                     '(as coded and with its units fixed) and Kepler 0.10, %s workloads' % n,
                     'occupied, dynamic-only, busy-share (60 s)',
                     'a lower error than the best of them on every workload, under every truth',
                     '%s of %s workloads; not on: %s' % (y, n, words(miss)),
                     'yes' if y == n else '**no**'))

    # Issue 36's targets ("## Targets of issue 36, judged",
    # bench/sim/results-matrix.py): one line each, one form.
    sec = text.split('## Targets of issue 36, judged', 1)
    if len(sec) == 2:
        for m in re.finditer(r'^- \*\*(.+?)\*\* \(truth: (.+?); target: (.+?)\):'
                             r' (.+): (met|\*\*NOT met\*\*|stated)\.$',
                             sec[1].split('\n## ', 1)[0], re.M):
            what, truth, target, res, met = m.groups()
            # the section lists every miss; the summary counts them
            miss = re.search(r'; missed: (.*)$', res)
            if miss:
                res = res[:miss.start()] + '; missed: %d (listed in "Targets of ' \
                    'issue 36, judged")' % len(miss.group(1).split(', '))
            rows.append((what, truth, target, res,
                         {'met': 'yes', 'stated': '-'}.get(met, '**no**')))

    # The core's hot path (callgrind), "Targets (issue 12)" in "## Core hot path".
    cg = {}
    for ev in ('ev_untracked', 'ev_switch_in', 'ev_switch_out'):
        m = find(r'^\| [^|]*\(%s\) \| <= (\d+) \| ([0-9.]+) \| (yes|NO) \|$' % ev, text, re.M)
        if m:
            cg[ev] = m.groups()
    if 'ev_untracked' in cg:
        t, v, ok = cg['ev_untracked']
        rows.append(('instructions of the accounting core per switch of an untracked task '
                     '(callgrind, bench/sim/hotpath.c)', '-', '<= %s' % t, v,
                     'yes' if ok == 'yes' else '**no**'))
    if 'ev_switch_in' in cg and 'ev_switch_out' in cg:
        ti, vi, oki = cg['ev_switch_in']
        to, vo, oko = cg['ev_switch_out']
        rows.append(('instructions of the accounting core per switch of a vCPU in / out',
                     '-',
                     '<= %s / <= %s' % (ti, to), '%s / %s' % (vi, vo),
                     'yes' if oki == oko == 'yes' else '**no**'))

    # The rig (bench/rig/collect.sh).
    rig = False
    m = find(r'^Target \(at most (\d+) more instructions per untracked switch than unloaded, L - U,'
             r' median of the windows\): (met|\*\*NOT met\*\*), median ([-+0-9]+) \(L/U ([0-9.]+)\)',
             text, re.M)
    if not m:
        # A section collect.sh wrote under the earlier target (L/U <= 1.01)
        # has the same measure, L - U: judged here against +20.
        m = find(r'^Target \(at most 1 % more instructions per untracked switch, L against U\):'
                 r' (?:met|\*\*NOT met\*\*), median ([0-9.]+) \(\+(\d+) instructions per switch\)',
                 text, re.M)
        if m:
            ratio, extra = m.groups()
            m = ('20', 'met' if int(extra) <= 20 else 'NOT met', '+' + extra, ratio)
    elif m:
        m = m.groups()
    if m:
        rig = True
        t, met, extra, ratio = m
        rows.append(('instructions per context switch of the whole kernel, vmrapl loaded '
                     'with nothing attached, track_all on (test rig, a TCG plugin counts them)',
                     'vmrapl unloaded', '<= +%s per switch' % t,
                     'median %s per switch (L/U %s)' % (extra, ratio),
                     'yes' if met == 'met' else '**no**'))
    m = find(r'^Target \(>= ([0-9.]+) of unloaded with 64 VMs attached\): (met|NOT met)[^,]*,'
             r' median ([0-9.]+)\.', text, re.M)
    if m:
        rig = True
        t, met, med = m.groups()
        rows.append(('context switches per second with 64 idle VMs attached (test rig, '
                     'timed under TCG: noisy)', 'vmrapl unloaded', '>= %s times' % t,
                     'median %s' % med, 'yes' if met == 'met' else '**no**'))
    m = find(r'^Counter reads per package from (\d+) to (\d+) VMs: x([0-9.]+) \(target: must not'
             r' grow.*?\): (met|NOT met)\.', text, re.M)
    if m:
        rig = True
        a, b, x, met = m.groups()
        rows.append(('package counter reads per second, %s to %s attached VMs (test rig)' % (a, b),
                     '-', 'must not grow with the VMs', 'x%s' % x,
                     'yes' if met == 'met' else '**no**'))

    out = [BEGIN,
           '<!-- generated by bench/summary.py from the sections below: do not edit -->',
           '## Summary',
           '',
           '**What was measured.**  Per-VM energy accuracy in a trace-driven simulator'
           ' (bench/sim: 2 packages x 8 CPUs, %s), whose power model is its own'
           ' (bench/sim/model.c, nothing shared with kmod/).  It runs vmrapl\'s real'
           ' accounting core, which learns the static power itself, next to QEMU\'s vmsr,'
           ' Scaphandre\'s qemu exporter and Kepler\'s ratio model, re-implemented from'
           ' their released code, and a naive baseline; under the default model and under'
           ' model options that break its assumptions (the variant matrix), with each of'
           ' vmrapl\'s static policies judged against its own truth.  Then the cost: the core\'s instructions per event'
           ' (callgrind), and in the test rig (Debian\'s kernel under QEMU TCG) the whole'
           ' kernel path per context switch and the counter reads as VMs are added.'
           % seeds_s,
           '',
           '**The truths.**  *Occupied*: a package\'s idle floor split by occupied CPU'
           ' time, plus each task\'s own dynamic energy (vmrapl\'s default policy).'
           '  *Dynamic-only*: no floor charged.  *Busy-share*: the package\'s whole power'
           ' split by busy time.  Errors are mean absolute per-VM errors, % of the'
           ' truth\'s energy.',
           '',
           '| what | truth or baseline | target | result | met |',
           '|---|---|---|---|---|']
    for r in rows:
        out.append('| ' + ' | '.join(r) + ' |')
    if not rig and '(rig)\n' in text:
        note.append('The rig\'s sections below have no target figures: they say what their'
                    ' run produced.')
    elif not rig:
        note.append('The rig\'s targets are not in this file: the rig part of `make bench`'
                    ' (bench/rig/collect.sh) adds them.')
    elif 'were not rerun with this simulator run' in text:
        note.append('The rig\'s rows come from an earlier rig run than the simulator\'s;'
                    ' each rig section below says which.')
    note.append('Below: where each section comes from, the machine and the exact commands;'
                ' then per workload and algorithm "Per-VM error over 60 s windows, under each'
                ' truth", and "Why the targets miss".')
    out.append('')
    out.append('  '.join(note))
    out.append(END)
    return out


def apply(text):
    lines = strip_summary(text)
    body = '\n'.join(lines)
    s = summary(body)
    # after the title (the first line), with a blank line on each side
    at = 1 if lines and lines[0].startswith('# ') else 0
    rest = lines[at:]
    while rest and rest[0] == '':
        rest.pop(0)
    return '\n'.join(lines[:at] + [''] + s + [''] + rest)


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: bench/summary.py FILE|-')
    if sys.argv[1] == '-':
        sys.stdout.write(apply(sys.stdin.read()))
        return
    path = sys.argv[1]
    text = open(path).read()
    new = apply(text)
    if new != text:
        with open(path, 'w') as f:
            f.write(new)


if __name__ == '__main__':
    main()
