"""Helpers for Kiln's execution tests.

An execution test builds a small MLIR function, runs it through `kiln-run` on
inputs it generates, and compares the results with values computed
independently by NumPy or PyTorch (never by Kiln itself).

    import numpy as np, torch
    from kiln_testing import Suite, ttype

    s = Suite(__file__)
    x = s.randn(3, 4)
    s.check_unary("kt.exp", x, np.exp(x.astype(np.float64)))
    s.finish()

`Suite.finish()` prints "N passed, M failed" and exits non-zero if any check
failed, so lit reports the file as failing.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

import numpy as np

from tool_server import tool_run

# Tests never read or write the user's compiled-code disk cache
# (docs/codegen.md, "Disk cache"); tests of the cache pass their own.
os.environ["KILN_CACHE_DIR"] = "off"

KILN_RUN = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-run")
KILN_OPT = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-opt")
# When set (e.g. KILN_TEST_PIPELINE='builtin.module(kiln-decompose)' in a
# RUN line), `run` applies this kiln-opt pass pipeline to every module before
# running it, so an execution test checks the transformed IR against its
# independent reference too.
TEST_PIPELINE = os.environ.get("KILN_TEST_PIPELINE", "")

# When set, every case `Suite.check` runs (module, inputs, the interpreter's
# results and the check's fp64 reference) is also saved under this directory, one
# folder per case: the GPU check (scripts/gpu/make_corpus.py) compiles them
# for the GPU and compares the GPU's results with these.
GPU_CORPUS = os.environ.get("KILN_GPU_CORPUS", "")

# MLIR element type <-> NumPy dtype. bf16 has no NumPy dtype: kiln-run reads
# and writes it as float32.
MLIR_TO_NP = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16,
    "bf16": np.float32, "i64": np.int64, "i32": np.int32, "i16": np.int16,
    "i8": np.int8, "ui8": np.uint8, "i1": np.bool_,
}
NP_TO_MLIR = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
              np.dtype(np.float16): "f16", np.dtype(np.int64): "i64",
              np.dtype(np.int32): "i32", np.dtype(np.int16): "i16",
              np.dtype(np.int8): "i8", np.dtype(np.uint8): "ui8",
              np.dtype(np.bool_): "i1"}

# Default tolerances per dtype (rtol, atol) for comparing with an fp64
# reference.
TOLERANCES = {
    "f64": (1e-12, 1e-12), "f32": (1e-5, 1e-6), "f16": (2e-3, 2e-3),
    "bf16": (1.6e-2, 1e-2), "i64": (0, 0), "i32": (0, 0), "i16": (0, 0),
    "i8": (0, 0), "ui8": (0, 0), "i1": (0, 0),
}


def ttype(shape, elem):
    """MLIR tensor type text: ttype((2, 3), 'f32') -> 'tensor<2x3xf32>'."""
    dims = "".join(("?" if d is None or d < 0 else str(d)) + "x" for d in shape)
    return "tensor<%s%s>" % (dims, elem)


def elem_of(array):
    return NP_TO_MLIR[array.dtype]


def to_bf16(x):
    """Rounds float32 values to bfloat16 precision (nearest even), as float32."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, out)


# What kiln-run prints when the call itself failed (a run-time error).
RUNTIME_ERROR = re.compile(r"kiln-run: error: running @\S+ failed")


class KilnRunError(Exception):
    def __init__(self, returncode, stderr):
        super().__init__("kiln-run exited %d: %s" % (returncode, stderr.strip()))
        self.returncode = returncode
        self.stderr = stderr


# The warning of a pattern set that rewrote until its cap (kiln/Support/
# BoundedRewrite.h): the result is right, but compiling took seconds longer
# than it should. The tests fail on it, so that such a defect is found.
NOT_CONVERGED = "rewriting did not converge"


