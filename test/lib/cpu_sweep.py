"""The CPU-backend sweep of Kiln's execution tests.

A `Suite(__file__, cpu=True)` records every case it checks in the
interpreter (module text, inputs, the interpreter's results); `finish()`
then calls `sweep()`, which runs all of them through the CPU backend at once
and compares with the interpreter:

* the cases' modules are merged into one (each case's symbols prefixed with
  `c<k>_`), written once, and run by ONE `kiln-run --backend=cpu --batch`
  process: one kiln-cpu run and one JIT module for every case that lowers;
* a case whose function keeps kt ops after `kiln-lower-to-linalg
  {allow-partial}` is reported as "skipped (no CPU lowering)" with the op
  names (a summary line per file), never silently dropped;
* results are compared with PyTorch's `torch._dynamo.utils.same` rule
  (`same()` below): integers and bools exactly; floats allclose at the
  dtype's tolerance (NaN == NaN, infinities equal), else the RMSE of the CPU
  result against an fp64 reference must be at most 3x the interpreter's
  plus tol / 10 (tol = same()'s 1e-4 for f32/f64, the dtype's rtol for
  f16/bf16), with NaN/inf in the same places. The fp64 reference is the
  case's module with every float element type made f64, run by the
  interpreter (again one batch process for all the cases that need it).

The cases `check_error` saw fail at run time in the interpreter (the
module verified, the call failed) run too: the CPU backend must fail the
call with an error containing the same substring.

`KILN_CPU_SWEEP=0` in the environment turns the sweep off; it does not run
under KILN_TEST_PIPELINE (the RUN lines that re-run a test after
kiln-decompose), so each case goes through the CPU backend once.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

FLOAT_ELEMS = ("f32", "f64", "f16", "bf16")
# The same tolerances as kiln_testing.TOLERANCES (not imported: kiln_testing
# imports this module).
TOLERANCES = {
    "f64": (1e-12, 1e-12), "f32": (1e-5, 1e-6), "f16": (2e-3, 2e-3),
    "bf16": (1.6e-2, 1e-2),
}
# The `tol` of torch._dynamo.utils.same() (1e-4, its default) for f32/f64,
# the dtype's rtol for f16/bf16: the RMSE rule allows tol / 10 on top of 3x
# the interpreter's error (compiled code computes pointwise f32 math in f32,
# in its own order; the interpreter's kernels compute in f64. Reductions
# follow the dialect's accumulation rule on both backends.)
SAME_TOL = {"f64": 1e-4, "f32": 1e-4, "f16": 2e-3, "bf16": 1.6e-2}
ENABLED = os.environ.get("KILN_CPU_SWEEP", "1") != "0"
_SYMBOL = re.compile(r'@("(?:[^"\\]|\\.)*"|[A-Za-z_][\w$.]*)')
_FUNC = re.compile(r"func\.func\s+(private\s+)?@([\w$.]+)\s*\(")


def same(got, want, elem, ref=None):
    """PyTorch's same() rule for one result; (ok, message). `ref` is the
    fp64 reference (needed only when allclose fails)."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return False, "shape %s != interpreter %s" % (got.shape, want.shape)
    if elem not in FLOAT_ELEMS:
        if not np.array_equal(got, want):
            bad = np.argwhere(got != want)
            i = tuple(bad[0])
            return False, "%d mismatches, first at %s: cpu %r interpreter %r" % (
                len(bad), i, got[i], want[i])
        return True, ""
    rtol, atol = TOLERANCES[elem]
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        i = tuple(np.argwhere(np.isnan(g) != np.isnan(w))[0])
        return False, "NaN positions differ, first at %s: cpu %r interpreter %r" % (
            i, g[i], w[i])
    inf = np.isinf(w) | np.isinf(g)
    if not np.array_equal(g[inf], w[inf]):
        i = tuple(np.argwhere(inf & (g != w))[0])
        return False, "infinities differ, first at %s: cpu %r interpreter %r" % (
            i, g[i], w[i])
    if np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
        return True, ""
    i = tuple(np.argwhere(~np.isclose(g, w, rtol=rtol, atol=atol,
                                      equal_nan=True))[0])
    first = "first at %s: cpu %r interpreter %r" % (i, g[i], w[i])
    if ref is None:
        return False, "not allclose and no fp64 reference; " + first
    r = np.asarray(ref, dtype=np.float64)
    if r.shape != g.shape:
        return False, "not allclose; fp64 reference has shape %s; %s" % (
            r.shape, first)
    m = np.isfinite(r) & np.isfinite(g) & np.isfinite(w)
    rmse = lambda a: float(np.sqrt(np.mean((a[m] - r[m]) ** 2))) if m.any() else 0.0
    cpu_err, interp_err = rmse(g), rmse(w)
    if cpu_err <= 3 * interp_err + SAME_TOL[elem] / 10:
        return True, ""
    return False, "RMSE vs fp64 %.3g > 3 x interpreter's %.3g + tol/10; %s" % (
        cpu_err, interp_err, first)


