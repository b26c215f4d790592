"""Differential testing of the CPU backend against the interpreter.

Each check runs one MLIR function through `kiln-run --backend=cpu` and
through the interpreter (`kiln-run`, the oracle) on the same inputs, and
compares:

* integers and bools: exactly;
* floats: PyTorch's `torch._dynamo.utils.same` rule: allclose at the dtype's
  tolerance (NaN == NaN, infinities equal); else the RMSE of the CPU result
  against an fp64 reference (the same function with every float type made
  f64, run by the interpreter) must be at most 3x the interpreter's RMSE
  plus tol / 10 (cpu_sweep.same), with NaN/inf in the same places.
"""

import os
import re
import sys

import numpy as np

from cpu_sweep import FLOAT_ELEMS, same, to_f64_module
from kiln_testing import KilnRunError, TOLERANCES, run, ttype


class CPUSuite:
    def __init__(self, name, seed=0):
        self.name = os.path.basename(name)
        self.rng = np.random.default_rng(seed)
        self.passed = 0
        self.failed = 0

    # -- inputs ---------------------------------------------------------------
    def randn(self, *shape, dtype=np.float32, special=False):
        x = self.rng.standard_normal(shape).astype(dtype)
        if special and x.size >= 4:
            flat = x.reshape(-1)
            flat[0] = np.nan
            flat[1] = np.inf
            flat[2] = -np.inf
            flat[3] = -0.0
        return x

    def randint(self, lo, hi, *shape, dtype=np.int64):
        return self.rng.integers(lo, hi, shape).astype(dtype)

    def randbool(self, *shape):
        return self.rng.integers(0, 2, shape).astype(np.bool_)

    # -- checks ---------------------------------------------------------------
    def record(self, label, ok, message=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s: %s" % (label, message))
            sys.stdout.flush()

    def compare(self, label, got, want, elem, ref=None):
        return same(got, want, elem, ref)

    def check(self, label, mlir, inputs, entry=None, elems=None):
        """Runs `mlir` on both backends and compares every result. `elems`
        gives the result element types (default: from the NumPy dtype)."""
        try:
            want = run(mlir, inputs, entry=entry)
        except KilnRunError as e:
            self.record(label, False, "interpreter: " + str(e))
            return
        try:
            got = run(mlir, inputs, entry=entry, extra_args=["--backend=cpu"])
        except KilnRunError as e:
            self.record(label, False, "cpu: " + str(e))
            return
        if len(got) != len(want):
            self.record(label, False, "%d results, interpreter %d" % (len(got), len(want)))
            return
        refs = None
        for i, (g, w) in enumerate(zip(got, want)):
            elem = (elems[i] if elems else
                    {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
                     np.dtype(np.float16): "f16"}.get(np.asarray(w).dtype, "int"))
            ok, msg = self.compare(label, g, w, elem)
            if not ok and elem in FLOAT_ELEMS and msg.startswith("not allclose"):
                if refs is None:
                    f64_inputs = [x.astype(np.float64) if x.dtype.kind == "f" else x
                                  for x in inputs]
                    try:
                        refs = run(to_f64_module(mlir), f64_inputs, entry=entry)
                    except KilnRunError as e:
                        refs = []
                if i < len(refs):
                    ok, msg = self.compare(label, g, w, elem, refs[i])
            self.record("%s result%d" % (label, i), ok, msg)

    def check_op(self, op, inputs, result_types, attrs="", elems=None,
                 label=None, arg_types=None):
        """One op applied to all inputs. `arg_types` overrides the argument
        types (e.g. with `?` dims or bf16)."""
        elems_in = elems or [None] * len(inputs)
        if arg_types is None:
            arg_types = [ttype(x.shape, e or NP_ELEM[x.dtype])
                         for x, e in zip(inputs, elems_in)]
        operands = ", ".join("%%arg%d" % i for i in range(len(inputs)))
        attr = (" {" + attrs + "}") if attrs else ""
        args = ", ".join("%%arg%d: %s" % (i, t) for i, t in enumerate(arg_types))
        res = ", ".join(result_types)
        mlir = ("func.func @main(%s) -> %s {\n"
                "  %%r = %s %s%s : (%s) -> %s\n"
                "  return %%r : %s\n}\n") % (
                    args, res, op, operands, attr, ", ".join(arg_types), res, res)
        label = label or "%s %s %s" % (op, attrs, [t for t in arg_types])
        out_elems = [re.search(r"(bf16|f16|f32|f64|i64|i32|i1)>$", t).group(1)
                     for t in result_types]
        self.check(label, mlir, inputs, elems=out_elems)

    def check_reference(self, label, mlir, inputs, want, elem, entry=None):
        """Runs `mlir` on the CPU backend and compares its first result with
        `want` (an independent float64 reference, e.g. PyTorch) at the
        dtype's tolerance (NaN in the same places), then with the
        interpreter (`check`)."""
        try:
            got = run(mlir, inputs, entry=entry,
                      extra_args=["--backend=cpu"])[0].astype(np.float64)
        except KilnRunError as e:
            self.record(label + " vs reference", False, str(e))
            return
        want = np.asarray(want, dtype=np.float64)
        rtol, atol = TOLERANCES[elem]
        ok = (got.shape == want.shape and
              np.array_equal(np.isnan(got), np.isnan(want)) and
              np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))
        msg = ""
        if not ok:
            msg = ("shape %s vs %s" % (got.shape, want.shape) if got.shape != want.shape
                   else "max abs err %g" % np.nanmax(np.abs(got - want)))
        self.record(label + " vs reference", ok, msg)
        self.check(label + " vs interpreter", mlir, inputs, entry=entry, elems=[elem])

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        sys.exit(1 if self.failed or not self.passed else 0)


NP_ELEM = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
           np.dtype(np.float16): "f16", np.dtype(np.int64): "i64",
           np.dtype(np.int32): "i32", np.dtype(np.bool_): "i1"}
