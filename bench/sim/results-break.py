#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# bench/RESULTS.md's "Breaking the model's assumptions", for results.sh:
#
#   results-break.py method      the method's paragraph on the model's
#                                options and the truths under each
#   results-break.py section DIR the section, from DIR's break-*.md (make
#                                full, or make break with BREAK_ARGS)
#
# The section: per workload, vmrapl's learned and per-core rows and the
# naive baseline under the default model and each option (occupied
# truth, 60 s windows, mean over seeds and the seeds' min-max), the
# static power vmrapl ended with and its net error, then what moves and
# why, every figure read from the runs.  It says when the runs are not
# of the full size (10 seeds x 300 s).
import os
import re
import subprocess
import sys
import time

# (file stem, column title, the option)
RUNS = [
    ('default', 'default model', ''),
    ('pc6-500', 'PC6 0.5 ms late', '--pc6-delay-us 500'),
    ('pc6-3000', 'PC6 3 ms late', '--pc6-delay-us 3000'),
    ('no-pc6', 'no PC6', '--no-pc6'),
    ('update-500', 'update 0.5 ms', '--update-us 500'),
    ('update-2000', 'update 2 ms', '--update-us 2000'),
    ('esu-16', 'ESU 16', '--esu 16'),
]
# comparison runs: the core told the counter's real lag
LAG_RUNS = [
    ('update-500-lag', '--update-us 500 --lag-us 250'),
    ('update-2000-lag', '--update-us 2000 --lag-us 1000'),
]
LEARN = 'vmrapl (learned static)'
CORE = 'vmrapl per-core (core energy)'
HI = 'vmrapl p_static +25 %'
LO = 'vmrapl p_static -25 %'
NAIVE = 'naive (5 s CPU-time share)'
KEPLER = 'kepler 0.10'
FULL = (10, 300)

METHOD = """\
**The model's options** (bench/sim/model.c; off in every table but those
of "Breaking the model's assumptions", "The variant matrix" and
"Sensitivity sweeps").
`--pc6-delay-us D`: after the last core of a package idles, the package
keeps drawing its uncore for D us, then its floor alone (a package
C-state entered late, as PC6 is); `--no-pc6`: it never draws its floor
alone (floor + uncore while every core idles); `--update-us U` and
`--update-jitter PCT`: the package and per-core counters update every
U us +- PCT % (default 976.6 us +- 5 %); `--esu N`: the counters count
2^-N J (default 14; AMD Zen: 16), and vmrapl is told N as the module
reads it.  Under every option the three truths are the same function of
what runs, none of them vmrapl's formula: a task on a core while n cores
run gets its core's power plus uncore / n (*dynamic-only*), that plus
floor / ncpus (*occupied*; the floor is the model's own, never one
learned from a counter), or the package's power / n (*busy-share*).
Whatever a package draws while no core runs (its floor, and the uncore
it still draws in the PC6 delay or without PC6) is nobody's under all
three: idle energy, not the last runner's.  The update interval and the
ESU change what the counters show, not what is drawn: the truths are the
default model's.  Under `--no-pc6` the uncore could be called static and
split by occupied time; that truth would be what vmrapl learns from idle
time (floor + uncore), a check sharing the assumption it checks, so it is
not used.
`--smt`: two hardware threads per core (CPUs 2k and 2k + 1 of a
package), the frequency following the active cores; a core with two
runners draws 0.65 x the sum of their intensities x (f / f_all)^2 (a
second equal thread adds 30 %), and one AMD-like counter per core counts
the whole core, read by both threads (vmrapl's per-core row is told the
siblings, `vr_cpu_set_sibling()`, as the module on AMD with SMT).  The
truths: a runner's part of its core's power is the core's power x its
own intensity / the sum of both runners'; dynamic-only adds uncore / n,
n the busy threads; occupied adds floor / ncpus per occupied thread
(ncpus: the package's threads); busy-share is the package's power / n.
`--leakage`: the floor and a running core's static part (1 W at the
all-core frequency) grow with voltage (linear in f: 0.6 + 0.4 f / f_all
while cores run, 1 while none does) and temperature (a package
temperature that follows its power first-order, 0.3 K/W, tau 5 s,
stepped every 10 ms; leakage + 1 %/K, linear).  The truths: occupied
splits the floor of each instant per occupied CPU; a core's leakage
while it runs is part of its core's power, its runner's.
`--mem-uncore`: each task has a memory traffic by its intensity
(memory-bound 10 GB/s, normal 3, vector-heavy 2); the uncore draws
0.3 W per GB/s of what runs (in the package counter, in no core's), and
a DRAM domain counter of its own (the fixed server DRAM unit, 2^-16 J,
32 bits) counts 3 W idle + 0.5 W per GB/s; vmrapl is fed it as its DRAM
domain and splits it as it splits the package's energy.  The truths: the
traffic's uncore uplift and DRAM energy are the task's whose traffic it
is; the DRAM idle part is split per occupied CPU under occupied (as the
floor), nobody's under dynamic-only, and part of the DRAM power split
over the busy CPUs under busy-share; with no core running, nobody's.
"""