def check_converged(proc):
    """Raises KilnRunError when `proc` (a finished subprocess.run with text
    stderr) warned that some rewriting did not converge."""
    if NOT_CONVERGED in (proc.stderr or ""):
        raise KilnRunError(proc.returncode, "compile-time defect: " + "\n".join(
            l for l in proc.stderr.splitlines() if NOT_CONVERGED in l))


def run(mlir, inputs, entry=None, extra_args=()):
    """Runs `entry` of the module text `mlir` on the NumPy `inputs`; returns
    the list of results (NumPy arrays). Raises KilnRunError on failure."""
    tmp = tempfile.mkdtemp(prefix="kiln-test-")
    try:
        path = os.path.join(tmp, "test.mlir")
        with open(path, "w") as f:
            f.write(mlir)
        if TEST_PIPELINE:
            after = os.path.join(tmp, "after.mlir")
            proc = tool_run([KILN_OPT, path, "-o", after,
                             "-mlir-print-debuginfo",
                             "--pass-pipeline=" + TEST_PIPELINE])
            if proc.returncode != 0:
                raise KilnRunError(proc.returncode, proc.stderr)
            check_converged(proc)
            path = after
        args = [KILN_RUN, path, "--output-dir=" + os.path.join(tmp, "out")]
        if entry:
            args.append("--entry=" + entry)
        for i, x in enumerate(inputs):
            p = os.path.join(tmp, "in%d.npy" % i)
            np.save(p, np.array(x, order="C"))  # keeps rank 0 (ascontiguousarray does not)
            args.append("--input=" + p)
        args.extend(extra_args)
        proc = tool_run(args)
        if proc.returncode != 0:
            raise KilnRunError(proc.returncode, proc.stderr)
        check_converged(proc)
        out = []
        i = 0
        while os.path.exists(os.path.join(tmp, "out", "result%d.npy" % i)):
            out.append(np.load(os.path.join(tmp, "out", "result%d.npy" % i)))
            i += 1
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def func_text(name, arg_types, result_types, body_lines):
    """A func.func with the given body (lines using %arg0...)."""
    args = ", ".join("%%arg%d: %s" % (i, t) for i, t in enumerate(arg_types))
    res = ", ".join(result_types)
    if len(result_types) != 1:
        res = "(" + res + ")"
    body = "\n".join("  " + l for l in body_lines)
    return "func.func @%s(%s) -> %s {\n%s\n}\n" % (name, args, res, body)


def attr_entries(kw, int_suffix=""):
    """The entries of an attribute dictionary (no braces) from the dict `kw`,
    in order: bools as true/false, ints as integers (followed by
    `int_suffix`, e.g. " : i64"), lists as arrays; None is left out. E.g. the
    pool ops' kernel_size/stride/... ."""
    parts = []
    for k, v in kw.items():
        if v is None:
            continue
        if isinstance(v, bool):
            parts.append("%s = %s" % (k, "true" if v else "false"))
        elif isinstance(v, int):
            parts.append("%s = %d%s" % (k, v, int_suffix))
        else:
            parts.append("%s = %s" % (k, list(v)))
    return ", ".join(parts)


def single_op_module(op, inputs, result_types, attrs="", elems=None,
                     operands=None):
    """A module with @main applying one op to all inputs:
        %r = kt.op %arg0, %arg1 {attrs} : (T0, T1) -> R
    `elems` overrides input element types (e.g. 'bf16' for float32 data);
    `operands` overrides the operand text (e.g. "%arg0 bias %arg1" for ops
    whose optional operands are introduced by keywords)."""
    elems = elems or [elem_of(x) for x in inputs]
    arg_types = [ttype(x.shape, e) for x, e in zip(inputs, elems)]
    if operands is None:
        operands = ", ".join("%%arg%d" % i for i in range(len(inputs)))
    attr = (" {" + attrs + "}") if attrs else ""
    results = ", ".join("%%r%d" % i for i in range(len(result_types)))
    if len(result_types) > 1:
        lhs = "%%r:%d" % len(result_types)
        results = ", ".join("%%r#%d" % i for i in range(len(result_types)))
    else:
        lhs = "%r0"
    restype = ", ".join(result_types)
    if len(result_types) != 1:
        restype = "(" + restype + ")"
    line = '%s = %s %s%s : (%s) -> %s' % (lhs, op, operands, attr,
                                         ", ".join(arg_types), restype)
    return func_text("main", arg_types, result_types,
                     [line, "return %s : %s" % (results, ", ".join(result_types))])


