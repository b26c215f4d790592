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
# * the caller of N separable interpolations (kt.index_select at constant
#   indices times constant weights, as the importer writes F.interpolate)
#   holds calls and views only, no loop: the gathers are kernels.

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
# (kiln-cpu-early-dealloc): its end-of-block bufferization.dealloc keeps
# no operand (the returned buffer is handed to the return), not one per
# intermediate (whose simplification was quadratic: 1.4 s of 2 s at 1000
# ops), and every intermediate has its memref.dealloc.
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
    check("the end-of-block dealloc has no operand", ends == [],
          str(ends)[:300])


# The caller holds calls and views only: every op that makes a loop is in a
# kernel function. The shape ops that move data (index_select, pad, concat,
# permute, ...) used to stay in the caller: ~48 bicubic interpolations (the
# importer's F.interpolate: 4 kt.index_select at constant indices per
# spatial dim) left 400 gathers there, which LLVM fully unrolled into one
# huge function, super-linear in -O3 (212 s to compile, issue 13).
def interp(n):
    """n separable bicubic-like upsamplings of 2x3x5x5 inputs, as the importer
    writes F.interpolate (4 taps per spatial dim: kt.index_select of the
    input at constant indices times constant weights, summed)."""
    lines, args, rets, k = [], [], [], [0]

    def val():
        k[0] += 1
        return "%%v%d" % k[0]

    for b in range(n):
        x = "%%a%d" % b
        args.append("%s: tensor<2x3x5x5xf32>" % x)
        cur, shape = x, [2, 3, 5, 5]
        for dim in (3, 2):
            out = list(shape)
            out[dim] = 7
            t_out = "tensor<%sxf32>" % "x".join(map(str, out))
            acc = None
            for tap in range(4):
                idx = [min(4, max(0, (j * 5) // 7 + tap - 1 + (b % 2))) for j in range(7)]
                w = [round(0.1 * (tap + 1) + 0.01 * j + 0.001 * b, 4) for j in range(7)]
                i, g, c, m = val(), val(), val(), val()
                lines.append("%s = kt.constant {value = dense<%s> : tensor<7xi64>} : () -> tensor<7xi64>" % (i, idx))
                lines.append("%s = kt.index_select %s, %s {dim = %d} : (tensor<%sxf32>, tensor<7xi64>) -> %s"
                             % (g, cur, i, dim, "x".join(map(str, shape)), t_out))
                wshape = "7" if dim == 3 else "7x1"
                lines.append("%s = kt.constant {value = dense<%s> : tensor<7xf32>} : () -> tensor<7xf32>" % (c, w))
                if dim == 2:
                    c2 = val()
                    lines.append("%s = kt.reshape %s {shape = [7, 1]} : (tensor<7xf32>) -> tensor<7x1xf32>" % (c2, c))
                    c = c2
                lines.append("%s = kt.mul %s, %s : (%s, tensor<%sxf32>) -> %s" % (m, g, c, t_out, wshape, t_out))
                if acc is None:
                    acc = m
                else:
                    s = val()
                    lines.append("%s = kt.add %s, %s : (%s, %s) -> %s" % (s, acc, m, t_out, t_out, t_out))
                    acc = s
            cur, shape = acc, out
        rets.append(cur)
    t = "tensor<2x3x7x7xf32>"
    return ("func.func @main(%s) -> (%s) {\n  %s\n  return %s : %s\n}\n"
            % (", ".join(args), ", ".join([t] * n), "\n  ".join(lines), ", ".join(rets), ", ".join([t] * n)))


for n in (4, 16):
    p = subprocess.run([KILN_OPT, "-", "-kiln-cpu",
                        "--mlir-print-ir-after=kiln-cpu-early-dealloc", "-o",
                        os.devnull], input=interp(n), capture_output=True,
                       text=True)
    check("kiln-cpu runs on %d interpolations" % n, p.returncode == 0,
          p.stderr[-500:])
    caller = re.search(r"func\.func @main\(.*?\n  }\n", p.stderr, re.S)
    check("interpolation caller found", caller is not None, p.stderr[:300])
    if caller:
        body = caller.group(0)
        loops = re.findall(r"\b(?:scf|linalg|vector|affine)\.\w+|"
                           r"\bmemref\.(?:load|store|copy)\b", body)
        check("no loop in the caller (%d interpolations)" % n, not loops,
              "%d loop ops: %s" % (len(loops), sorted(set(loops))))
        calls = len(re.findall(r"= call @", body))
        check("a call per kernel (%d interpolations)" % n, calls == 10 * n,
              "%d calls" % calls)

print("compile-scaling.py: %d failed" % failed)
sys.exit(1 if failed else 0)
