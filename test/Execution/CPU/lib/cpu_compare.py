"""Differential testing of the CPU backend against the interpreter.

Each check runs one MLIR function through `kiln-run --backend=cpu` and
through the interpreter (`kiln-run`, the oracle) on the same inputs, and
compares. The runs are batched: the pending checks (up to CPUSuite.BATCH)
run in one `kiln-run --batch` process per backend (cpu_sweep._run_all: one
kiln-cpu compile for all of them; a case that fails to compile or crashes
is named). The comparison:

* integers and bools: exactly;
* floats: PyTorch's `torch._dynamo.utils.same` rule: allclose at the dtype's
  tolerance (NaN == NaN, infinities equal); else the RMSE of the CPU result
  against an fp64 reference (the same function with every float type made
  f64, run by the interpreter) must be at most 3x the interpreter's RMSE
  plus tol / 10 (cpu_sweep.same), with NaN/inf in the same places.
"""

import os
import re
import shutil
import sys
import tempfile

import numpy as np

from cpu_sweep import FLOAT_ELEMS, Case, _run_all, same, to_f64_module
from kiln_testing import KilnRunError, TOLERANCES, run, ttype


class CPUSuite:
    def __init__(self, name, seed=0):
        self.name = os.path.basename(name)
        self.rng = np.random.default_rng(seed)
        self.passed = 0
        self.failed = 0
        self.pending = []

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
        gives the result element types (default: from the NumPy dtype).
        The runs are deferred: `flush()` (at the latest `finish()`) runs the
        pending cases in one interpreter and one CPU `kiln-run --batch`
        process (one kiln-cpu compile and JIT module for all of them;
        cpu_sweep._run_all names a case that crashes), then compares."""
        self._defer(label, mlir, inputs, entry, elems, None)

    def _defer(self, label, mlir, inputs, entry, elems, reference):
        case = Case(label, mlir, inputs, entry, None)
        case.elems_given = elems
        case.reference = reference
        self.pending.append(case)
        if len(self.pending) >= self.BATCH:
            self.flush()

    BATCH = 40

    def flush(self):
        cases, self.pending = self.pending, []
        if not cases:
            return
        tmp = tempfile.mkdtemp(prefix="kiln-cpu-compare-")
        try:
            texts = {}
            for k, c in enumerate(cases):
                if c.entry:
                    texts[k] = c.mlir
                else:
                    self.record(c.label, False, "cannot tell the entry")
                    if c.reference is not None:
                        self._compare_reference(c, None)
            want = _run_all(cases, texts, "interpreter", tmp, "interp")
            got = _run_all(cases, texts, "cpu", tmp, "cpu")
            need_ref = {}
            for k in sorted(texts):
                c = cases[k]
                wk, w = want[k]
                gk, g = got[k]
                if c.reference is not None:
                    self._compare_reference(c, g if gk == "ok" and g else None)
                if wk != "ok":
                    self.record(c.label, False, "interpreter: " + str(w))
                    continue
                if gk == "skipped":
                    self.record(c.label, False, "cpu: no CPU lowering of " + ", ".join(g))
                    continue
                if gk != "ok":
                    self.record(c.label, False, "cpu: " + str(g))
                    continue
                if len(g) != len(w):
                    self.record(c.label, False, "%d results, interpreter %d" % (len(g), len(w)))
                    continue
                c.results = []
                for i, (gi, wi) in enumerate(zip(g, w)):
                    elem = (c.elems_given[i] if c.elems_given else
                            {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
                             np.dtype(np.float16): "f16"}.get(np.asarray(wi).dtype, "int"))
                    ok, msg = self.compare(c.label, gi, wi, elem)
                    c.results.append((gi, wi, elem, ok, msg))
                    if not ok and elem in FLOAT_ELEMS and msg.startswith("not allclose"):
                        need_ref[k] = True
            refs = {}
            if need_ref:
                ref_cases = {k: Case(cases[k].label, to_f64_module(cases[k].mlir),
                                     [x.astype(np.float64) if x.dtype.kind == "f" else x
                                      for x in cases[k].inputs], cases[k].entry, None)
                             for k in need_ref}
                out = _run_all(ref_cases, {k: rc.mlir for k, rc in ref_cases.items()},
                               "interpreter", tmp, "ref")
                refs = {k: v[1] for k, v in out.items() if v[0] == "ok"}
            for k in sorted(texts):
                c = cases[k]
                for i, (gi, wi, elem, ok, msg) in enumerate(getattr(c, "results", [])):
                    if not ok and k in refs and i < len(refs[k]):
                        ok, msg = self.compare(c.label, gi, wi, elem, refs[k][i])
                    self.record("%s result%d" % (c.label, i), ok, msg)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

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
        interpreter (`check`). Deferred like `check`: the same CPU run (in
        the batch) gives both comparisons."""
        self._defer(label + " vs interpreter", mlir, inputs, entry, [elem],
                    (label + " vs reference", np.asarray(want, dtype=np.float64),
                     elem))

    def _compare_reference(self, case, got):
        """The `check_reference` comparison of the CPU's first result."""
        label, want, elem = case.reference
        if got is None:
            self.record(label, False, "no CPU result (see %s)" % case.label)
            return
        got = np.asarray(got[0]).astype(np.float64)
        rtol, atol = TOLERANCES[elem]
        ok = (got.shape == want.shape and
              np.array_equal(np.isnan(got), np.isnan(want)) and
              np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))
        msg = ""
        if not ok:
            msg = ("shape %s vs %s" % (got.shape, want.shape) if got.shape != want.shape
                   else "max abs err %g" % np.nanmax(np.abs(got - want)))
        self.record(label, ok, msg)

    def finish(self):
        self.flush()
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        sys.exit(1 if self.failed or not self.passed else 0)


NP_ELEM = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
           np.dtype(np.float16): "f16", np.dtype(np.int64): "i64",
           np.dtype(np.int32): "i32", np.dtype(np.bool_): "i1"}
