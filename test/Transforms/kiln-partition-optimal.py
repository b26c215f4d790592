# RUN: %python %s
# REQUIRES: numpy
"""The min-cut of kiln-partition is optimal, on random small graphs.

A generator writes random DAGs of kt ops (pointwise unary and binary ops with
broadcasting, reductions, matmul with a weight) over three primals; for each,
kiln-opt -kiln-autodiff -kiln-partition{verify-optimal} solves the cut of
mincut, recompute-all and mincut with memory-budget 0.5 both by max-flow and
by exhaustive search over every source/sink assignment of the free nodes
(same constraints and capacities, lib/Transforms/PartitionCut.cpp) and fails
when the optima differ. The test checks that every run succeeds and says it
agreed (graphs with more than 18 free nodes are reported as not verified;
most must be verified), that mincut's saved bytes never exceed save-all's,
and, through kiln-run, that @f_bwd(@f_fwd(x) saved, ct) is bitwise the
joint's result under every policy.
"""

import os
import re
import subprocess
import tempfile

import numpy as np

from kiln_testing import Suite, run, KilnRunError
from tool_server import tool_run  # noqa: E402

KILN_OPT = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-opt")
SHAPES = {"x": (4, 8), "r": (8,), "c": (4, 1)}


def tt(shape):
    return "tensor<%sf64>" % "".join("%dx" % d for d in shape)


def bshape(a, b):
    return tuple(np.broadcast_shapes(a, b))


def random_graph(rng, name, n_ops):
    vals = [("%a0", (4, 8)), ("%a1", (8,)), ("%a2", (8, 8))]
    lines = []
    for i in range(n_ops):
        out = "%%v%d" % i
        pool = [v for v in vals if v[1] != (8, 8)]
        kind = rng.choice(["unary", "binary", "binary", "reduce", "matmul"],
                          p=[0.35, 0.35, 0.0, 0.15, 0.15])
        if kind == "unary":
            x, s = pool[rng.integers(len(pool))]
            op = rng.choice(["exp", "sin", "tanh", "relu", "neg", "sigmoid"])
            lines.append("%s = kt.%s %s : (%s) -> %s" % (out, op, x, tt(s), tt(s)))
            vals.append((out, s))
        elif kind == "binary":
            (x, sx), (y, sy) = (pool[rng.integers(len(pool))] for _ in range(2))
            op = rng.choice(["add", "mul", "sub", "maximum"])
            s = bshape(sx, sy)
            lines.append("%s = kt.%s %s, %s : (%s, %s) -> %s"
                         % (out, op, x, y, tt(sx), tt(sy), tt(s)))
            vals.append((out, s))
        elif kind == "reduce":
            big = [v for v in pool if v[1] == (4, 8)]
            x, s = big[rng.integers(len(big))]
            if rng.random() < 0.5:
                lines.append("%s = kt.sum %s {dim = [0]} : (%s) -> %s"
                             % (out, x, tt(s), tt((8,))))
                vals.append((out, (8,)))
            else:
                lines.append("%s = kt.sum %s {dim = [1], keepdim = true} : (%s) -> %s"
                             % (out, x, tt(s), tt((4, 1))))
                vals.append((out, (4, 1)))
        else:
            big = [v for v in pool if v[1] == (4, 8)]
            x, s = big[rng.integers(len(big))]
            lines.append("%s = kt.matmul %s, %%a2 : (%s, %s) -> %s"
                         % (out, x, tt(s), tt((8, 8)), tt((4, 8))))
            vals.append((out, (4, 8)))
    # One or two outputs among the last values.
    outs = [vals[-1]]
    if rng.random() < 0.3 and len(vals) > 4:
        outs.append(vals[-2])
    lines.append("return %s : %s" % (", ".join(o[0] for o in outs),
                                     ", ".join(tt(o[1]) for o in outs)))
    res = ", ".join(tt(o[1]) for o in outs)
    if len(outs) > 1:
        res = "(" + res + ")"
    text = ("func.func @%s(%%a0: %s, %%a1: %s, %%a2: %s) -> %s attributes {kg.differentiate} {\n%s\n}\n"
            % (name, tt((4, 8)), tt((8,)), tt((8, 8)), res,
               "\n".join("  " + l for l in lines)))
    return text, [o[1] for o in outs]


def kiln_opt(text, options):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        return tool_run([KILN_OPT, path, "-kiln-autodiff",
                               "-kiln-partition=" + options],
                              capture_output=True, text=True)
    finally:
        os.unlink(path)


def main():
    s = Suite(__file__, seed=2024)
    verified = 0
    runs = 0
    for gi in range(40):
        text, out_shapes = random_graph(s.rng, "g%d" % gi, int(s.rng.integers(3, 9)))
        save_bytes = None
        modules = {}
        for label, opts in [("save-all", "policy=save-all"),
                            ("mincut", "policy=mincut"),
                            ("recompute-all", "policy=recompute-all"),
                            ("budget", "policy=mincut memory-budget=0.5")]:
            proc = kiln_opt(text, opts + " keep-joint print-report"
                            + ("" if label == "save-all" else
                               " verify-optimal verify-optimal-max-nodes=18"))
            tag = "g%d/%s" % (gi, label)
            if proc.returncode != 0:
                s.record(tag, False, proc.stderr + "\n" + text)
                continue
            modules[label] = proc.stdout
            row = [l.split() for l in proc.stderr.splitlines()
                   if l.startswith("g%d_joint" % gi)][0]
            nbytes = int(row[5])
            if label == "save-all":
                save_bytes = nbytes
                continue
            runs += 1
            ok = "equals the exhaustive optimum" in proc.stderr
            verified += ok
            if not ok:
                s.record(tag + " reported", "not verified" in proc.stderr,
                         proc.stderr)
            if label == "mincut" and save_bytes is not None:
                s.record(tag + " bytes <= save-all", nbytes <= save_bytes,
                         "%d > %d" % (nbytes, save_bytes))
        # Semantics on the interpreter, for a quarter of the graphs.
        if gi % 4 == 0 and len(modules) == 4:
            x = [s.randn(4, 8, dtype=np.float64), s.randn(8, dtype=np.float64),
                 s.randn(8, 8, dtype=np.float64)]
            cts = [s.randn(*sh, dtype=np.float64) for sh in out_shapes]
            for label, mod in modules.items():
                try:
                    joint = run(mod, x + cts, entry="g%d_joint" % gi)
                    fwd = run(mod, x, entry="g%d_fwd" % gi)
                    n = len(out_shapes)
                    bwd = run(mod, fwd[n:] + cts, entry="g%d_bwd" % gi)
                except KilnRunError as e:
                    s.record("g%d/%s run" % (gi, label), False, str(e))
                    continue
                got = fwd[:n] + bwd
                s.record("g%d/%s == joint" % (gi, label),
                         len(got) == len(joint) and
                         all(np.array_equal(a, b) for a, b in zip(got, joint)),
                         "fwd+bwd differ from the joint")
    s.record("most cuts verified exhaustively (%d of %d)" % (verified, runs),
             verified * 4 >= runs * 3)
    print("verified %d of %d cuts exhaustively" % (verified, runs))
    s.finish()


main()