def to_f64_module(mlir):
    """The module with every float tensor element type replaced by f64."""
    return re.sub(r"(?<=[x<])(f32|f16|bf16)(?=>)", "f64", mlir)


def entry_of(mlir, entry):
    """The entry kiln-run would pick: `entry`, else the only defined
    function."""
    if entry:
        return entry
    defined = [m.group(2) for m in _FUNC.finditer(mlir) if not m.group(1)]
    return defined[0] if len(defined) == 1 else None


def result_elems(mlir, entry):
    """Element types of the results of `entry`, from its signature."""
    m = re.search(r"func\.func\s+@%s\s*\((.*?)\)\s*->\s*(.*?)\s*(\{|attributes)"
                  % re.escape(entry), mlir, re.S)
    if not m:
        return []
    return re.findall(r"tensor<(?:[0-9?]+x)*(bf16|f16|f32|f64|i64|i32|i1)>",
                      m.group(2))


def _prefixed(mlir, k):
    def sub(m):
        name = m.group(1)
        if name.startswith('"'):
            return '@"c%d_%s' % (k, name[1:])
        return "@c%d_%s" % (k, name)
    return _SYMBOL.sub(sub, mlir)


class Case:
    """A case `check` ran (`interp`: the interpreter's results), or one
    `check_error` saw fail at run time (`error`: the substring the CPU
    backend's error must contain too)."""

    def __init__(self, label, mlir, inputs, entry, interp, error=None):
        self.label = label
        self.mlir = mlir
        self.inputs = [np.array(x, order="C") for x in inputs]
        self.entry = entry_of(mlir, entry)
        self.interp = interp
        self.error = error
        self.elems = result_elems(mlir, self.entry) if self.entry else []


def _run_batch(cases, texts, backend, tmp, tag, extra_args=()):
    """Runs case k's entry of texts[k] for every k in one kiln-run --batch
    process (`extra_args`: more kiln-run options, e.g. --matmul=generated).
    Returns {k: ("ok", results) | ("skipped", ops) | ("error",
    message)}; cases missing from it did not run (a crash)."""
    from kiln_testing import KILN_RUN, check_converged
    root = os.path.join(tmp, tag)
    os.makedirs(root, exist_ok=True)
    module = os.path.join(root, "module.mlir")
    spec = os.path.join(root, "spec.txt")
    with open(module, "w") as f:
        for k in sorted(texts):
            f.write(_prefixed(texts[k], k))
            f.write("\n")
    lines = []
    for k in sorted(texts):
        d = os.path.join(root, "c%d" % k)
        os.makedirs(d, exist_ok=True)
        paths = []
        for i, x in enumerate(cases[k].inputs):
            p = os.path.join(d, "in%d.npy" % i)
            np.save(p, x)
            paths.append(p)
        lines.append("\t".join(["c%d_%s" % (k, cases[k].entry),
                                os.path.join(d, "out")] + paths))
    with open(spec, "w") as f:
        f.write("\n".join(lines) + "\n")
    proc = subprocess.run([KILN_RUN, module, "--backend=" + backend,
                           "--batch=" + spec] + list(extra_args),
                          capture_output=True, text=True)
    check_converged(proc)
    out = {}
    for k in sorted(texts):
        d = os.path.join(root, "c%d" % k, "out")
        if os.path.exists(os.path.join(d, "skipped.txt")):
            out[k] = ("skipped", open(os.path.join(d, "skipped.txt")).read().split())
        elif os.path.exists(os.path.join(d, "error.txt")):
            out[k] = ("error", open(os.path.join(d, "error.txt")).read().strip())
        elif os.path.isdir(d):
            res, i = [], 0
            while os.path.exists(os.path.join(d, "result%d.npy" % i)):
                res.append(np.load(os.path.join(d, "result%d.npy" % i)))
                i += 1
            out[k] = ("ok", res)
    return out, proc


