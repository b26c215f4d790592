# RUN: %python %s %S/../../Conversion/KTToLinalg/all-ops.mlir
# REQUIRES: numpy
# Declared result types less static than the inferred ones, for every kt op:
# each function of all-ops.mlir (one instance of each value-semantics op) is
# rewritten so that every kt op declares `?` for the dims of its results
# (all of them; then every other one), which the verifiers accept (the
# result is compatible with the inferred type), followed by a tensor.cast
# back to the original type for its users. Each rewritten function runs in
# the interpreter (the reference) and through the CPU backend (kiln-cpu:
# the lowering builds the inferred type and casts), compared by
# test/lib/cpu_sweep.py. kt.constant is left as it is (its result type is
# its value's type), and so are functions with non-tensor arguments (the
# CPU backend takes tensors only).
import re
import subprocess
import sys

import numpy as np
import cpu_sweep
from kiln_testing import KILN_OPT, KilnRunError, MLIR_TO_NP, Suite, run
from tool_server import tool_run  # noqa: E402

s = Suite(__file__)
s.cpu_cases = None  # the cases are swept below, not by finish()

FUNC = re.compile(r"^func\.func @(\w+)\((.*?)\) -> (.*?) \{\n(.*?)^\}", re.M | re.S)
OP = re.compile(r"^(\s*)(%\w+) = (kt\.\w+)(.*) : \((.*)\) -> (tensor<[^>]*>)\s*$")
TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)(\w+)>")


def relax(t, which):
    m = TENSOR.fullmatch(t)
    dims = [d for d in m.group(1).split("x") if d]
    dims = ["?" if which(i) else d for i, d in enumerate(dims)]
    return "tensor<%s%s>" % ("".join(d + "x" for d in dims), m.group(2))


def rewrite(body, which):
    """`body` with each kt op's result type relaxed by `which` and a
    tensor.cast back to the original type; None if nothing changes."""
    out, changed = [], False
    for line in body.splitlines():
        m = OP.match(line)
        if not m or m.group(3) == "kt.constant":
            out.append(line)
            continue
        indent, name, op, rest, operands, result = m.groups()
        loose = relax(result, which)
        if loose == result:
            out.append(line)
            continue
        changed = True
        out.append("%s%s_loose = %s%s : (%s) -> %s" % (indent, name, op, rest, operands, loose))
        out.append("%s%s = tensor.cast %s_loose : %s to %s" % (indent, name, name, loose, result))
    return "\n".join(out) + "\n" if changed else None


def inputs_for(args):
    xs = []
    for a in args.split(", "):
        t = a.split(": ", 1)[1]
        m = TENSOR.fullmatch(t)
        shape = [3 if d == "?" else int(d) for d in m.group(1).split("x") if d]
        elem = m.group(2)
        if elem in ("f32", "f64", "f16", "bf16"):
            xs.append(s.randn(*shape).astype(MLIR_TO_NP[elem]))
        elif elem == "i1":
            xs.append(s.randint(0, 2, *shape).astype(np.bool_))
        else:  # small non-negative integers: valid indices and targets
            xs.append(s.randint(0, 2, *shape).astype(MLIR_TO_NP[elem]))
    return xs


text = open(sys.argv[1]).read()
cases, skipped = [], []
for name, args, results, body in FUNC.findall(text):
    if args and any(not a.split(": ", 1)[1].startswith("tensor<") for a in args.split(", ")):
        skipped.append(name)
        continue
    inputs = inputs_for(args) if args else []
    for tag, which in (("all", lambda i: True), ("even", lambda i: i % 2 == 0)):
        new = rewrite(body, which)
        if new is None:
            continue
        mlir = "func.func @%s(%s) -> %s {\n%s}\n" % (name, args, results, new)
        label = "%s (%s dims ?)" % (name, tag)
        # The verifier accepts the less static result types.
        p = tool_run([KILN_OPT, "-", "-o", "/dev/null"], input=mlir,
                           capture_output=True, text=True)
        if p.returncode != 0:
            s.record(label + " verifies", False, p.stderr.strip() + "\n" + mlir)
            continue
        try:
            interp = run(mlir, inputs)
            cases.append(cpu_sweep.Case(label, mlir, inputs, name, interp))
        except KilnRunError as e:
            # A run-time error in the interpreter: the CPU backend must
            # report the same one.
            msg = re.search(r":\d+:\d+: error: (.*?)(?: \(note:|$)", e.stderr, re.M)
            cases.append(cpu_sweep.Case(label, mlir, inputs, name, None,
                                        error=msg.group(1) if msg else "error"))

print("less_static_results.py: %d rewritten functions; left as they are "
      "(non-tensor arguments): %s" % (len(cases), ", ".join(skipped)))
cpu_sweep.sweep(s, cases)
s.finish()
