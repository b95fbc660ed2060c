#!/usr/bin/env python3
"""poolctl, the agent and the exporter write no sysfs or tracefs file
themselves: libpoolmem does (the typed pool setters in stats.hpp, poison.hpp,
media.hpp, online.hpp, dax.hpp), so
that each rule about those files is in one place (issue 47).

A write is an open for writing (O_WRONLY, O_RDWR, std::ofstream, fopen
with "w" or "a") or a write helper's call; it is one of sysfs or tracefs
when its statement, or the three lines before it (where the path is
built), names sysfs, /sys/ or a tracing directory.

usage: no-sysfs-writes.py [SOURCE_ROOT]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
WRITE = re.compile(r'O_WRONLY|O_RDWR|std::ofstream|\bofstream\b|fopen\([^)]*"[wa]|\bwrite_file\(')
SYSFS = re.compile(r'sysfs|"/sys/|/sys/kernel|tracing|tracefs')

bad = []
files = 0
for d in ('ctl', 'agent', 'exporter'):
    for dirpath, _, names in os.walk(os.path.join(root, d)):
        for n in sorted(names):
            if not n.endswith(('.cpp', '.hpp', '.h')):
                continue
            path = os.path.join(dirpath, n)
            files += 1
            lines = open(path, encoding='utf-8').read().split('\n')
            for i, line in enumerate(lines):
                code = line.split('//')[0]
                if not WRITE.search(code):
                    continue
                context = '\n'.join(l.split('//')[0] for l in lines[max(0, i - 3):i + 1])
                if SYSFS.search(context):
                    bad.append(f'{os.path.relpath(path, root)}:{i + 1}: {line.strip()}')
for b in bad:
    print(f'no-sysfs-writes: {b}: a sysfs or tracefs write outside libpoolmem (move it there)')
print(f'no-sysfs-writes: {files} files of ctl/, agent/ and exporter/, {len(bad)} sysfs or tracefs writes')
sys.exit(1 if bad else 0)
