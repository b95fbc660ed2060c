#!/usr/bin/env python3
"""kmod/poolmem.h's sections are true: a declaration under a section
comment that names a file ("/* pool.c: ... */") is defined in that file.
The private header is one file, sectioned by the file that defines each
thing (issue 47: "split by layer, or its sections true"). Fails naming
each declaration whose section names another file than the one that
defines it. Reads the sources, not the objects: no build needed.
usage: header-sections.py [KMOD_DIR]"""
import glob
import os
import re
import sys

kmod = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'kmod')
defined = {}
for f in glob.glob(os.path.join(kmod, '*.c')) + glob.glob(os.path.join(kmod, 'policy', '*.c')):
    text = open(f).read()
    name = os.path.basename(f)
    # functions, and variables (plain or DEFINE_*()) at file scope
    for m in re.finditer(r'^[a-z][\w \*]*?\b(pm_\w+)\(', text, re.M):
        defined.setdefault(m.group(1), set()).add(name)
    for m in re.finditer(r'^(?:DEFINE_\w+\(|[a-z][\w \*]*?\b)(pm_\w+)(?:\[.*\])?\s*(?:=|;|\))', text, re.M):
        defined.setdefault(m.group(1), set()).add(name)
section, bad, checked = None, [], 0
for i, line in enumerate(open(os.path.join(kmod, 'poolmem.h')).read().split('\n'), 1):
    m = re.match(r'^/\* ([a-z_]+\.c)\b', line)
    if m:
        section = m.group(1)
        continue
    m = re.match(r'^(?:extern\s+)?[a-z][\w \*]*?\b(pm_\w+)\s*[\(\[;]', line)
    if not m or not section:
        continue
    where = defined.get(m.group(1))
    if not where:
        continue  # a static inline or a macro's helper: not a file's
    checked += 1
    if section not in where:
        bad.append(f'poolmem.h:{i}: {m.group(1)} is in the {section} section but defined in {", ".join(sorted(where))}')
for b in bad:
    print('header-sections:', b)
print(f'header-sections: {checked} declarations checked, {len(bad)} in the wrong section')
sys.exit(1 if bad else 0)
