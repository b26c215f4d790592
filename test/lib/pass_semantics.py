"""Semantic check of a pass: same results before and after, on the same inputs.

Runs `kiln-opt` with a pass pipeline on a module, then runs each entry function
of the original module and of the transformed one in the reference interpreter
(`kiln-run`) on the same random inputs (several seeds), and compares every
`result<i>.npy` (and every `arg<i>.npy`, the mutated reference arguments, when
`kiln-run` writes them).

Command line (from a lit RUN line, PYTHONPATH=test/lib and KILN_TOOLS_DIR set):

    %python -m pass_semantics FILE.mlir --pipeline='builtin.module(kiln-decompose)'
        --entry=f [--entry=g ...] [--seeds=3] [--rtol=R] [--atol=A]
        [--after-entry=NAME] [--after-file=OTHER.mlir]
        [--input-dims=D0,D1,...] [--int-range=LO,HI]

* `--entry` (repeatable): functions to check; default: every public
  `func.func` of the file.
* `--seeds=N`: seeds 0..N-1 (default 3).
* `--rtol`/`--atol`: override the per-dtype float tolerances.
* `--after-entry=NAME`: the function to run after the pass (when the pass
  renamed the entry; only with one `--entry`).
* `--after-file=OTHER.mlir`: compare with another module instead of running a
  pipeline (used to test this helper; the pipeline is then optional).
* `--input-dims=D0,D1,...`: sizes for the `?` dims of the entry's arguments,
  in order of appearance, cycling through the list. Inputs are then made here
  (NumPy, seeded) and passed with `--input`; without `?` dims they come from
  `kiln-run --random-inputs --seed=S`.
* `--int-range=LO,HI`: integer arguments uniform in [LO, HI) (also makes the
  inputs here); e.g. class indices for `nll_loss`.
* `--pipeline-arg=ARG` (repeatable): extra `kiln-opt` arguments.
* `--backend-before=B`, `--backend-after=B`: `kiln-run --backend` for the
  original and the transformed module (default: the interpreter), e.g. to
  check that a module runs on `cpu` after a pass with the interpreter's
  results on the original.

All the runs before the pass are one `kiln-run --batch` process, and all
those after it another (with `--backend-after=cpu`: one CPU compile of all
the entries); random inputs are `random:SEED` batch inputs (the values of
`--random-inputs --seed=SEED`). A module whose entries take `!kt.ref`
arguments runs one process per run instead (`--batch` does not write the
arguments' final contents, arg<i>.npy).

Prints one line per (entry, seed) and "N passed, M failed"; exits 1 on any
mismatch or tool error (the tool's stderr is printed).

Python API:

    from pass_semantics import check_pass
    ok = check_pass("m.mlir", "builtin.module(kiln-decompose)", ["f"], seeds=3)

Comparison: integers and booleans bitwise; floats by PyTorch's `same()` rule:
allclose with per-dtype tolerances (below), NaN in the same positions, infs
equal.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from tool_server import tool_run  # noqa: E402

TOOLS = os.environ.get("KILN_TOOLS_DIR", "")
KILN_OPT = os.path.join(TOOLS, "kiln-opt")
KILN_RUN = os.path.join(TOOLS, "kiln-run")

# (rtol, atol) per result dtype. The before/after results are two evaluations
# of the same math in the same precision, in a different order; f16/bf16
# results are rounded at every step after a decomposition, hence the looser
# bounds (PyTorch's same() uses similar fp16 tolerances).
TOLERANCES = {
    np.dtype(np.float64): (1e-7, 1e-7),
    np.dtype(np.float32): (1e-5, 1e-5),
    np.dtype(np.float16): (1e-2, 1e-2),
}

NP_OF = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
         "bf16": np.float32, "i64": np.int64, "i32": np.int32,
         "i1": np.bool_, "index": np.int64}


class ToolError(Exception):
    pass


# -- reading entry signatures (only needed to make inputs for `?` dims) -------

def _split_top(text):
    """Splits `text` at commas that are not nested in <>, (), [] or {}."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _arg_type_texts(text, entry):
    """The argument types of `func.func @entry` as written ([] when there
    is no such function)."""
    try:
        return [t for t, _ in _entry_args(text, entry)]
    except ToolError:
        return []


