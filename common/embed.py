#!/usr/bin/env python3
"""Turn a text file into a C source defining one NUL-terminated string."""
import sys

src, out, name = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(src, 'rb').read()
with open(out, 'w') as f:
    f.write('/* generated from %s by embed.py */\n' % src.split('/')[-1])
    f.write('const char %s[] = {\n' % name)
    for i in range(0, len(data), 16):
        f.write(''.join('%d,' % b for b in data[i:i + 16]) + '\n')
    f.write('0};\n')
