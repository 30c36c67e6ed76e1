#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the project's documents against the tree ("make doc-check").

The documents: README.md, bench/RESULTS.md, Documentation/*.rst and the
man pages (every tracked *.1 .. *.8).  For each, what it quotes as code
(Markdown inline code and fenced blocks, RST inline literals and literal
blocks, a man page's bold text and .nf/.EX blocks) is checked:

  link     a Markdown link or image, an RST hyperlink, image, figure or
           include resolves, and a project tool's man page named as
           vmraplctl(8) is in the tree.
  path     every quoted repo path (one with a "/" or a source file's
           extension: .c, .sh, .rst, ...) resolves: from the top of the
           tree, from the document's own folder or, for a bare file name,
           anywhere in the tree; globs must match and {a,b} expands; a
           built .o/.ko/.so/.a stands where its source is.  Absolute
           paths, URLs, build/ outputs and paths with placeholders
           (<KVER>, $X) are not looked for, nor another tree's: those in
           FOREIGN_PATHS, and a path whose first folder is not the tree's
           (target/i386/kvm) unless it names a source file, which must
           then end some path of the tree (linux/vmrapl.h).
  make     every "make TARGET" (and "make -C DIR TARGET") names a target
           of the top-level Makefile (of DIR's).
  option   every option given to one of the project's own tools
           (vmraplctl, vmrapl-exporter, vmrapl-limitd, vmrapl-vmm, vrsim,
           selftests/rig/run.sh) is in that tool's parser: its getopt_long
           table and option string, or its strcmp()s, or its case
           patterns; vmraplctl's command word is one of its commands.  A
           man page's options are its own tool's unless another command
           comes first on the line, and an option quoted on its own in
           the other documents must belong to some project tool (or to
           another program, FOREIGN_OPTIONS).
  rst      every .rst is docutils-clean: any warning or error docutils
           reports is a finding.  Without docutils (Debian's
           python3-docutils, which scripts/deps.sh installs) that is a
           finding too: the check never passes without it.

Findings are printed as FILE:LINE: KIND: MESSAGE; the exit status is 1
when there are any, 0 otherwise.

Usage: scripts/doc-check.py [-v] [FILE...]   (default: every document;
       -v: also every item checked)
"""

import glob
import io
import os
import re
import shlex
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Quoted paths that belong to other trees (QEMU's, the kernel's), named
# where the documents compare with them or patch them.
FOREIGN_PATHS = {
    # the kernel's
    'scripts/checkpatch.pl',
    'include/uapi/linux/kvm.h',
    'ioctl-number.rst',
    'System.map',		# a Debian kernel package's
    # QEMU's
    'scripts/update-linux-headers.sh',
    'rapl-msr.rst',
    'docs/specs/rapl-msr.rst',
    'tools/i386/qemu-vmsr-helper.c',
    'include/qemu/qemu-plugin.h',
    'system/physmem.c',
    'vmrapl.c',		# target/i386/kvm/vmrapl.c of the patch series
}
# First components of QEMU's tree, for paths into it.
FOREIGN_PREFIXES = ('target/i386', 'docs/specs', 'tests/functional',
                    'linux-headers/')

# Long options of programs other than the project's five tools that the
# documents quote on their own.
FOREIGN_OPTIONS = {
    '--enable-vmrapl': "QEMU's configure (the project's patch series)",
    '--enable-plugins': "QEMU's configure",
    '--firmwarepath': "QEMU's configure",
    '--root': 'scripts/deb-test.sh and scripts/libvirt-test.sh',
    '--per-socket': 'perf stat',
    '--control': 'perf stat',
    '--icount': 'bench/rig/collect.sh',
    '--rename': 'selftests/rig/hangdump.py',
    '--wedged': 'selftests/rig/hangdump.py',
    '--strict': "the kernel's scripts/checkpatch.pl",
    '--no-tree': "the kernel's scripts/checkpatch.pl",
    '--print-env': 'scripts/debug-kernel.sh',
    '--print-dir': 'scripts/debug-kernel.sh',
}

# Make targets of other Makefiles the documents name: the kernel's, for
# the debug kernel's configuration (Documentation/testing.rst).
FOREIGN_MAKE_TARGETS = {'allnoconfig', 'olddefconfig'}

# Extensions that make a quoted word without a "/" a file of the tree.
SOURCE_EXT = ('.c', '.h', '.S', '.sh', '.py', '.rst', '.md', '.yml',
              '.yaml', '.json', '.patch', '.service', '.rules', '.map',
              '.config', '.skip', '.png', '.mk')

# A build product, named where its source is: kmod/main.o for
# build/<KVER>/kmod/main.o.
BUILT_EXT = ('.o', '.ko', '.so', '.a')

# Commands that are not the project's: their options are not looked up.
OTHER_COMMANDS = {
    'qemu-system-x86_64', 'qemu', 'perf', 'curl', 'scaphandre',
    'systemctl', 'virsh', 'promtool', 'modprobe', 'make', 'gcc', 'cc',
    'git', 'dkms', 'apt-get', 'dpkg', 'gnuplot', 'python3', 'grep',
    'sed', 'awk', 'sudo', 'insmod', 'rmmod', 'udevadm', 'pkg-config',
    'fio', 'stress-ng', 'turbostat', 'script', 'chromium', 'configure',
    './configure', 'valgrind', 'ssh', 'tar', 'cat', 'echo', 'ls',
    'fuser',
}


class Stats(dict):
    """What was checked, by kind; with -v, each item as it is."""

    def __init__(self, verbose):
        super().__init__(links=0, paths=0, make=0, options=0, commands=0)
        self.verbose = verbose

    def count(self, kind, path, line, item):
        self[kind] += 1
        if self.verbose:
            print('%s:%d: checked %s: %s' % (os.path.relpath(path, TOP),
                                             line, kind, item))


class Findings:
    def __init__(self):
        self.items = []

    def add(self, path, line, kind, msg):
        if os.path.isabs(path):
            path = os.path.relpath(path, TOP)
        self.items.append((path, line, kind, msg))


# ---- the tools' parsers ---------------------------------------------------

class Tool:
    """A tool's options: long (name -> takes an argument), short (letter
    -> takes an argument), and its command words when it has some."""

    def __init__(self, name, source):
        self.name = name
        self.source = source
        self.long = {}
        self.short = {}
        self.commands = None


def c_getopt_tool(name, source):
    """Options of a C program that parses them with getopt_long: its
    struct option table and its option string."""
    t = Tool(name, source)
    text = open(os.path.join(TOP, source)).read()
    m = re.search(r'struct option \w+\[\] = \{(.*?)\n\t*\};', text, re.S)
    if not m:
        raise SystemExit('doc-check: no struct option table in ' + source)
    for lm in re.finditer(r'\{\s*"([\w-]+)",\s*(\w+)', m.group(1)):
        t.long['--' + lm.group(1)] = lm.group(2) != 'no_argument'
    m = re.search(r'getopt_long\(\s*\w+,\s*\w+,\s*"([^"]*)"', text)
    if not m:
        raise SystemExit('doc-check: no getopt_long() option string in ' +
                         source)
    s = m.group(1)
    for i, ch in enumerate(s):
        if ch != ':':
            t.short['-' + ch] = i + 1 < len(s) and s[i + 1] == ':'
    return t


def vmraplctl_tool():
    t = c_getopt_tool('vmraplctl', 'userspace/vmraplctl/vmraplctl.c')
    text = open(os.path.join(TOP, t.source)).read()
    m = re.search(r'\} cmds\[\] = \{(.*?)\n\t*\};', text, re.S)
    if not m:
        raise SystemExit('doc-check: no command table in ' + t.source)
    t.commands = set(re.findall(r'\{\s*"(\w+)",', m.group(1)))
    return t


def vmm_tool():
    """vmrapl-vmm's parse_options(): FLAG("--x"), VAL("--x") and
    strcmp(opt, "--x") (an optional value, as --x=V only)."""
    source = 'userspace/vmm/options.c'
    t = Tool('vmrapl-vmm', source)
    text = open(os.path.join(TOP, source)).read()
    m = re.search(r'\nvoid parse_options\(.*?\n\}\n', text, re.S)
    if not m:
        raise SystemExit('doc-check: no parse_options() in ' + source)
    body = m.group(0)
    for kind, opt in re.findall(r'\b(FLAG|VAL)\("(--[\w-]+)"\)', body):
        t.long[opt] = kind == 'VAL'
    for opt in re.findall(r'strcmp\(opt, "(--?[\w-]+)"\)', body):
        if opt.startswith('--'):
            t.long.setdefault(opt, False)
        else:
            t.short[opt] = False
    if not t.long:
        raise SystemExit('doc-check: no options found in ' + source)
    return t


def run_sh_tool():
    """selftests/rig/run.sh: the patterns of its "case $1 in" loop;
    "shift 2" takes a value."""
    source = 'selftests/rig/run.sh'
    t = Tool('run.sh', source)
    text = open(os.path.join(TOP, source)).read()
    m = re.search(r'\n\tcase \$1 in\n(.*?)\n\tesac', text, re.S)
    if not m:
        raise SystemExit('doc-check: no "case $1 in" loop in ' + source)
    for pats, body in re.findall(r'^\t(-[^)]*)\)(.*)$', m.group(1), re.M):
        for p in pats.split('|'):
            p = p.strip()
            takes = 'shift 2' in body
            if p.startswith('--'):
                t.long[p] = takes
            else:
                t.short[p] = takes
    return t


def load_tools():
    tools = {
        'vmraplctl': vmraplctl_tool(),
        'vmrapl-exporter': c_getopt_tool('vmrapl-exporter',
                                         'userspace/exporter/vmrapl-exporter.c'),
        'vmrapl-limitd': c_getopt_tool('vmrapl-limitd',
                                       'userspace/limitd/limitd.c'),
        'vmrapl-vmm': vmm_tool(),
        'vrsim': c_getopt_tool('vrsim', 'bench/sim/vrsim.c'),
        'run.sh': run_sh_tool(),
    }
    tools['vmrapl-vmm.static'] = tools['vmrapl-vmm']
    return tools


def tool_of_word(word, tools):
    """The project tool a command word names (vmraplctl, ./vrsim,
    /bin/vmrapl-vmm, selftests/rig/run.sh, ExecStart=.../x), or None."""
    w = word.split('=', 1)[-1] if word.startswith('ExecStart=') else word
    base = w.rsplit('/', 1)[-1]
    if base == 'run.sh' and w not in ('run.sh', 'selftests/rig/run.sh',
                                      './run.sh', 'rig/run.sh'):
        return None
    return tools.get(base)


# ---- Makefiles ------------------------------------------------------------

_make_cache = {}


def make_targets(directory):
    """The explicit targets of DIRECTORY's Makefile (None: no Makefile)."""
    if directory in _make_cache:
        return _make_cache[directory]
    path = os.path.join(TOP, directory, 'Makefile')
    targets = None
    if os.path.isfile(path):
        targets = set()
        in_define = False
        for line in open(path):
            if re.match(r'\s*define\b', line):
                in_define = True
            elif in_define:
                in_define = not re.match(r'\s*endef\b', line)
            elif not line.startswith('\t') and not line.startswith('#'):
                m = re.match(r'^([^:=#\t]+?)\s*::?(?!=)', line)
                if m:
                    for t in m.group(1).split():
                        if '$' not in t and '%' not in t:
                            targets.add(t)
        targets.discard('.PHONY')
    _make_cache[directory] = targets
    return targets


# ---- the documents: literals ----------------------------------------------

class Literal:
    """Text a document quotes as code, at its line: a line of a code
    block (block) or an inline literal."""

    def __init__(self, text, line, block):
        self.text = text
        self.line = line
        self.block = block


def blank_keep_lines(s):
    return re.sub(r'[^\n]', ' ', s)


def md_extract(text):
    """Markdown: fenced blocks, inline code spans, links and images
    (target, line), HTML comments aside."""
    lits, links = [], []
    text = re.sub(r'<!--.*?-->', lambda m: blank_keep_lines(m.group(0)),
                  text, flags=re.S)
    lines = text.split('\n')
    fence = None
    prose = []
    for i, line in enumerate(lines, 1):
        m = re.match(r'^\s*(```+|~~~+)', line)
        if fence is None and m:
            fence = m.group(1)
            prose.append('')
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            else:
                lits.append(Literal(line, i, True))
            prose.append('')
            continue
        prose.append(line)
    ptext = '\n'.join(prose)

    def lineno(pos):
        return ptext.count('\n', 0, pos) + 1
    spans = []
    for m in re.finditer(r'(`+)(.+?)(?<!`)\1(?!`)', ptext, re.S):
        if '\n\n' in m.group(2):
            continue
        lits.append(Literal(' '.join(m.group(2).split()),
                            lineno(m.start()), False))
        spans.append((m.start(), m.end()))

    def in_span(pos):
        return any(a <= pos < b for a, b in spans)
    for m in re.finditer(r'!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)',
                         ptext):
        if not in_span(m.start()):
            links.append((m.group(1), lineno(m.start())))
    for m in re.finditer(r'^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)', ptext,
                         re.M):
        links.append((m.group(1), lineno(m.start())))
    return lits, links


def rst_extract(text):
    """RST: literal blocks (after "::" or a code directive), inline
    literals, hyperlink targets, images, figures and includes."""
    lits, links = [], []
    lines = text.split('\n')
    inblock = [False] * len(lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = re.match(r'^(\s*)\.\. (code-block|code|sourcecode|'
                             r'parsed-literal)::', line)
        if directive or (line.rstrip().endswith('::') and
                         not re.match(r'^\s*\.\. ', line)):
            indent = len(line) - len(line.lstrip())
            j = i + 1
            # a directive's options, then the blank line
            while directive and j < len(lines) and \
                    re.match(r'^\s+:\w[\w-]*:', lines[j]):
                j += 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            while j < len(lines) and (not lines[j].strip() or
                                      len(lines[j]) - len(lines[j].lstrip())
                                      > indent):
                inblock[j] = True
                if lines[j].strip():
                    lits.append(Literal(lines[j], j + 1, True))
                j += 1
            i = j
            continue
        i += 1
    prose = '\n'.join('' if inblock[k] else lines[k]
                      for k in range(len(lines)))

    def lineno(pos):
        return prose.count('\n', 0, pos) + 1
    spans = []
    for m in re.finditer(r'``(.+?)``', prose, re.S):
        if '\n\n' in m.group(1):
            continue
        lits.append(Literal(' '.join(m.group(1).split()), lineno(m.start()),
                            False))
        spans.append((m.start(), m.end()))
    for m in re.finditer(r'`[^`<]*<([^>`]+)>`__?', prose):
        if not any(a <= m.start() < b for a, b in spans):
            links.append((m.group(1), lineno(m.start())))
    for m in re.finditer(r'^\s*\.\. _[^:]+:\s+(\S+)\s*$', prose, re.M):
        links.append((m.group(1), lineno(m.start())))
    for m in re.finditer(r'^\s*\.\. (?:image|figure|include|literalinclude)'
                         r'::\s+(\S+)', prose, re.M):
        links.append((m.group(1), lineno(m.start())))
    return lits, links


# troff: escapes, fonts and the font-alternating macros.
TROFF_ESC = [
    (r'\(em', '\u2014'), (r'\(en', '\u2013'), (r'\(aq', "'"),
    (r'\(dq', '"'), (r'\(bu', '*'), (r'\(mu', 'x'), (r'\(+-', '+-'),
    (r'\(lq', '"'), (r'\(rq', '"'), (r'\(co', '(c)'), (r'\(de', 'deg'),
    ('\\-', '-'), ('\\&', ''), ('\\|', ''), ('\\^', ''), ('\\e', '\\'),
    ('\\ ', ' '), ('\\~', ' '), ('\\c', ''), ('\\,', ''), ('\\/', ''),
]


def troff_text(s):
    for a, b in TROFF_ESC:
        s = s.replace(a, b)
    return s


def troff_fonts(s, font):
    """Split S at its \\f escapes into (font, text) pieces, starting in
    FONT; returns the pieces and the font at the end."""
    out, prev = [], font
    pos = 0
    for m in re.finditer(r'\\f(\(..|\[[^\]]*\]|.)', s):
        out.append((font, troff_text(s[pos:m.start()])))
        f = m.group(1).strip('([]')
        if f == 'P':
            font, prev = prev, font
        else:
            prev, font = font, {'B': 'B', 'I': 'I', 'R': 'R', 'CW': 'B',
                                'C': 'B', 'CB': 'B'}.get(f, 'R')
        pos = m.end()
    out.append((font, troff_text(s[pos:])))
    return out, font


def troff_args(s):
    args, cur, q, i = [], '', False, 0
    while i < len(s):
        c = s[i]
        if c == '\\' and i + 1 < len(s):
            cur += s[i:i + 2]
            i += 2
            continue
        if c == '"':
            if q and i + 1 < len(s) and s[i + 1] == '"':
                cur += '"'
                i += 2
                continue
            q = not q
        elif c in ' \t' and not q:
            if cur:
                args.append(cur)
            cur = ''
        else:
            cur += c
        i += 1
    if cur or q:
        args.append(cur)
    return args


# .BR a b c: a in bold, b in roman, c in bold...
ALTERNATING = ('BR', 'RB', 'IR', 'RI', 'BI', 'IB')


def man_extract(text):
    """A man page, line by line: (line, pieces, in_example), pieces being
    (font, text)."""
    out = []
    example = False
    for i, raw in enumerate(text.split('\n'), 1):
        if raw.startswith('.\\"') or raw.startswith("'\\\""):
            continue
        pieces = []
        if raw.startswith('.') or raw.startswith("'"):
            m = re.match(r"^[.'](\w+)\s*(.*)$", raw)
            if not m:
                continue
            req, rest = m.group(1), m.group(2)
            if req == 'SH':
                continue
            if req in ('nf', 'EX'):
                example = True
                continue
            if req in ('fi', 'EE'):
                example = False
                continue
            if req in ('B', 'I', 'SB'):
                f = 'I' if req == 'I' else 'B'
                pieces, _ = troff_fonts(' '.join(troff_args(rest)), f)
            elif req in ALTERNATING:
                for k, a in enumerate(troff_args(rest)):
                    p, _ = troff_fonts(a, req[k % 2])
                    pieces += p
            elif req in ('TP', 'PP', 'LP', 'P', 'IP', 'RS', 'RE', 'br', 'sp',
                         'TH', 'SS', 'in', 'ti', 'ad', 'na', 'hy', 'nh',
                         'ft', 'TS', 'TE', 'UR', 'UE', 'MT', 'ME', 'SM'):
                if req in ('IP', 'SS', 'SM') and rest:
                    pieces, _ = troff_fonts(' '.join(troff_args(rest)), 'R')
                else:
                    continue
            else:
                continue
        else:
            pieces, _ = troff_fonts(raw, 'R')
        out.append((i, [p for p in pieces if p[1]], example))
    return out


# ---- checks ---------------------------------------------------------------

_files_cache = None


def tracked_files():
    """The tree's files: git's list when it is a repository, else every
    file but build/ and .git."""
    global _files_cache
    if _files_cache is None:
        try:
            out = subprocess.run(['git', '-C', TOP, 'ls-files', '-co',
                                  '--exclude-standard'],
                                 capture_output=True, text=True, check=True)
            files = [f for f in out.stdout.split('\n') if f]
        except (OSError, subprocess.CalledProcessError):
            files = []
        if not files:
            for d, dirs, fs in os.walk(TOP):
                dirs[:] = [x for x in dirs if x not in ('.git', 'build')]
                for f in fs:
                    files.append(os.path.relpath(os.path.join(d, f), TOP))
        _files_cache = files
    return _files_cache


def top_entries():
    return {f.split('/', 1)[0] for f in tracked_files()}


def expand_braces(p):
    m = re.search(r'\{([^{}]*,[^{}]*)\}', p)
    if not m:
        return [p]
    out = []
    for alt in m.group(1).split(','):
        out += expand_braces(p[:m.start()] + alt + p[m.end():])
    return out


def path_exists(p, docdir):
    for base in (TOP, os.path.join(TOP, docdir)):
        full = os.path.normpath(os.path.join(base, p))
        if not full.startswith(TOP):
            continue
        if any(c in p for c in '*?['):
            if glob.glob(full):
                return True
        elif os.path.exists(full):
            return True
        # userspace/qemu/patches/0009: patch 0009-*.patch
        d, b = os.path.split(full)
        if re.fullmatch(r'\d{4}', b) and glob.glob(os.path.join(d, b + '-*')):
            return True
        # kmod/main.o, selftests/fakekvm/vr_fakekvm.ko: built from the
        # source beside them (into build/)
        stem, ext = os.path.splitext(full)
        if ext in BUILT_EXT and any(os.path.exists(stem + e)
                                    for e in ('.c', '.S')):
            return True
    if '/' not in p.rstrip('/'):
        name = p.rstrip('/')
        return any(f.rsplit('/', 1)[-1] == name or
                   ('/' + name + '/') in ('/' + f) for f in tracked_files())
    return False


def path_candidate(word):
    """The repo path WORD quotes, or None when it is not one to look for."""
    w = word.strip('"\'(),;:').rstrip('.')
    w = re.sub(r'^\./', '', w)
    if not w or len(w) < 3:
        return None
    if '://' in w or w.startswith(('/', '~', '$', '-')):
        return None
    if re.search(r'[<>$=@%]|\.\.\.|\s', w) or w.startswith('build/'):
        return None
    if w.endswith('/') and re.fullmatch(r'[\w.+-]+(/[\w.+-]+)*/', w):
        return w			# a folder
    if re.search(r'[A-Z]{3,}', w.split('/')[-1]) and \
            not re.search(r'\.(md|rst)$', w) and w != 'VERSION':
        return None		# KVER, ABI, NAME: placeholders
    if '/' in w.rstrip('/'):
        if not re.fullmatch(r'[\w.+*?\[\]{},/-]+', w):
            return None
        return w
    if w.endswith(SOURCE_EXT) and re.fullmatch(r'[\w.+*?\[\]{},-]+', w):
        return w
    return None