def parse(path):
    """{'head': first line, 'rows': {(wl, row): [occ, dyn, busy, own,
    net]}, 'books': {wl: (floor W, static W)}, 'wls': [...]}"""
    d = {'rows': {}, 'books': {}, 'wls': []}
    sec = None
    wl = None
    with open(path) as f:
        lines = f.read().split('\n')
    d['head'] = lines[0]
    for line in lines:
        if line.startswith('### '):
            sec = line
            continue
        if not line.startswith('| ') or '---' in line:
            continue
        c = [x.strip() for x in line.strip().strip('|').split('|')]
        if sec.startswith('### Per-VM error over 60 s') and len(c) == 7:
            if c[0] == 'workload':
                continue
            if c[0]:
                wl = c[0]
                d['wls'].append(wl)
            d['rows'][(wl, c[1])] = c[2:]
        elif sec.startswith("### vmrapl's books") and len(c) > 4 and \
                c[0] != 'workload':
            d['books'][c[0]] = (float(c[2]), float(c[3]))
    return d


def mean(cell):
    """'1.73 (1.54–2.04)' -> 1.73; '-' -> None."""
    m = re.match(r'[-+]?[0-9.]+', cell)
    return float(m.group(0)) if m else None


def size(d):
    m = re.search(r'(\d+) seeds? per workload, (\d+) s each', d['head'])
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def fmt(x):
    if x is None:
        return '-'
    return '%.2f' % x if abs(x) < 10 else '%.1f' % x


def commit_of(dir):
    for name in ('break-commit.txt', 'commit.txt'):
        p = os.path.join(dir, name)
        if os.path.exists(p):
            return open(p).read().strip()
    try:
        return subprocess.run(['git', 'describe', '--always', '--dirty'],
                              capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__))
                              ).stdout.strip() or 'unknown'
    except OSError:
        return 'unknown'