def close(actual, expected, rtol, atol, equal_nan=True):
    """allclose with NaN==NaN, exact for integers and bools; shape and dtype
    kind must match. Returns (ok, message)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        return False, "shape %s != expected %s" % (actual.shape, expected.shape)
    if expected.dtype == np.bool_ or np.issubdtype(expected.dtype, np.integer):
        if not np.array_equal(actual.astype(expected.dtype), expected):
            bad = np.argwhere(actual.astype(expected.dtype) != expected)
            return False, "%d mismatches, first at %s: %s vs %s" % (
                len(bad), tuple(bad[0]), actual[tuple(bad[0])],
                expected[tuple(bad[0])])
        return True, ""
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    ok = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    # inf must match inf of the same sign
    ok &= ~(np.isinf(e) & (a != e))
    if not ok.all():
        idx = tuple(np.argwhere(~ok)[0])
        return False, "%d/%d elements differ, first at %s: got %r expected %r" % (
            (~ok).sum(), ok.size, idx, a[idx], e[idx])
    return True, ""


class Suite:
    """Collects checks; `finish()` prints the summary and sets the exit code.

    With `cpu=True` every case `check` runs in the interpreter is also run
    through the CPU backend at `finish()`, all cases in one kiln-run process,
    and compared with the interpreter's results (test/lib/cpu_sweep.py)."""

    def __init__(self, name, seed=0, cpu=False):
        self.name = os.path.basename(name)
        self.rng = np.random.default_rng(seed)
        self.passed = 0
        self.failed = 0
        import cpu_sweep
        # The sweep runs the cases as written, once: not again in the RUN
        # lines that apply a KILN_TEST_PIPELINE.
        self.cpu_cases = ([] if cpu and cpu_sweep.ENABLED and not TEST_PIPELINE
                          else None)
        # Run-time error cases the CPU backend does not check yet: (label,
        # reason), printed by the sweep.
        self.cpu_gaps = []

    # -- inputs ---------------------------------------------------------------
    def randn(self, *shape, dtype=np.float32):
        return self.rng.standard_normal(shape).astype(dtype)

    def uniform(self, lo, hi, *shape, dtype=np.float32):
        return self.rng.uniform(lo, hi, shape).astype(dtype)

    def randint(self, lo, hi, *shape, dtype=np.int64):
        return self.rng.integers(lo, hi, shape).astype(dtype)

    # -- checks ---------------------------------------------------------------
    def record(self, label, ok, message=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s: %s" % (label, message))

    def check(self, label, mlir, inputs, expected, elem=None, rtol=None,
              atol=None, entry=None):
        """Runs the module and compares each result with `expected` (a list,
        or one array). Tolerances default from the result element type."""
        if not isinstance(expected, (list, tuple)):
            expected = [expected]
        try:
            results = run(mlir, inputs, entry=entry)
        except KilnRunError as e:
            self.record(label, False, str(e))
            return None
        if self.cpu_cases is not None and "kg." not in mlir:
            import cpu_sweep
            self.cpu_cases.append(cpu_sweep.Case(label, mlir, inputs, entry,
                                                 results))
        if GPU_CORPUS and not TEST_PIPELINE:
            self._save_corpus_case(label, mlir, inputs, entry, results,
                                   expected)
        if len(results) != len(expected):
            self.record(label, False, "%d results, expected %d" %
                        (len(results), len(expected)))
            return results
        for i, (r, e) in enumerate(zip(results, expected)):
            # Tolerance of the result's element type (the reference is often
            # fp64); pass elem="bf16" for bf16 results (stored as float32).
            el = elem or NP_TO_MLIR.get(np.asarray(r).dtype, "f64")
            dr, da = TOLERANCES.get(el, (1e-5, 1e-6))
            ok, msg = close(r, e, rtol if rtol is not None else dr,
                            atol if atol is not None else da)
            self.record("%s result%d" % (label, i), ok, msg)
        return results

    def _save_corpus_case(self, label, mlir, inputs, entry, results,
                          expected):
        """One case for the GPU check (GPU_CORPUS): the interpreter's results
        and the check's independent reference (scripts/gpu/run_corpus.py
        compares by the CPU sweep's rule)."""
        import json
        self._corpus_n = getattr(self, "_corpus_n", 0) + 1
        d = os.path.join(GPU_CORPUS, "%s-%04d" % (
            os.path.splitext(self.name)[0], self._corpus_n))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "prog.mlir"), "w") as f:
            f.write(mlir)
        for i, r in enumerate(results):
            np.save(os.path.join(d, "ref%d.npy" % i), np.asarray(r))
            if i < len(expected):  # the independent reference (often fp64)
                np.save(os.path.join(d, "exp%d.npy" % i), np.asarray(expected[i]))
        for i, x in enumerate(inputs):
            np.save(os.path.join(d, "in%d.npy" % i), np.array(x, order="C"))
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump({"label": label, "suite": self.name, "entry": entry,
                       "inputs": len(inputs), "results": len(results)}, f)

    def check_op(self, op, inputs, expected, result_types, attrs="",
                 elems=None, label=None, operands=None, **kw):
        """One op applied to `inputs`, compared with `expected`."""
        mlir = single_op_module(op, inputs, result_types, attrs, elems,
                                operands)
        label = label or "%s %s %s" % (op, attrs, [x.shape for x in inputs])
        return self.check(label, mlir, inputs, expected, **kw)

    def check_error(self, label, mlir, inputs, substring, entry=None,
                    cpu_gap=None):
        """Expects kiln-run to fail with one line containing `substring`.
        Under KILN_TEST_PIPELINE the transformed IR may fail in another op
        with another message: then any error located in the original module
        (test.mlir:LINE:COL, kept by the pipeline) is accepted. A run-time
        error is expected from the CPU backend too (the sweep), unless
        `cpu_gap` says why compiled code does not check it yet (listed in
        the sweep's summary)."""
        try:
            run(mlir, inputs, entry=entry)
        except KilnRunError as e:
            ok = substring in e.stderr
            if not ok and TEST_PIPELINE:
                ok = "test.mlir:" in e.stderr and "error:" in e.stderr
            self.record(label, ok, "stderr does not mention %r: %s" %
                        (substring, e.stderr.strip()))
            # A run-time error (the module verified and the call failed, not
            # a verifier or input error) is also expected from the CPU
            # backend, with the same message (test/lib/cpu_sweep.py).
            if (ok and substring in e.stderr and self.cpu_cases is not None
                    and "kg." not in mlir and RUNTIME_ERROR.search(e.stderr)):
                import cpu_sweep
                if cpu_gap:
                    self.cpu_gaps.append((label, cpu_gap))
                else:
                    self.cpu_cases.append(cpu_sweep.Case(
                        label, mlir, inputs, entry, None, error=substring))
            return
        self.record(label, False, "expected an error mentioning %r" % substring)

    def finish(self):
        if self.cpu_cases:
            import cpu_sweep
            cpu_sweep.sweep(self, self.cpu_cases)
        for label, reason in self.cpu_gaps:
            print("%s: cpu backend: run-time error not checked by compiled "
                  "code (%s): %s" % (self.name, reason, label))
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        sys.exit(1 if self.failed or not self.passed else 0)