def foreign_path(p):
    return p in FOREIGN_PATHS or p.startswith(FOREIGN_PREFIXES)


def check_path(f, line, word, docdir, tops, fnd, stats):
    p = path_candidate(word)
    if not p or foreign_path(p):
        return
    first = p.split('/', 1)[0]
    suffix = False
    if '/' in p.rstrip('/') and first not in tops and \
            not os.path.exists(os.path.join(TOP, docdir, first)):
        # Not from the top nor from here: another tree's, a word pair
        # (pass/fail), or one of ours from some folder (linux/vmrapl.h):
        # a file of ours must end a path of the tree.
        if not p.endswith(SOURCE_EXT):
            return
        suffix = True
    stats.count('paths', f, line, p)
    for alt in expand_braces(p):
        if suffix and any(('/' + t).endswith('/' + alt)
                          for t in tracked_files()):
            continue
        if not path_exists(alt, docdir):
            fnd.add(f, line, 'path', '%s: no such file or directory in the '
                    'tree' % alt)
            return


def check_link(f, target, line, docdir, fnd, stats):
    if re.match(r'^[a-z][a-z0-9+.-]*:', target) or target.startswith('#'):
        return
    p = target.split('#', 1)[0].split('?', 1)[0]
    stats.count('links', f, line, target)
    full = os.path.normpath(os.path.join(TOP, docdir, p))
    if not os.path.exists(full):
        fnd.add(f, line, 'link', '%s: the link does not resolve' % target)


