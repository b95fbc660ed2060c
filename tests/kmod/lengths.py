#!/usr/bin/env python3
"""kmod's sizes (issue 47): no function over 100 lines, no file over 1,000.
A function is kernel style: its opening brace alone at the start of a
line, its closing brace alone at the start of one; its length is the
lines from its first line (name and parameters) to that closing brace.
Fails when a function or file is over its limit and
tests/kmod/lengths.allowed does not list it with at least its present
size, or when a line there is stale (the function is gone, within the
limit, or smaller than listed: lower the figure), so the list only
shrinks as functions are split.
usage: lengths.py"""
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
KMOD = os.path.join(ROOT, 'kmod')
ALLOWED = os.path.join(ROOT, 'tests', 'kmod', 'lengths.allowed')
FUNC_MAX, FILE_MAX = 100, 1000


def functions(path):
    """(name, lines) of each function defined in PATH."""
    lines = open(path).read().split('\n')
    out = []
    for i, l in enumerate(lines):
        if l != '{':
            continue
        # the definition's first line: back to a line at column 0 that is
        # not a continuation of the parameter list or an attribute line
        k = i - 1
        while k > 0 and (lines[k].startswith(('\t', ' ')) or lines[k].startswith('__')):
            k -= 1
        m = re.search(r'(\w+)\s*\(', lines[k])
        if not m:
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j] == '}')
        out.append((m.group(1), end - k + 1))
    return out


def main():
    found = {}
    for path in sorted(glob.glob(os.path.join(KMOD, '*.c')) + glob.glob(os.path.join(KMOD, '*.h'))):
        name = os.path.basename(path)
        if name.endswith('.mod.c'):
            continue
        n = open(path).read().count('\n')
        if n > FILE_MAX:
            found[name] = n
        if name.endswith('.c'):
            for fn, length in functions(path):
                if length > FUNC_MAX:
                    found[name + ':' + fn] = length
    allowed = {}
    for line in open(ALLOWED):
        line = line.split('#')[0].split()
        if line:
            allowed[line[0]] = int(line[1])
    bad = []
    for what, n in sorted(found.items()):
        limit = FILE_MAX if ':' not in what else FUNC_MAX
        if what not in allowed:
            bad.append(f'{what} has {n} lines, over {limit}, and lengths.allowed does not list it')
        elif n > allowed[what]:
            bad.append(f'{what} has {n} lines, more than the {allowed[what]} lengths.allowed lists')
    for what, n in sorted(allowed.items()):
        if what not in found:
            bad.append(f'lengths.allowed lists {what}, which is gone or within its limit: remove the line')
        elif found[what] < n:
            bad.append(f'lengths.allowed lists {what} at {n} lines; it has {found[what]}: lower the figure')
    for b in bad:
        print('lengths: ' + b)
    print(f'lengths: {len(found)} over the limits (functions {FUNC_MAX} lines, files {FILE_MAX}), '
          f'{len(allowed)} listed in lengths.allowed')
    sys.exit(1 if bad else 0)


main()
