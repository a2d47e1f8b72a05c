#!/usr/bin/env python3
"""supervisor/README.md's table of files is complete and names only files that exist:
every source the build compiles into devwld (the devwld_LAYER libraries' SOURCES and
devwld's own, as CMake passes them: LAYER/FILE.c) is listed under its folder, and so is
every header that has no source of its name (devwld.h, serve-internal.h, ...); every file
the table lists is in that folder.
Usage: readme-files.py SUPERVISOR-DIR SOURCE-LIST..."""
import os
import re
import sys

sup = sys.argv[1]
built = set()
for arg in sys.argv[2:]:
    for src in arg.split(';'):
        src = os.path.relpath(os.path.join(sup, src), sup) if not os.path.isabs(src) \
            else os.path.relpath(src, sup)
        if src.endswith('.c'):
            built.add(src)

with open(os.path.join(sup, 'README.md')) as f:
    text = f.read()
block = text.split('```')[1]  # the first code block: the tree
listed, folder = set(), None
for line in block.splitlines():
    m = re.match(r'^\s*([a-z]+)/\s+(\S+)', line)
    if m and os.path.isdir(os.path.join(sup, m.group(1))):
        folder = m.group(1)
        name = m.group(2)
    else:
        m = re.match(r'^ {4,}(\S+\.[ch])\b', line)
        if not m:
            if re.match(r'^\S', line):  # common/, base/, ...: past devwld's folders
                folder = None
            continue
        name = m.group(1)
    if folder and re.match(r'^[\w-]+\.[ch]$', name):
        listed.add(folder + '/' + name)

headers = set()
for layer in os.listdir(sup):
    d = os.path.join(sup, layer)
    if os.path.isdir(d):
        for h in os.listdir(d):
            if h.endswith('.h') and layer + '/' + h[:-2] + '.c' not in built:
                headers.add(layer + '/' + h)

fail = False
for f in sorted((built | headers) - listed):
    print(f'FAIL: supervisor/{f} is not in supervisor/README.md\'s table')
    fail = True
for f in sorted(listed):
    if not os.path.exists(os.path.join(sup, f)):
        print(f'FAIL: supervisor/README.md lists {f}, which does not exist')
        fail = True
if not built:
    print('FAIL: no sources given')
    fail = True
print(f'{len(listed)} files listed, {len(built)} sources built, {len(headers)} headers alone')
sys.exit(1 if fail else 0)