def check_man_refs(f, text, tools, fnd, stats):
    """vmraplctl(8) and the like: a project tool's man page in that
    section is in the tree."""
    for m in re.finditer(r'(?<![\w./-])([a-z][\w.-]*)\(([1-8])\)', text):
        name, sec = m.group(1), m.group(2)
        if name not in tools:
            continue
        line = text.count('\n', 0, m.start()) + 1
        stats.count('links', f, line, '%s(%s)' % (name, sec))
        if not any(t.rsplit('/', 1)[-1] == '%s.%s' % (name, sec)
                   for t in tracked_files()):
            fnd.add(f, line, 'link', '%s(%s): no man page %s.%s in the tree'
                    % (name, sec, name, sec))


def shell_words(text):
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        return text.split()


SEPARATORS = ('|', '||', '&&', ';', '&', '>', '>>', '<', '2>', '2>&1', '#',
              ')', '`', '\\')


def is_separator(w):
    return w in SEPARATORS or w.startswith(('>', '<', '2>', '#', '|', ';',
                                            '&&'))


def check_make(f, lit, fnd, stats):
    """Every "make [opts] [VAR=V] TARGET..." in LIT."""
    text = lit.text
    if lit.block:
        text = re.sub(r'(^|\s)#.*$', '', text)	# the shell's comments
    words = shell_words(text)
    for i, w in enumerate(words):
        if w != 'make':
            continue
        if i > 0 and not (is_separator(words[i - 1]) or
                          words[i - 1] in ('sudo', 'then', 'do', 'time',
                                           'nice', 'env', '$(', '(')):
            continue
        d, j = '.', i + 1
        targets = []
        while j < len(words) and not is_separator(words[j]):
            a = words[j]
            if a == '-C' and j + 1 < len(words):
                d = words[j + 1]
                j += 2
                continue
            if a in ('-f', '-I', '-o', '-W') and j + 1 < len(words) or \
                    a in ('-j', '-l') and j + 1 < len(words) and \
                    words[j + 1].isdigit():
                j += 2
                continue
            if a.startswith('-') or '=' in a:
                j += 1
                continue
            if re.fullmatch(r'[\w./+-]+', a) and not a.endswith('.'):
                targets.append(a)
            elif a.rstrip(':,.)') and re.fullmatch(r'[\w./+-]+',
                                                   a.rstrip(':,.)')):
                targets.append(a.rstrip(':,.)'))
                break
            else:
                break
            j += 1
        if d.startswith(('/', '$')) or '<' in d:
            continue
        known = make_targets(os.path.normpath(d))
        if known is None:
            fnd.add(f, lit.line, 'make', 'make -C %s: no Makefile in %s'
                    % (d, d))
            continue
        for t in targets:
            stats.count('make', f, lit.line, t)
            if t not in known and t not in FOREIGN_MAKE_TARGETS:
                where = 'the top-level Makefile' if d == '.' else \
                    d + '/Makefile'
                fnd.add(f, lit.line, 'make', '"make %s%s": %s has no target '
                        '%s' % ('-C %s ' % d if d != '.' else '', t, where, t))


