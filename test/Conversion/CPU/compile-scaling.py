# RUN: %python %s
# A compile-time regression guard that counts work, not seconds (issue 13):
# chains of N blocks `linear -> gelu -> layer_norm -> add` (4 kt ops each,
# the blocks of bench/compile_bench.py) at N = 100 and 400 ops.
#
# * kiln-fuse's planner scores each candidate pair about once and checks
#   cycles once per popped pair: pairs scored and cycle checks grow
#   linearly (at most 5x for 4x the ops; quadratic would be 16x). Before, every merge rescored
#   every pair of the graph (quadratic).
# * kiln-cpu-outline-kernels makes one function per distinct kernel: the
#   repeated block gives the same few kernel functions at any N (reused at
#   every other site), and one call per kernel site (linear).
# * the whole kiln-cpu pipeline on the 400-op chain produces only those
#   few kernel functions (llvm.func with kiln.kernel_function).

import os
import re
import subprocess
import sys

TOOLS = os.environ.get("KILN_TOOLS_DIR", "")
KILN_OPT = os.path.join(TOOLS, "kiln-opt")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "bench"))
from compile_bench import chain  # noqa: E402

failed = 0


def check(label, ok, msg=""):
    global failed
    if not ok:
        failed += 1
        print("FAIL %s: %s" % (label, msg))


def opt(text, *args):
    p = subprocess.run([KILN_OPT, "-", *args], input=text, capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise SystemExit("kiln-opt %s failed:\n%s" % (" ".join(args), p.stderr))
    return p.stdout


fuse, outline = {}, {}
for n in (100, 400):
    src = chain(n)
    out = opt(src, "-kiln-fuse=report=true contractions=false", "-o", os.devnull)
    m = re.search(r"planning: (\d+) pairs scored, (\d+) cycle checks", out)
    check("fuse report %d" % n, m is not None, out[:500])
    if m:
        fuse[n] = (int(m.group(1)), int(m.group(2)))
    out = opt(src, "-kiln-fuse=contractions=false",
              "-kiln-cpu-outline-kernels=stats=true", "-o", os.devnull)
    m = re.search(r"(\d+) kernels, (\d+) reused, (\d+) calls", out)
    check("outline stats %d" % n, m is not None, out[:500])
    if m:
        outline[n] = tuple(int(g) for g in m.groups())

if len(fuse) == 2:
    for i, what in enumerate(["pairs scored", "cycle checks"]):
        lo, hi = fuse[100][i], fuse[400][i]
        check("kiln-fuse %s grow linearly" % what, 0 < lo and hi <= 5 * lo,
              "%d at 100 ops, %d at 400 ops" % (lo, hi))
if len(outline) == 2:
    k1, r1, c1 = outline[100]
    k4, r4, c4 = outline[400]
    check("one function per distinct kernel", k1 == k4 and k1 <= 4,
          "%s at 100 ops, %s at 400 ops" % (outline[100], outline[400]))
    check("a call per kernel site", c1 == k1 + r1 and c4 == k4 + r4 and
          200 <= c4 <= 4.5 * c1, "%s / %s" % (outline[100], outline[400]))

# The pipeline's output: the same few kernel functions, no more.
llvm = opt(chain(400), "-kiln-cpu")
fns = re.findall(r"llvm\.func @(\w+)\(.*kiln\.kernel_function", llvm)
check("kiln-cpu compiles the distinct kernels only", 0 < len(fns) <= 4,
      "kernel functions: %s" % fns[:20])
check("kernels stay functions (noinline)",
      all("noinline" in l for l in llvm.splitlines()
          if "kiln.kernel_function" in l and "llvm.func" in l), "")

# The caller frees each kernel result after its last use
# (kiln-cpu-early-dealloc): its end-of-block bufferization.dealloc keeps only
# the returned buffer, not one operand per intermediate (whose simplification
# was quadratic: 1.4 s of 2 s at 1000 ops), and every intermediate has its
# memref.dealloc.
p = subprocess.run([KILN_OPT, "-", "-kiln-cpu",
                    "--mlir-print-ir-after=kiln-cpu-early-dealloc", "-o",
                    os.devnull], input=chain(400), capture_output=True,
                   text=True)
check("kiln-cpu runs", p.returncode == 0, p.stderr[-500:])
caller = re.search(r"func\.func @main\(.*?\n  }\n", p.stderr, re.S)
check("caller found", caller is not None, p.stderr[:300])
if caller:
    body = caller.group(0)
    calls = len(re.findall(r"= call @", body))
    frees = len(re.findall(r"memref\.dealloc %", body))
    ends = re.findall(r"bufferization\.dealloc \(([^)]*) :", body)
    check("a free per intermediate", calls >= 200 and frees == calls - 1,
          "%d calls, %d memref.dealloc" % (calls, frees))
    check("the end-of-block dealloc is small",
          len(ends) == 1 and ends[0].count("%") <= 2, str(ends)[:300])

print("compile-scaling.py: %d failed" % failed)
sys.exit(1 if failed else 0)