def _entry_args(text, entry):
    m = re.search(r"func\.func\s+(?:\w+\s+)*@%s\s*\(" % re.escape(entry), text)
    if not m:
        raise ToolError("no func.func @%s in the module" % entry)
    i, depth = m.end(), 1
    start = i
    while depth:
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
        i += 1
    out = []
    for part in _split_top(text[start:i - 1]):
        ty = part.split(":", 1)[1].strip()
        ty = re.sub(r"\{.*\}\s*$", "", ty).strip()  # argument attributes
        out.append((ty, part))
    return out


def entry_arg_types(text, entry):
    """The argument types of `func.func @entry` in the module `text`, as
    (shape with None for '?', element type) tuples."""
    args = []
    for ty, _ in _entry_args(text, entry):
        t = re.match(r"(?:tensor|!kt\.ref)<(.*)>", ty)
        if t:
            dims = t.group(1).split("x")
            elem = dims[-1]
            shape = tuple(None if d == "?" else int(d) for d in dims[:-1])
        else:
            shape, elem = (), ty
        args.append((shape, elem))
    return args


def make_inputs(text, entry, seed, dims, int_range, folder):
    """Writes in<i>.npy for the arguments of `entry`; returns the paths."""
    rng = np.random.default_rng(seed)
    dim_iter = list(dims) or [3]
    k = 0
    paths = []
    for i, (shape, elem) in enumerate(entry_arg_types(text, entry)):
        concrete = []
        for d in shape:
            if d is None:
                d = dim_iter[k % len(dim_iter)]
                k += 1
            concrete.append(d)
        concrete = tuple(concrete)
        if elem not in NP_OF:
            raise ToolError("cannot make an input of type %s" % elem)
        dtype = np.dtype(NP_OF[elem])
        if dtype == np.bool_:
            x = rng.integers(0, 2, concrete).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            lo, hi = int_range or (0, 10)
            x = rng.integers(lo, hi, concrete).astype(dtype)
        else:
            x = rng.standard_normal(concrete).astype(dtype)
        p = os.path.join(folder, "in%d.npy" % i)
        np.save(p, np.array(x, order="C"))
        paths.append(p)
    return paths


# -- running the tools -------------------------------------------------------

def _run(args):
    proc = tool_run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolError("%s exited %d:\n%s" % (
            os.path.basename(args[0]), proc.returncode, proc.stderr.rstrip()))
    from kiln_testing import NOT_CONVERGED
    if NOT_CONVERGED in proc.stderr:
        raise ToolError("%s: compile-time defect: %s" % (
            os.path.basename(args[0]), proc.stderr.rstrip()))
    return proc


def apply_pipeline(path, pipeline, out_path, extra_args=()):
    args = [KILN_OPT, path, "-o", out_path]
    if pipeline:
        args.append("--pass-pipeline=" + pipeline)
    args.extend(extra_args)
    _run(args)


def run_batch(path, runs, backend=None, folder=None):
    """Runs every (entry, out_dir, seed, inputs) of `runs` in one
    `kiln-run --batch` process (with --backend=cpu: one compile of all
    the entries); inputs None: the ones --random-inputs --seed=seed makes.
    Returns [outputs] in order: {name: array} as run_entry, or a ToolError
    (the run's error.txt, or skipped.txt: ops without a CPU lowering)."""
    spec = os.path.join(folder, "batch-%s.txt" % (backend or "interpreter"))
    with open(spec, "w") as f:
        for entry, out_dir, seed, inputs in runs:
            f.write("\t".join([entry, out_dir] + (
                ["random:%d" % seed] if inputs is None else list(inputs))) + "\n")
    args = [KILN_RUN, path, "--batch=" + spec]
    if backend:
        args.append("--backend=" + backend)
    _run(args)
    out = []
    for entry, out_dir, seed, inputs in runs:
        error = os.path.join(out_dir, "error.txt")
        skipped = os.path.join(out_dir, "skipped.txt")
        if os.path.exists(error):
            with open(error) as f:
                out.append(ToolError("kiln-run --batch: @%s: %s" % (entry, f.read().strip())))
        elif os.path.exists(skipped):
            with open(skipped) as f:
                out.append(ToolError("kiln-run --batch: @%s: no CPU lowering of %s" % (
                    entry, ", ".join(f.read().split()))))
        elif not os.path.isdir(out_dir):
            out.append(ToolError("kiln-run --batch: @%s did not run" % entry))
        else:
            out.append({name[:-4]: np.load(os.path.join(out_dir, name))
                        for name in sorted(os.listdir(out_dir))
                        if re.fullmatch(r"result\d+\.npy", name)})
    return out