def clean_option(w):
    """--report-msr[=MS] -> --report-msr; [--json] -> --json; --x=V -> --x"""
    w = w.strip('[](),.;:')
    w = re.sub(r'\[.*$', '', w)
    return w


def check_invocation(f, line, tool, words, fnd, stats):
    """The options (and vmraplctl's command) in WORDS, which follow the
    tool's name up to the end of its command."""
    command_seen = tool.commands is None
    k = 0
    while k < len(words):
        raw = words[k]
        w = clean_option(raw)
        k += 1
        if is_separator(raw):
            break
        if w == '--':
            break		# its arguments: no more options
        if re.fullmatch(r'--[A-Za-z][\w-]*(=.*)?', w):
            name = w.split('=', 1)[0]
            stats.count('options', f, line, tool.name + ' ' + name)
            if name not in tool.long:
                fnd.add(f, line, 'option', '%s has no option %s (%s)'
                        % (tool.name, name, tool.source))
            elif tool.long[name] and '=' not in w and '=' not in raw:
                k += 1		# its value
            continue
        if re.fullmatch(r'-[A-Za-z][\w]*', w) and raw.startswith(('-', '[-')):
            # a cluster of short options; one that takes a value ends it
            for n, ch in enumerate(w[1:]):
                stats.count('options', f, line, tool.name + ' -' + ch)
                if '-' + ch not in tool.short:
                    fnd.add(f, line, 'option', '%s has no option -%s (%s)'
                            % (tool.name, ch, tool.source))
                    break
                if tool.short['-' + ch]:
                    if n == len(w) - 2:
                        k += 1
                    break
            continue
        if not command_seen and re.fullmatch(r'[a-z][\w-]*', w) and \
                raw == w:
            command_seen = True
            stats.count('commands', f, line, tool.name + ' ' + w)
            if w not in tool.commands:
                fnd.add(f, line, 'option', '%s has no command "%s" (%s has %s)'
                        % (tool.name, w, tool.source,
                           ', '.join(sorted(tool.commands))))


