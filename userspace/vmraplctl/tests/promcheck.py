#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Strict checker of a Prometheus text exposition (format 0.0.4) on stdin.

Exits 1 and names the line on the first problem: the body must be valid
UTF-8; every line a # HELP / # TYPE line or NAME[{LABELS}] VALUE; label
values may hold only the escapes \\\\ \\" \\n and no raw control character
(the tools never write one); a name's samples follow its TYPE.  Used by
tools.sh beside promtool (which it does not need)."""
import re
import sys

NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\x00-\x1f\x7f]|\\[\\"n])*"'
SAMPLE = re.compile(r'^(%s)(?:\{(?:%s)(?:,%s)*,?\})? (\S+)(?: -?\d+)?$' %
                    (NAME, LABEL, LABEL))
META = re.compile(r'^# (HELP|TYPE) (%s) ?(.*)$' % NAME)


def main():
    raw = sys.stdin.buffer.read()
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as e:
        print('invalid UTF-8: %s' % e)
        return 1
    typed = set()
    for n, line in enumerate(text.split('\n'), 1):
        if not line:
            continue
        m = META.match(line)
        if m:
            if m.group(1) == 'TYPE':
                if m.group(3) not in ('counter', 'gauge', 'untyped',
                                      'histogram', 'summary'):
                    print('line %d: bad TYPE: %r' % (n, line))
                    return 1
                typed.add(m.group(2))
            continue
        if line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if not m:
            print('line %d: not a sample: %r' % (n, line))
            return 1
        try:
            float(m.group(2))
        except ValueError:
            print('line %d: bad value: %r' % (n, line))
            return 1
        if m.group(1) not in typed:
            print('line %d: sample before its TYPE: %r' % (n, line))
            return 1
    return 0


sys.exit(main())