def run_entry(path, entry, out_dir, seed=None, inputs=None, backend=None):
    """Runs `entry`; returns {name: array} for result<i>.npy / arg<i>.npy."""
    args = [KILN_RUN, path, "--entry=" + entry, "--output-dir=" + out_dir]
    if backend:
        args.append("--backend=" + backend)
    if inputs is None:
        args += ["--random-inputs", "--seed=%d" % seed]
    else:
        args += ["--input=" + p for p in inputs]
    _run(args)
    outs = {}
    for name in sorted(os.listdir(out_dir)):
        if re.fullmatch(r"(result|arg)\d+\.npy", name):
            outs[name[:-4]] = np.load(os.path.join(out_dir, name))
    return outs


# -- comparing ------------------------------------------------------------------

def same(before, after, rtol=None, atol=None):
    """(ok, message) for one output; `before` is the reference."""
    b = np.asarray(before)
    a = np.asarray(after)
    if a.shape != b.shape:
        return False, "shape %s != %s" % (a.shape, b.shape)
    if a.dtype != b.dtype:
        return False, "dtype %s != %s" % (a.dtype, b.dtype)
    if b.dtype == np.bool_ or np.issubdtype(b.dtype, np.integer):
        bad = np.argwhere(a != b)
        if len(bad):
            i = tuple(bad[0])
            return False, "%d/%d elements differ, first at %s: before %s after %s" % (
                len(bad), b.size, i, b[i], a[i])
        return True, ""
    drt, dat = TOLERANCES.get(b.dtype, (1e-5, 1e-5))
    rtol = drt if rtol is None else rtol
    atol = dat if atol is None else atol
    bf = b.astype(np.float64)
    af = a.astype(np.float64)
    nan_b, nan_a = np.isnan(bf), np.isnan(af)
    ok = np.isclose(af, bf, rtol=rtol, atol=atol, equal_nan=True)
    ok &= nan_a == nan_b
    ok &= ~((np.isinf(bf) | np.isinf(af)) & (af != bf) & ~nan_a & ~nan_b)
    if not ok.all():
        i = tuple(np.argwhere(~ok)[0])
        err = np.abs(af - bf)[~ok & ~nan_a & ~nan_b]
        return False, ("%d/%d elements differ, first at %s: before %r after %r"
                       " (max abs err %s, rtol %g, atol %g)" % (
                           (~ok).sum(), ok.size, i, bf[i], af[i],
                           err.max() if err.size else "n/a", rtol, atol))
    return True, ""


def public_entries(text):
    return [m.group(2) for m in re.finditer(
        r"func\.func\s+(private\s+|public\s+|nested\s+)?@([\w$.-]+)", text)
        if not m.group(1) or m.group(1).strip() == "public"]