def invocations(words, tools):
    """(tool, the words after its name) for each project tool named in
    WORDS."""
    for i, w in enumerate(words):
        t = tool_of_word(w, tools)
        if t:
            j = i + 1
            while j < len(words) and not is_separator(words[j]) and \
                    not tool_of_word(words[j], tools) and \
                    words[j] not in OTHER_COMMANDS:
                j += 1
            yield t, words[i + 1:j]


def check_options_text(f, line, text, tools, fnd, stats):
    words = shell_words(text)
    for tool, rest in invocations(words, tools):
        check_invocation(f, line, tool, rest, fnd, stats)


def check_lone_option(f, lit, tools, all_long, fnd, stats):
    """An inline literal that is an option alone (``--json``,
    ``--rapl intel|amd|off``): some project tool, or FOREIGN_OPTIONS, has
    it."""
    words = lit.text.split()
    if not words:
        return
    w = clean_option(words[0])
    if not re.fullmatch(r'--[A-Za-z][\w-]*(=.*)?', w):
        return
    name = w.split('=', 1)[0]
    stats.count('options', f, lit.line, name)
    if name not in all_long and name not in FOREIGN_OPTIONS:
        fnd.add(f, lit.line, 'option', '%s: no project tool has this option '
                '(%s), nor is it in doc-check.py\'s FOREIGN_OPTIONS'
                % (name, ', '.join(sorted({t.name for t in tools.values()}))))


