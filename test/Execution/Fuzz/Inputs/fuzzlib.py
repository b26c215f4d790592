"""Differential fuzzing of kt ops against PyTorch (torch 1.13, CPU).

Each test file draws cases from a fixed seed, each case one kt op applied to
NumPy inputs, with a reference computed by torch on the same inputs. Cases are
batched: many ops go into one function (each op with its own arguments and
result) so that one kiln-run process checks dozens of cases; a batch that
fails is split in halves until the failing case is isolated.

Every case is also run with all dims of its argument and result types
dynamic (`?`), which must give the same result (`dyn=False` opts out).

Reference rule. f32/f64/integer/bool: torch in that dtype. f16/bf16: torch on
the same (exactly representable) values upcast to float32, the result rounded
once to the dtype -- what PyTorch's CPU kernels do (their opmath type for
Half/BFloat16 is float). Comparison modes:
  * "exact": bitwise equal (NaN positions equal, signs of zeros equal), for
    ops that are correctly rounded in both (add, mul, floor, shape ops, ...);
  * "close": NaN positions and infinities (with sign) identical, finite values
    within rtol/atol (defaults: a few ulps of the result dtype).
Integers and bools are always compared exactly.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

KILN_RUN = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-run")

FLOATS = ["f32", "f64", "f16", "bf16"]
INTS = ["i32", "i64"]
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ["i1"]

NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
      "bf16": np.float32, "i32": np.int32, "i64": np.int64, "i1": np.bool_}
TD = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
      "bf16": torch.bfloat16, "i32": torch.int32, "i64": torch.int64,
      "i1": torch.bool}
# torch dtype used to compute the reference (opmath for f16/bf16).
TC = dict(TD, f16=torch.float32, bf16=torch.float32)
# default "close" tolerances (rtol, atol) per result dtype
TOL = {"f64": (1e-12, 1e-300), "f32": (2e-6, 1e-37),
       "f16": (1.0e-3, 1.2e-7), "bf16": (8e-3, 1e-37)}


def ttype(shape, elem, dyn=False):
    if elem == "index":  # a host index scalar (rank-0 int64 input)
        return "index"
    dims = "".join(("?" if dyn else str(d)) + "x" for d in shape)
    return "tensor<%s%s>" % (dims, elem)


def to_bf16(x):
    x = np.asarray(x, dtype=np.float32)
    return torch.from_numpy(x.copy()).to(torch.bfloat16).float().numpy()


def cast_np(x, elem):
    """NumPy array of `x` in kiln-run's storage for `elem` (bf16 rounded)."""
    if elem == "bf16":
        return to_bf16(np.asarray(x, dtype=np.float64).astype(np.float32))
    if elem == "i1":
        return np.asarray(x).astype(np.bool_)
    return np.asarray(x).astype(NP[elem])


def T(x, elem):
    """torch tensor of the NumPy input `x` (kiln-run storage of `elem`) in the
    reference compute dtype."""
    return torch.from_numpy(np.array(x, copy=True)).to(TC[elem])


def TN(x, elem):
    """torch tensor of `x` in the native dtype of `elem`."""
    return torch.from_numpy(np.array(x, copy=True)).to(TD[elem])


def R(t, elem):
    """NumPy value of the torch result `t` rounded to `elem`."""
    t = torch.as_tensor(t).to(TD[elem])
    if elem == "bf16":
        t = t.float()
    return t.numpy()


class Case:
    def __init__(self, label, op, args, res_elems, ref, attrs, mode, rtol,
                 atol, operands, dyn, res_shapes):
        self.label, self.op, self.args = label, op, args
        self.res_elems, self.ref, self.attrs = res_elems, ref, attrs
        self.mode, self.rtol, self.atol = mode, rtol, atol
        self.operands, self.dyn, self.res_shapes = operands, dyn, res_shapes
        self.check = None  # optional property check: f(result) -> message or None


def compare(actual, expected, elem, mode, rtol, atol):
    a = np.asarray(actual)
    e = np.asarray(expected)
    if a.shape != e.shape:
        return "shape %s, expected %s" % (a.shape, e.shape)
    if elem in ("i1", "i32", "i64"):
        if a.dtype.kind not in "biu":
            return "dtype %s" % a.dtype
        bad = a.astype(np.int64) != e.astype(np.int64)
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            return "%d/%d differ, first at %s: got %r expected %r" % (
                bad.sum(), bad.size, i, a[i], e[i])
        return None
    a = a.astype(np.float64)
    e = e.astype(np.float64)
    an, en = np.isnan(a), np.isnan(e)
    if mode == "exact":
        ok = (a == e) & (np.signbit(a) == np.signbit(e))
        ok |= an & en
    else:
        if rtol is None:
            rtol, atol = TOL[elem][0], TOL[elem][1] if atol is None else atol
        atol = atol or 0.0
        fin = np.isfinite(a) & np.isfinite(e)
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.where(fin, np.abs(a - e) <= atol + rtol * np.abs(e),
                          (a == e) | (an & en))
        ok = ok & (an == en)
    if not ok.all():
        i = tuple(np.argwhere(~ok)[0])
        return "%d/%d differ, first at %s: got %r expected %r" % (
            (~ok).sum(), ok.size, i, a[i], e[i])
    return None