def _run_all(cases, texts, backend, tmp, tag, extra_args=()):
    """_run_batch, surviving crashes: when the process dies, the first case
    (in order) without an outcome is blamed if the batch had compiled, else
    every remaining case runs in a batch of its own."""
    outcomes = {}
    pending = dict(texts)
    attempt = 0
    while pending:
        attempt += 1
        out, proc = _run_batch(cases, pending, backend, tmp, "%s%d" % (tag, attempt),
                               extra_args)
        outcomes.update(out)
        missing = [k for k in sorted(pending) if k not in out]
        if not missing:
            break
        if proc.returncode == 0 or len(pending) == 1:
            for k in missing:
                outcomes[k] = ("error", "no results; kiln-run exited %d: %s" % (
                    proc.returncode, proc.stderr.strip()[-2000:]))
            break
        ran = [k for k in sorted(pending) if k in out and out[k][0] == "ok"]
        if ran or attempt > 1:
            outcomes[missing[0]] = ("error", "kiln-run --batch died (exit %d) "
                                    "running this case: %s" % (
                                        proc.returncode, proc.stderr.strip()[-2000:]))
            pending = {k: texts[k] for k in missing[1:]}
        else:
            # Died before running anything (while compiling): one by one.
            for k in missing:
                o, p = _run_batch(cases, {k: texts[k]}, backend, tmp,
                                  "%s_one%d" % (tag, k), extra_args)
                outcomes[k] = o.get(k, ("error", "kiln-run died (exit %d): %s" % (
                    p.returncode, p.stderr.strip()[-2000:])))
            break
    return outcomes


def sweep(suite, cases):
    """Runs `cases` (a list of Case) through the CPU backend and records one
    check per result in `suite` (labels start with "cpu: ")."""
    if not cases:
        return
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="kiln-cpu-sweep-")
    try:
        usable = {k: c.mlir for k, c in enumerate(cases) if c.entry}
        for k, c in enumerate(cases):
            if not c.entry:
                suite.record("cpu: " + c.label, False, "cannot tell the entry")
        outcomes = _run_all(cases, usable, "cpu", tmp, "cpu")
        skipped = {}
        need_ref = {}
        errors = 0
        for k in sorted(outcomes):
            kind, value = outcomes[k]
            c = cases[k]
            if kind == "skipped":
                for op in value:
                    skipped.setdefault(op, []).append(c.label)
                continue
            if c.error is not None:
                # A run-time error case: the CPU backend must fail the call
                # with the interpreter's message.
                errors += 1
                if kind == "error":
                    suite.record("cpu: %s (error)" % c.label, c.error in value,
                                 "CPU error does not mention %r: %s" % (
                                     c.error, value))
                else:
                    suite.record("cpu: %s (error)" % c.label, False,
                                 "the CPU backend returned results; the "
                                 "interpreter failed with %r" % c.error)
                continue
            if kind == "error":
                suite.record("cpu: " + c.label, False, value)
                continue
            if len(value) != len(c.interp):
                suite.record("cpu: " + c.label, False, "%d results, interpreter %d"
                             % (len(value), len(c.interp)))
                continue
            for i, (g, w) in enumerate(zip(value, c.interp)):
                elem = c.elems[i] if i < len(c.elems) else "i64"
                ok, _ = same(g, w, elem)
                if not ok and elem in FLOAT_ELEMS:
                    need_ref[k] = True
        refs = {}
        if need_ref:
            ref_cases = {}
            for k in need_ref:
                c = cases[k]
                ref_cases[k] = Case(c.label, to_f64_module(c.mlir),
                                    [x.astype(np.float64) if x.dtype.kind == "f" else x
                                     for x in c.inputs], c.entry, None)
            ref_out = _run_all(ref_cases, {k: rc.mlir for k, rc in ref_cases.items()},
                               "interpreter", tmp, "ref")
            refs = {k: v[1] for k, v in ref_out.items() if v[0] == "ok"}
        for k in sorted(outcomes):
            kind, value = outcomes[k]
            c = cases[k]
            if c.error is not None or kind != "ok" or len(value) != len(c.interp):
                continue
            for i, (g, w) in enumerate(zip(value, c.interp)):
                elem = c.elems[i] if i < len(c.elems) else "i64"
                ref = refs.get(k)
                ok, msg = same(g, w, elem, ref[i] if ref and i < len(ref) else None)
                suite.record("cpu: %s result%d" % (c.label, i), ok, msg)
        ran = sum(1 for v in outcomes.values() if v[0] != "skipped")
        print("%s: cpu backend: %d cases run (%d expecting a run-time error), "
              "%d skipped (no CPU lowering) in %.1f s%s" % (
            suite.name, ran, errors,
            sum(1 for v in outcomes.values() if v[0] == "skipped"),
            time.time() - start,
            "".join("\n  skipped (no CPU lowering: %s): %d cases, e.g. %s" % (
                op, len(labels), labels[0]) for op, labels in sorted(skipped.items()))))
        sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