def indent_of(s):
    return len(s) - len(s.lstrip())


def logical_lines(lits):
    """A code block's command continued on the next line, after a
    backslash or, in a synopsis, as a more indented [--option] or
    --option line, becomes one literal (at its first line)."""
    out = []
    for lit in lits:
        prev = out[-1] if out else None
        if prev and prev.block and lit.block and \
                lit.line == prev.last + 1 and \
                (prev.text.rstrip().endswith('\\') or
                 (lit.text.lstrip().startswith(('[', '-')) and
                  indent_of(lit.text) > indent_of(prev.text))):
            prev.text = prev.text.rstrip().rstrip('\\') + ' ' + \
                lit.text.strip()
            prev.last = lit.line
            continue
        lit.last = lit.line
        out.append(lit)
    return out


def check_md_rst(f, kind, tools, all_long, tops, fnd, stats):
    text = open(f, encoding='utf-8').read()
    docdir = os.path.relpath(os.path.dirname(f), TOP)
    lits, links = (md_extract if kind == 'md' else rst_extract)(text)
    lits = logical_lines(lits)
    check_man_refs(f, text, tools, fnd, stats)
    for target, line in links:
        check_link(f, target, line, docdir, fnd, stats)
    for lit in lits:
        check_make(f, lit, fnd, stats)
        check_options_text(f, lit.line, lit.text, tools, fnd, stats)
        if not lit.block:
            check_lone_option(f, lit, tools, all_long, fnd, stats)
            words = lit.text.split()
            if len(words) == 1:
                check_path(f, lit.line, words[0], docdir, tops, fnd, stats)
            elif words and path_candidate(words[0]) and \
                    ('/' in words[0] or words[0].endswith(SOURCE_EXT)):
                check_path(f, lit.line, words[0], docdir, tops, fnd, stats)
        else:
            code = re.sub(r'(^|\s)#.*$', '', lit.text)
            for w in shell_words(code):
                c = path_candidate(w)
                if c and '/' in c.rstrip('/') and \
                        c.split('/', 1)[0] in tops:
                    check_path(f, lit.line, w, docdir, tops, fnd, stats)


