#!/usr/bin/env python3
"""kmod's layers, read from the built objects: a file may call only files
below it in kmod/main.c's file list ("Files, with calls running down this
list"). Built against the newest installed kernel, the objects' symbols
(nm: T defined, U undefined) give the file-to-file calls. Fails when:
  - main.c's list does not name a .c file of kmod/ (or names one that is
    not there);
  - a file calls a file above it, and tests/kmod/layers.allowed does not
    list that edge (the edges the layering has not removed yet, issue 47:
    the list may only shrink);
  - layers.allowed lists an edge that is gone or no longer upward (so the
    list is kept true as calls are moved down).
usage: layers.py [BUILD_DIR]  (without one, builds a scratch copy)"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
KMOD = os.path.join(ROOT, 'kmod')
ALLOWED = os.path.join(ROOT, 'tests', 'kmod', 'layers.allowed')


def main_c_order():
    """The .c files named in main.c's file list, in order."""
    text = open(os.path.join(KMOD, 'main.c')).read()
    m = re.search(r'\* Files, with calls running down this list(.*?)\*/|\* Files, with calls running down this list(.*?)\n \*\n', text, re.S)
    if not m:
        sys.exit("layers: kmod/main.c has no paragraph 'Files, with calls running down this list'")
    para = m.group(1) or m.group(2)
    # the list itself starts at main.c's entry (the sentence before it
    # names exceptions)
    if 'main.c (' not in para:
        sys.exit("layers: kmod/main.c's file list does not start with main.c")
    para = para[para.index('main.c ('):]
    order = []
    for name in re.findall(r'\b([a-z_]+\.c)\b', para):
        if name not in order:
            order.append(name)
    return order


def build():
    tmp = tempfile.mkdtemp(prefix='pm-layers.')
    kver = subprocess.run(['bash', '-c', '. scripts/rig/lib.sh && rig_debian_kver'], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()
    if not kver:
        sys.exit('layers: no Debian kernel installed (scripts/deps.sh)')
    subprocess.run(['bash', '-c', f'. scripts/rig/lib.sh && rig_kmod_src {tmp}/kmod'], cwd=ROOT, check=True)
    r = subprocess.run(['make', '-C', f'/lib/modules/{kver}/build', f'M={tmp}/kmod', 'modules'],
                       capture_output=True, text=True)
    if r.returncode:
        sys.stderr.write(r.stdout[-2000:] + r.stderr[-2000:])
        sys.exit(f'layers: poolmem.ko did not build against {kver}')
    return os.path.join(tmp, 'kmod'), kver


def calls(d):
    defs, undefs = {}, {}
    for o in glob.glob(os.path.join(d, '*.o')):
        if o.endswith(('.mod.o', 'poolmem.o')):
            continue
        f = os.path.basename(o)[:-2] + '.c'
        undefs[f] = set()
        for line in subprocess.run(['nm', o], capture_output=True, text=True).stdout.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] == 'T':
                defs[p[2]] = f
            elif len(p) == 2 and p[0] == 'U':
                undefs[f].add(p[1])
    edges = {}
    for f, us in undefs.items():
        for u in us:
            g = defs.get(u)
            if g and g != f:
                edges.setdefault((f, g), set()).add(u)
    return set(undefs), edges


def main():
    if len(sys.argv) > 1:
        d, what = sys.argv[1], sys.argv[1]
    else:
        d, what = build()
    order = main_c_order()
    files, edges = calls(d)
    sources = {os.path.basename(c) for c in glob.glob(os.path.join(KMOD, '*.c')) if not c.endswith('.mod.c')}
    bad = 0
    for f in sorted(sources - set(order)):
        print(f'layers: kmod/main.c\'s file list does not name {f}')
        bad += 1
    for f in sorted(set(order) - sources):
        print(f'layers: kmod/main.c\'s file list names {f}, which is not in kmod/')
        bad += 1
    rank = {f: i for i, f in enumerate(order)}
    up = {e: s for e, s in edges.items() if e[0] in rank and e[1] in rank and rank[e[1]] < rank[e[0]]}
    allowed = set()
    if os.path.exists(ALLOWED):
        for line in open(ALLOWED):
            line = line.split('#', 1)[0].split()
            if len(line) == 3 and line[1] == '->':
                allowed.add((line[0], line[2]))
    for (a, b), syms in sorted(up.items()):
        if (a, b) not in allowed:
            print(f'layers: {a} calls {b}, above it in main.c\'s list: {", ".join(sorted(syms))}')
            bad += 1
    for a, b in sorted(allowed - set(up)):
        print(f'layers: tests/kmod/layers.allowed lists {a} -> {b}, which is no upward call now: remove the line')
        bad += 1
    print(f'layers: {len(files)} files, {len(edges)} file-to-file call edges, {len(up)} upward '
          f'({len(set(up) & allowed)} of them listed in layers.allowed) [{what}]')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