class Fuzz:
    def __init__(self, name, seed=0, batch=48):
        self.name = os.path.basename(name)
        self.rng = np.random.default_rng(seed)
        self.cases = []
        self.errors = []
        self.batch = batch
        self.failed = 0
        self.passed = 0
        self.runs = 0

    # -- random inputs -------------------------------------------------------
    def dim(self):
        return int(self.rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5]))

    def shape(self, rank=None, lo=0, hi=4, nonempty=False):
        if rank is None:
            rank = int(self.rng.integers(lo, hi + 1))
        while True:
            s = tuple(self.dim() for _ in range(rank))
            if not nonempty or all(d > 0 for d in s):
                return s

    def bshapes(self, n=2, rank=None):
        """`n` broadcast-compatible shapes."""
        full = self.shape(rank)
        out = []
        for _ in range(n):
            k = int(self.rng.integers(0, len(full) + 1)) if self.rng.random() < 0.4 else len(full)
            s = list(full[len(full) - k:])
            for i in range(len(s)):
                if self.rng.random() < 0.3:
                    s[i] = 1
            out.append(tuple(s))
        return out

    def values(self, shape, elem, special=0.25, scale=None, lo=None, hi=None):
        r = self.rng
        n = int(np.prod(shape)) if shape else 1
        if elem == "i1":
            return r.random(shape) < 0.5 if shape else np.array(r.random() < 0.5)
        if elem in INTS:
            info = np.iinfo(NP[elem])
            lo_ = -20 if lo is None else lo
            hi_ = 20 if hi is None else hi
            v = r.integers(lo_, hi_ + 1, size=n).astype(np.int64)
            if special and lo is None:
                ext = np.array([info.min, info.max, info.min + 1, info.max - 1, 0, -1, 1], dtype=np.int64)
                m = r.random(n) < special * 0.5
                v[m] = r.choice(ext, size=m.sum())
            return v.astype(NP[elem]).reshape(shape)
        sc = scale if scale is not None else float(r.choice([0.5, 1.0, 3.0, 10.0]))
        if lo is not None:
            v = r.uniform(lo, hi, size=n)
        else:
            v = r.standard_normal(n) * sc
            # ties and integers
            m = r.random(n) < 0.15
            v[m] = np.round(v[m] * 2) / 2
        if special:
            sp = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5,
                           -0.5, 2.5, -2.5, 1e30, -1e30, 1e-30, 65504.0, 70000.0])
            m = r.random(n) < special
            v[m] = r.choice(sp, size=m.sum())
        return cast_np(v.reshape(shape), elem)

    # -- cases ---------------------------------------------------------------
    def case(self, label, op, args, ref, res_elems, attrs="", mode="close",
             rtol=None, atol=None, operands=None, dyn=True, check=None):
        """args: list of (array, elem); ref: list of arrays (one per result);
        res_elems: element types of the results. `operands` formats operand
        text from the argument names ("{0} bias {1}")."""
        if not isinstance(ref, (list, tuple)):
            ref = [ref]
        if isinstance(res_elems, str):
            res_elems = [res_elems]
        ref = [np.asarray(x) for x in ref]
        shapes = [x.shape for x in ref]
        c = Case(label, op, args, res_elems, ref, attrs, mode, rtol, atol,
                 operands, False, shapes)
        c.check = check
        self.cases.append(c)
        if dyn and any(len(a.shape) for a, _ in args):
            c = Case(label + " [dyn]", op, args, res_elems, ref, attrs, mode,
                     rtol, atol, operands, True, shapes)
            c.check = check
            self.cases.append(c)

    def expect_error(self, label, op, args, res_types, attrs="", operands=None, dyn=False):
        """The op must be rejected (verifier or run time), as torch raises.
        With `dyn`, argument types are all-`?` (only the run time can tell)."""
        self.errors.append((label, op, args, res_types, attrs, operands, dyn))

    # -- running -------------------------------------------------------------
    def _module(self, cases):
        params, lines, rets, rtys, inputs = [], [], [], [], []
        for ci, c in enumerate(cases):
            names = []
            for a, e in c.args:
                names.append("%%a%d" % len(inputs))
                params.append("%s: %s" % (names[-1], ttype(a.shape, e, c.dyn)))
                inputs.append(a)
            opnds = (c.operands.format(*names) if c.operands is not None
                     else ", ".join(names))
            aty = ", ".join(ttype(a.shape, e, c.dyn) for a, e in c.args)
            rty = [ttype(s, e, c.dyn) for s, e in zip(c.res_shapes, c.res_elems)]
            attr = (" {" + c.attrs + "}") if c.attrs else ""
            nres = len(rty)
            if nres == 1:
                lhs = "%%r%d" % ci
                res = [lhs]
                rt = rty[0]
            else:
                lhs = "%%r%d:%d" % (ci, nres)
                res = ["%%r%d#%d" % (ci, k) for k in range(nres)]
                rt = "(" + ", ".join(rty) + ")"
            lines.append("  %s = %s %s%s : (%s) -> %s" % (lhs, c.op, opnds, attr, aty, rt))
            rets += res
            rtys += rty
        text = "func.func @main(%s) -> (%s) {\n%s\n  return %s : %s\n}\n" % (
            ", ".join(params), ", ".join(rtys), "\n".join(lines),
            ", ".join(rets), ", ".join(rtys))
        return text, inputs

    def _run(self, text, inputs):
        self.runs += 1
        tmp = tempfile.mkdtemp(prefix="kiln-fuzz-")
        try:
            path = os.path.join(tmp, "t.mlir")
            with open(path, "w") as f:
                f.write(text)
            args = [KILN_RUN, path, "--output-dir=" + os.path.join(tmp, "out")]
            for i, x in enumerate(inputs):
                p = os.path.join(tmp, "in%d.npy" % i)
                np.save(p, np.array(x, order="C"))
                args.append("--input=" + p)
            proc = subprocess.run(args, capture_output=True, text=True)
            if proc.returncode != 0:
                return None, proc.stderr.strip()
            out, i = [], 0
            while os.path.exists(os.path.join(tmp, "out", "result%d.npy" % i)):
                out.append(np.load(os.path.join(tmp, "out", "result%d.npy" % i)))
                i += 1
            return out, None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _fail(self, label, msg):
        self.failed += 1
        print("FAIL %s: %s" % (label, msg))

    def _check_batch(self, cases):
        text, inputs = self._module(cases)
        out, err = self._run(text, inputs)
        if err is not None:
            if len(cases) == 1:
                c = cases[0]
                self._fail(c.label, err.splitlines()[0] if err else "error")
                if os.environ.get("FUZZ_VERBOSE"):
                    print(text)
                return
            h = len(cases) // 2
            self._check_batch(cases[:h])
            self._check_batch(cases[h:])
            return
        k = 0
        for c in cases:
            msgs = []
            for e, ref in zip(c.res_elems, c.ref):
                if c.check is not None:
                    m = (("shape %s, expected %s" % (out[k].shape, ref.shape))
                         if out[k].shape != ref.shape else c.check(out[k]))
                else:
                    m = compare(out[k], ref, e, c.mode, c.rtol, c.atol)
                k += 1
                if m:
                    msgs.append(m)
            if msgs:
                self._fail(c.label, "; ".join(msgs))
                if os.environ.get("FUZZ_VERBOSE"):
                    print("  inputs:", [a for a, _ in c.args])
            else:
                self.passed += 1

    def finish(self):
        for i in range(0, len(self.cases), self.batch):
            self._check_batch(self.cases[i:i + self.batch])
        for label, op, args, res_types, attrs, operands, dyn in self.errors:
            names = ["%%a%d" % i for i in range(len(args))]
            opnds = operands.format(*names) if operands else ", ".join(names)
            aty = ", ".join(ttype(a.shape, e, dyn) for a, e in args)
            params = ", ".join("%s: %s" % (n, ttype(a.shape, e, dyn)) for n, (a, e) in zip(names, args))
            attr = (" {" + attrs + "}") if attrs else ""
            text = "func.func @main(%s) -> %s {\n  %%r = %s %s%s : (%s) -> %s\n  return %%r : %s\n}\n" % (
                params, res_types, op, opnds, attr, aty, res_types, res_types)
            out, err = self._run(text, [a for a, _ in args])
            if err is None:
                self._fail(label, "expected an error (torch raises)")
            else:
                self.passed += 1
        n = self.passed + self.failed
        print("%s: %d cases, %d passed, %d failed (%d kiln-run calls)" % (
            self.name, n, self.passed, self.failed, self.runs))
        sys.exit(1 if self.failed or not self.passed else 0)