def check_man(f, tools, all_long, tops, fnd, stats):
    text = open(f, encoding='utf-8').read()
    docdir = os.path.relpath(os.path.dirname(f), TOP)
    own = tools.get(os.path.basename(f).rsplit('.', 1)[0])
    # .BR vmraplctl (8): the reference as it reads
    check_man_refs(f, '\n'.join(re.sub(r'^\.BR (\S+) \((\d)\)', r'\1(\2)',
                                       troff_text(line))
                                for line in text.split('\n')),
                   tools, fnd, stats)
    for line, pieces, example in man_extract(text):
        full = ''.join(t for _, t in pieces)
        bold = ' '.join(t for font, t in pieces if font == 'B')
        # make targets and paths in bold text and in examples
        for lt in ([full] if example else []) + ([bold] if bold else []):
            lit = Literal(lt, line, example)
            check_make(f, lit, fnd, stats)
        for font, t in pieces:
            if font in ('B', 'I') or example:
                for w in t.split():
                    c = path_candidate(w)
                    if c and '/' in c.rstrip('/') and \
                            c.split('/', 1)[0] in tops:
                        check_path(f, line, w, docdir, tops, fnd, stats)
        # the options: the page's own unless another command comes first;
        # a command is one named in bold or in an example
        # An option in italics is another program's, named in prose (a
        # VMM's --name); bold and examples are the page's own.
        if example:
            words = [(w, True) for w in shell_words(full)]
        else:
            words = [(w, font == 'B') for font, t in pieces
                     if font != 'I' for w in t.split()]
        owner = own
        k = 0
        while k < len(words):
            w, strong = words[k]
            t = tool_of_word(w.strip('(),'), tools) if strong else None
            if t:
                rest = []
                j = k + 1
                while j < len(words) and not is_separator(words[j][0]) and \
                        not tool_of_word(words[j][0], tools) and \
                        words[j][0] not in OTHER_COMMANDS:
                    rest.append(words[j][0])
                    j += 1
                check_invocation(f, line, t, rest, fnd, stats)
                owner = None
                k = j
                continue
            if w in OTHER_COMMANDS:
                owner = None
            opt = clean_option(w)
            if owner and re.fullmatch(r'--[A-Za-z][\w-]*(=.*)?', opt):
                name = opt.split('=', 1)[0]
                stats.count('options', f, line, owner.name + ' ' + name)
                if name not in owner.long:
                    fnd.add(f, line, 'option', '%s has no option %s (%s)'
                            % (owner.name, name, owner.source))
            k += 1
        # short options: bold ones, the page's own
        if own and owner is own:
            for w in bold.split():
                opt = clean_option(w)
                if re.fullmatch(r'-[A-Za-z]', opt):
                    stats.count('options', f, line, own.name + ' ' + opt)
                    if opt not in own.short:
                        fnd.add(f, line, 'option', '%s has no option %s (%s)'
                                % (own.name, opt, own.source))