def section(dir):
    r = {}
    for stem, _, _ in RUNS:
        p = os.path.join(dir, 'break-%s.md' % stem)
        if not os.path.exists(p) or not os.path.getsize(p):
            return []
        r[stem] = parse(p)
    lag = {}
    for stem, _ in LAG_RUNS:
        p = os.path.join(dir, 'break-%s.md' % stem)
        if os.path.exists(p) and os.path.getsize(p):
            lag[stem] = parse(p)
    D = r['default']
    wls = D['wls']
    seeds, secs = size(D)
    day = time.strftime('%Y-%m-%d', time.gmtime(os.path.getmtime(
        os.path.join(dir, 'break-default.md'))))

    def cell(stem, wl, row, k=0, src=r):
        return src[stem]['rows'].get((wl, row), ['-'] * 5)[k]

    def m(stem, wl, row, k=0, src=r):
        return mean(cell(stem, wl, row, k, src))

    out = ['## Breaking the model\'s assumptions', '']
    out.append(
        'The tables above run a model that agrees with two assumptions an '
        'accountant of RAPL energy is tempted to make: a package draws its '
        'floor alone the instant its last core idles, so an all-idle '
        'stretch shows the floor exactly; and the counter updates about '
        'every 1 ms.  vmrapl makes neither: it measures each counter\'s '
        'update interval when a package comes online (kmod/vr_step.c; '
        'the simulator polls a copy of each package counter at the start, '
        'as kmod/engine_step.c does at load) and takes its lag share from '
        'it, and it learns the floor from the settled part of all-idle '
        'stretches (kmod/vr_static.c).  Here the model breaks the two '
        'assumptions one option at a time, each '
        'run on the default model\'s seeds and workloads ("The model\'s '
        'options" above says what the truths are under each; the runs are '
        'not the same instants: the package counters\' update jitter draws '
        'from the schedule\'s random stream, and an option that changes '
        'when the counters update or the package\'s power changes changes '
        'the draws).  The module is the same in every column: the core files are those of the '
        'tables above.  The naive baseline (bench/sim/alg_naive.c, no '
        'release): every 5 s, each package\'s counter delta split by the '
        'VMs\' exact CPU time on the package over every task\'s CPU time '
        'on it (host tasks get their share, idle time none).')
    out.append('')
    if (seeds, secs) == FULL:
        out.append('**Size**: %d seeds x %d s per workload, as the tables '
                   'above.' % (seeds, secs))
    else:
        out.append(
            '**Reduced size: %d seed%s x %d s per workload** (the tables '
            'above: %d x %d).  Run on %s from commit %s with `--seeds %d '
            '--secs %d` (`make -C bench/sim break BREAK_ARGS=...`, or '
            '`full SIM_ARGS=...`); `make bench` runs this matrix at %d '
            'seeds x %d s.' %
            (seeds, 's' if seeds != 1 else '', secs, FULL[0], FULL[1], day,
             commit_of(dir), seeds, secs, FULL[0], FULL[1]))
    out.append('')
    out.append('Commands: `./vrsim` with nothing (the default model), then '
               'with ' + ', '.join('`%s`' % o for _, _, o in RUNS[1:]) +
               '; bench/sim/out/break-*.md and .json.')
    out.append('')
    out.append('Per-VM error against the occupied truth, 60 s windows, % '
               '(the mean over seeds of each seed\'s mean, the seeds\' '
               'min–max):')
    out.append('')
    out.append('| workload | row | ' +
               ' | '.join(t for _, t, _ in RUNS) + ' |')
    out.append('|---|---|' + '---:|' * len(RUNS))
    for wl in wls:
        for i, (row, name) in enumerate(((LEARN, 'vmrapl (learned)'),
                                         (CORE, 'vmrapl per-core'),
                                         (NAIVE, 'naive baseline'))):
            out.append('| %s | %s | ' % (wl if not i else '', name) +
                       ' | '.join(cell(s, wl, row) for s, _, _ in RUNS) +
                       ' |')
    out.append('')
    ahead = []
    for s, t, _ in RUNS:
        behind = [wl for wl in wls
                  if not (m(s, wl, LEARN) is not None and
                          m(s, wl, NAIVE) is not None and
                          m(s, wl, LEARN) < m(s, wl, NAIVE))]
        ahead.append((t, behind))
    if all(b == ahead[0][1] for _, b in ahead):
        out.append('vmrapl (learned) has a lower error than the naive '
                   'baseline on %d of %d workloads, with the default model '
                   'and under every option; not on %s.' % (
                       len(wls) - len(ahead[0][1]), len(wls),
                       ', '.join(ahead[0][1]) or 'none'))
    else:
        out.append('vmrapl (learned) has a lower error than the naive '
                   'baseline, of %d workloads: ' % len(wls) + '; '.join(
                       '%s %d (not on %s)' % (t, len(wls) - len(b),
                                              ', '.join(b) or 'none')
                       for t, b in ahead) + '.')
    out.append('')
    out.append('What vmrapl (learned) ended with: its static power (W, mean '
               'over packages and seeds; 0: none learned, borrowed or '
               'fitted) and its net error (the VMs\' estimates summed '
               'against their occupied truth, whole run, mean over seeds):')
    out.append('')
    out.append('| workload | model floor W | ' +
               ' | '.join(t for _, t, _ in RUNS) + ' |')
    out.append('|---|---:|' + '---:|' * len(RUNS))
    for wl in wls:
        cells = []
        for s, _, _ in RUNS:
            b = r[s]['books'].get(wl)
            cells.append('%.1f W, %s' % (b[1], cell(s, wl, LEARN, 4))
                         if b else '-')
        out.append('| %s | %.1f | %s |' % (wl, D['books'][wl][0],
                                           ' | '.join(cells)))
    out.append('')

    # What moves, and why: every figure from the runs above.
    def occ(s, wl, row=LEARN):
        return fmt(m(s, wl, row))

    def net(s, wl, row=LEARN):
        return cell(s, wl, row, 4)

    def static(s, wl):
        return '%.1f W' % r[s]['books'][wl][1]

    b = 'bursty'
    if b not in wls:
        return out
    still = [wl for wl in wls
             if all(cell(s, wl, LEARN) == cell('default', wl, LEARN)
                    for s in ('pc6-500', 'pc6-3000', 'no-pc6'))]
    floor = D['books'][b][0]
    out.append('**What moves, and why.**')
    out.append('')
    if still:
        out.append(
            '- *Packages that never idle* (%s): the PC6 options leave '
            'vmrapl\'s rows as they were, digit for digit: no package is '
            'ever all idle, so none is ever in the delay or short of its '
            'floor.  What they miss, they miss in every column ("Why the '
            'targets miss").' % ', '.join(still))
    out.append(
        '- *The floor reached late* (`--pc6-delay-us`).  An all-idle '
        'stretch holds, besides the floor, what the package draws before '
        'it reaches its C-state.  vmrapl files the first epoch of each '
        'stretch by length; stretches that have settled lie on a line, '
        'E = floor x T + C, whose C is that extra energy, found from the '
        'stretches themselves with no constant for the delay '
        '(`vr_settle_*()`, kmod/vr_static.c).  Learning subtracts C, and '
        'the split gives it to idle once per stretch, not to the runners '
        'of the burst before it.  On %s its static power was %s with the '
        'default model (model floor %.1f W), %s with a 0.5 ms delay and '
        '%s with 3 ms; net %s, %s and %s, error %s, %s and %s %% (phases '
        '%s, %s and %s %%).  Stretches shorter than 2 ms never show the '
        'delay, so a package that idles only for moments learns a floor '
        'high by what the delay holds.  The rows with a fixed static power '
        'learn nothing and show the split\'s part alone: on %s, p_static '
        '-25 %% went from %s net to %s and %s, +25 %% from %s to %s and '
        '%s.' % (
            b, static('default', b), floor, static('pc6-500', b),
            static('pc6-3000', b),
            net('default', b), net('pc6-500', b), net('pc6-3000', b),
            occ('default', b), occ('pc6-500', b), occ('pc6-3000', b),
            occ('default', 'phases'), occ('pc6-500', 'phases'),
            occ('pc6-3000', 'phases'), b,
            net('default', b, LO), net('pc6-500', b, LO),
            net('pc6-3000', b, LO), net('default', b, HI),
            net('pc6-500', b, HI), net('pc6-3000', b, HI)))
    out.append(
        '- *The floor never drawn alone* (`--no-pc6`).  vmrapl learns the '
        'floor plus the uncore as its static power (%s on %s, against the '
        'model\'s %.1f W floor) and charges it per occupied CPU, where the '
        'occupied truth charges the floor per occupied CPU and the uncore '
        'to the runners, uncore / n: with few cores running, their share '
        'of it is large, and the VMs are charged too little (net %s, '
        'error %s %%).  No counter shows the floor alone there: '
        'Documentation/operations.rst recommends the busy policy, judged '
        'against busy-share in "Targets of issue 36, judged".  Here the '
        'truth is a choice (above): under the '
        'dynamic-only truth vmrapl\'s %s error is %s %% (default model: '
        '%s %%), under busy-share %s %% (%s %%).' % (
            static('no-pc6', b), b, floor, net('no-pc6', b),
            occ('no-pc6', b), b, fmt(m('no-pc6', b, LEARN, 1)),
            fmt(m('default', b, LEARN, 1)), fmt(m('no-pc6', b, LEARN, 2)),
            fmt(m('default', b, LEARN, 2))))
    text = (
        '- *Another update interval* (`--update-us`).  vmrapl measures '
        'the interval and takes its lag share from it: the mean age of a '
        'read, E[L^2] / (2 E[L]) over the measured interval and its spread '
        '(`vr_step_lag_ns()`).  Updated every 0.5 ms: %s %% on %s '
        '(mostly-idle\'s 1 ms bursts %s %%), its static power %s; every '
        '2 ms: %s %% (mostly-idle %s %%), %s.' % (
            occ('update-500', b), b, occ('update-500', 'mostly-idle'),
            static('update-500', b), occ('update-2000', b),
            occ('update-2000', 'mostly-idle'), static('update-2000', b)))
    if len(lag) == len(LAG_RUNS):
        text += (
            '  Handed the lag by hand instead (`--lag-us 250` with '
            '`--update-us 500`, `--lag-us 1000` with `--update-us 2000`: '
            'runs of their own, bench/sim/out/break-update-*-lag.md), it '
            'scores %s %% and %s %% on %s (mostly-idle %s and %s %%).  '
            'What is left at 2 ms is not the lag\'s size: a burst\'s '
            'lag list is one epoch deep (`vr_lag_give()`, kmod/vr_lag.c), '
            'while a 2 ms counter carries a burst\'s energy into two 1 ms '
            'epochs after it.' % (
                fmt(m('update-500-lag', b, LEARN, src=lag)),
                fmt(m('update-2000-lag', b, LEARN, src=lag)), b,
                fmt(m('update-500-lag', 'mostly-idle', LEARN, src=lag)),
                fmt(m('update-2000-lag', 'mostly-idle', LEARN, src=lag))))
    out.append(text)
    dmax = max((abs(m('esu-16', wl, row) - m('default', wl, row))
                for wl in wls for row in (LEARN, CORE)
                if m('esu-16', wl, row) is not None and
                m('default', wl, row) is not None), default=0)
    out.append(
        '- *Another unit* (`--esu 16`).  No effect worth the name: vmrapl\'s '
        'two rows are at most %s points from the default model\'s on any '
        'workload.  A unit of 15 uJ instead of 61 uJ against the tens of '
        'millijoules of a 1 ms epoch, and the reads are differences of one '
        'cumulative register, so the rounding does not add up.' %
        ('%.2f' % dmax))
    h = 'heterogeneous'
    if h in wls:
        over = [t for s, t, _ in RUNS
                if not re.search(r'–([0-9.]+)\)', cell(s, h, CORE)) or
                float(re.search(r'–([0-9.]+)\)',
                                cell(s, h, CORE)).group(1)) > 5]
        out.append(
            '- *The per-core row* is hit by the options as the learned row '
            'is: it learns its static power the same way.  On %s, the '
            'workload it is judged on (target 2), its per-core weights '
            'carry it: %s %% with the default model; %s.  Its worst seed '
            'is above target 2\'s 5 %% (60 s windows) under: %s.' % (
                h, occ('default', h, CORE),
                ', '.join('%s %s %%' % (t, occ(s, h, CORE))
                          for s, t, _ in RUNS[1:]),
                ', '.join(over) or 'none'))
    out.append(
        '- *The naive baseline* models neither idle time nor the '
        'counter\'s lag: what moves it is what the options change in the '
        'energy it splits.  On %s: %s %% with the default model, %s.' % (
            b, occ('default', b, NAIVE),
            ', '.join('%s %s %%' % (t, occ(s, b, NAIVE))
                      for s, t, _ in RUNS[1:])))
    out.append('')
    out.append(
        'Reported as measured, not tuned: the module\'s accounting core is '
        'the one of the tables above.')
    return out


def main():
    if sys.argv[1:2] == ['method']:
        sys.stdout.write(METHOD)
        return
    if len(sys.argv) == 3 and sys.argv[1] == 'section':
        out = section(sys.argv[2])
        if out:
            print('\n'.join(out))
        return
    sys.exit('usage: results-break.py method | section DIR')


if __name__ == '__main__':
    main()
