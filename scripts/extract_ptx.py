#!/usr/bin/python3
"""Writes the PTX of every gpu.binary object in an MLIR file (kiln-nvptx
with emit=isa) to DIR/<binary>.<n>.ptx and prints one line per file.

    extract_ptx.py INPUT.mlir DIR

The PTX is the `assembly` string of the #gpu.object (MLIR escapes a byte as
a backslash and two hex digits: newlines are \\0A). Exits 1 when the input
has no gpu.binary with PTX.
"""
import os
import re
import sys


def unescape(s):
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and re.match(r"[0-9A-Fa-f]{2}", s[i + 1:i + 3]):
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
        elif c == "\\" and i + 1 < len(s):
            out += s[i + 1].encode()
            i += 2
        else:
            out += c.encode()
            i += 1
    return out.decode()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    text = open(sys.argv[1]).read()
    os.makedirs(sys.argv[2], exist_ok=True)
    n = 0
    for m in re.finditer(r'gpu\.binary @([\w.$-]+)[^\n]*?assembly = "((?:[^"\\]|\\.)*)"', text):
        n += 1
        path = os.path.join(sys.argv[2], "%s.%d.ptx" % (m.group(1), n))
        with open(path, "w") as f:
            f.write(unescape(m.group(2)))
        print(path)
    if n == 0:
        sys.exit("extract_ptx.py: no gpu.binary with PTX in " + sys.argv[1])


if __name__ == "__main__":
    main()