def check_rst_docutils(files, fnd):
    """Every .rst through docutils: each warning (or worse) it reports is
    a finding, once.  Returns how many files it read."""
    if not files:
        return 0
    try:
        import docutils.core		# pylint: disable=import-outside-toplevel
    except ImportError:
        fnd.add('Documentation/*.rst', 0, 'rst', 'docutils is not installed '
                'for %s, so no RST file is checked: install Debian\'s '
                'python3-docutils (scripts/deps.sh --base)' % sys.executable)
        return 0
    for f in files:
        warnings = io.StringIO()
        try:
            docutils.core.publish_doctree(
                open(f, encoding='utf-8').read(), source_path=f,
                settings_overrides={
                    'report_level': 2,		# warnings and up
                    'halt_level': 5,		# never stop
                    'warning_stream': warnings,
                    'file_insertion_enabled': False,
                    'raw_enabled': False,
                    'input_encoding': 'utf-8',
                })
        except Exception as e:		# pylint: disable=broad-except
            fnd.add(f, 0, 'rst', 'docutils failed: %s' % e)
            continue
        # "FILE:LINE: (LEVEL/N) message", then the lines it quotes
        seen = set()
        for m in re.finditer(r'^.*?:(\d+)?:? ?\((\w+)/\d\) (.*)$',
                             warnings.getvalue(), re.M):
            key = (m.group(1), m.group(2), m.group(3))
            if key not in seen:
                seen.add(key)
                fnd.add(f, int(m.group(1) or 0), 'rst', '%s: %s'
                        % (m.group(2).lower(), m.group(3)))
    return len(files)


def documents():
    docs = [os.path.join(TOP, 'README.md'),
            os.path.join(TOP, 'bench', 'RESULTS.md')]
    docs += sorted(glob.glob(os.path.join(TOP, 'Documentation', '*.rst')))
    docs += sorted(os.path.join(TOP, p) for p in tracked_files()
                   if re.search(r'\.[1-8]$', p) and not p.startswith('build/'))
    return [d for d in docs if os.path.isfile(d)]


def have_docutils():
    try:
        import docutils		# pylint: disable=import-outside-toplevel,unused-import
        return True
    except ImportError:
        return False


def main(argv):
    if '-h' in argv or '--help' in argv:
        print(__doc__.strip())
        return 0
    # Debian's python3-docutils is for /usr/bin/python3: the python3
    # first in PATH may be another one.
    deb = '/usr/bin/python3'
    if not have_docutils() and os.path.exists(deb) and \
            os.path.realpath(sys.executable) != os.path.realpath(deb) and \
            not os.environ.get('DOC_CHECK_REEXEC') and \
            subprocess.run([deb, '-c', 'import docutils'],
                           capture_output=True).returncode == 0:
        os.environ['DOC_CHECK_REEXEC'] = '1'
        os.execv(deb, [deb, os.path.abspath(__file__)] + argv)
    verbose = '-v' in argv
    argv = [a for a in argv if a != '-v']
    files = [os.path.abspath(a) for a in argv] if argv else documents()
    for f in files:
        if not os.path.isfile(f):
            print('doc-check: %s: no such file' % f, file=sys.stderr)
            return 2
    tools = load_tools()
    all_long = set()
    for t in tools.values():
        all_long |= set(t.long)
    tops = top_entries()
    fnd = Findings()
    stats = Stats(verbose)
    rst = []
    for f in files:
        if f.endswith('.md'):
            check_md_rst(f, 'md', tools, all_long, tops, fnd, stats)
        elif f.endswith('.rst'):
            check_md_rst(f, 'rst', tools, all_long, tops, fnd, stats)
            rst.append(f)
        elif re.search(r'\.[1-8]$', f):
            check_man(f, tools, all_long, tops, fnd, stats)
        else:
            print('doc-check: %s: not a document it knows (.md, .rst, '
                  '.1-.8)' % f, file=sys.stderr)
            return 2
    nrst = check_rst_docutils(rst, fnd)
    order = {os.path.relpath(f, TOP): i for i, f in enumerate(files)}
    fnd.items.sort(key=lambda x: (order.get(x[0], 0), x[1]))
    for path, line, kind, msg in fnd.items:
        print('%s:%d: %s: %s' % (path, line, kind, msg))
    summary = ('%d documents: %d links, %d paths, %d make targets, '
               '%d options and %d commands checked; %d with docutils'
               % (len(files), stats['links'], stats['paths'], stats['make'],
                  stats['options'], stats['commands'], nrst))
    if fnd.items:
        print('doc-check: %d findings (%s)' % (len(fnd.items), summary))
        return 1
    print('doc-check: clean (%s)' % summary)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