def check_pass(path, pipeline=None, entries=None, seeds=3, rtol=None,
               atol=None, after_entry=None, after_file=None, input_dims=None,
               int_range=None, opt_args=(), backend_before=None,
               backend_after=None, out=sys.stdout):
    """Checks that `pipeline` keeps the semantics of `entries` of the module at
    `path`. Returns True when every (entry, seed) matches; prints a line per
    (entry, seed) and a summary to `out`."""
    with open(path) as f:
        text = f.read()
    entries = list(entries or public_entries(text))
    if isinstance(seeds, int):
        seeds = list(range(seeds))
    if after_entry and len(entries) != 1:
        raise ValueError("--after-entry needs exactly one --entry")
    tmp = tempfile.mkdtemp(prefix="kiln-pass-semantics-")
    passed = failed = 0
    try:
        if after_file:
            transformed = after_file
            if pipeline:
                transformed = os.path.join(tmp, "after.mlir")
                apply_pipeline(after_file, pipeline, transformed, opt_args)
        else:
            transformed = os.path.join(tmp, "after.mlir")
            try:
                apply_pipeline(path, pipeline, transformed, opt_args)
            except ToolError as e:
                print("ERROR %s" % e, file=out)
                print("0 passed, 1 failed", file=out)
                return False
        # Without ref arguments (whose final contents kiln-run --batch does
        # not write), every run before and after is one kiln-run --batch
        # process each (one CPU compile with --backend-after=cpu).
        batched = not any("!kt.ref" in ty for e in entries
                          for ty in _arg_type_texts(text, e))
        cases = []
        for entry in entries:
            for seed in seeds:
                d = os.path.join(tmp, "%s-%d" % (entry, seed))
                os.makedirs(d)
                try:
                    inputs = None
                    if input_dims or int_range or any(
                            None in s for s, _ in entry_arg_types(text, entry)):
                        inputs = make_inputs(text, entry, seed, input_dims or [],
                                             int_range, d)
                    cases.append((entry, seed, d, inputs))
                except ToolError as e:
                    failed += 1
                    print("FAIL %s seed=%d: %s" % (entry, seed, e), file=out)
        if batched and cases:
            befores = run_batch(path, [
                (e, os.path.join(d, "before"), seed, inputs)
                for e, seed, d, inputs in cases], backend_before, tmp)
            afters = run_batch(transformed, [
                (after_entry or e, os.path.join(d, "after"), seed, inputs)
                for e, seed, d, inputs in cases], backend_after, tmp)
        for k, (entry, seed, d, inputs) in enumerate(cases):
            after_name = after_entry or entry
            label = "%s seed=%d" % (entry, seed)
            try:
                if batched:
                    before, after = befores[k], afters[k]
                    for r in (before, after):
                        if isinstance(r, ToolError):
                            raise r
                else:
                    before = run_entry(path, entry, os.path.join(d, "before"),
                                       seed, inputs, backend_before)
                    after = run_entry(transformed, after_name,
                                      os.path.join(d, "after"), seed, inputs,
                                      backend_after)
            except ToolError as e:
                failed += 1
                print("FAIL %s: %s" % (label, e), file=out)
                continue
            problems = []
            if sorted(before) != sorted(after):
                problems.append("outputs %s before, %s after" % (
                    sorted(before), sorted(after)))
            for name in sorted(set(before) & set(after)):
                ok, msg = same(before[name], after[name], rtol, atol)
                if not ok:
                    problems.append("%s: %s" % (name, msg))
            if problems:
                failed += 1
                print("FAIL %s: %s" % (label, "; ".join(problems)), file=out)
            else:
                passed += 1
                print("ok %s (%s)" % (label, ", ".join(sorted(before))),
                      file=out)
    except ToolError as e:
        failed += 1
        print("ERROR %s" % e, file=out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed), file=out)
    return failed == 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="pass_semantics", description=__doc__.split(
        "\n\n")[0])
    p.add_argument("file")
    p.add_argument("--pipeline", default=None)
    p.add_argument("--entry", action="append", default=[])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--rtol", type=float, default=None)
    p.add_argument("--atol", type=float, default=None)
    p.add_argument("--after-entry", default=None)
    p.add_argument("--after-file", default=None)
    p.add_argument("--input-dims", default=None,
                   help="comma-separated sizes for the '?' dims")
    p.add_argument("--int-range", default=None, help="LO,HI")
    p.add_argument("--pipeline-arg", action="append", default=[])
    p.add_argument("--backend-before", default=None,
                   help="kiln-run --backend for the original module")
    p.add_argument("--backend-after", default=None,
                   help="kiln-run --backend for the transformed module")
    a = p.parse_args(argv)
    if not a.pipeline and not a.after_file:
        p.error("need --pipeline or --after-file")
    if a.after_entry and len(a.entry) != 1:
        p.error("--after-entry needs exactly one --entry")
    dims = [int(d) for d in a.input_dims.split(",")] if a.input_dims else None
    int_range = None
    if a.int_range:
        lo, hi = a.int_range.split(",")
        int_range = (int(lo), int(hi))
    ok = check_pass(a.file, a.pipeline, a.entry, a.seeds, a.rtol, a.atol,
                    a.after_entry, a.after_file, dims, int_range,
                    a.pipeline_arg, a.backend_before, a.backend_after)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
