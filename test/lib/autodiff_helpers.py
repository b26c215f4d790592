"""Gradient checks for `kiln-autodiff` (test/Execution/Autodiff).

A check wraps a kt body in `func.func @f ... attributes {kg.differentiate}`,
builds the joint function with `kiln-opt -kiln-autodiff`, runs `@f_joint`
through `kiln-run` on f64 inputs and random output cotangents, and compares
the input gradients with two independent references:

* central finite differences of `@f` itself (also run by kiln-run: one module
  calls `@f` on every +-eps perturbation of every required element and
  returns the cotangent-weighted outputs);
* torch.autograd on the same inputs, through a PyTorch function written by
  the test.

    s = GradSuite(__file__)
    x = s.randn(3, 4, dtype=np.float64)
    s.gradcheck("sin", ["%0 = kt.sin %arg0 : (tensor<3x4xf64>) -> tensor<3x4xf64>"],
                [x], ["tensor<3x4xf64>"], torch.sin)
    s.finish()
"""

import os
import subprocess
import tempfile

import numpy as np
import torch

from kiln_testing import Suite, run, KilnRunError, close, ttype, NP_TO_MLIR
from tool_server import tool_run  # noqa: E402

KILN_OPT = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-opt")


def differentiate(mlir, options=""):
    """Runs `kiln-opt -kiln-autodiff` (with pass `options`, e.g.
    "expand-attention=false") on the module text; returns the output text.
    Raises KilnRunError (with kiln-opt's stderr) on failure."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(mlir)
        path = f.name
    try:
        flag = "-kiln-autodiff" + ("=" + options if options else "")
        proc = tool_run([KILN_OPT, path, flag],
                              capture_output=True, text=True)
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        raise KilnRunError(proc.returncode, proc.stderr)
    return proc.stdout


def is_float(x):
    return np.asarray(x).dtype.kind == "f"


def fn_text(name, arg_types, result_types, body, attrs="", arg_attrs=None):
    args = []
    for i, t in enumerate(arg_types):
        a = "%%arg%d: %s" % (i, t)
        if arg_attrs and arg_attrs[i]:
            a += " {%s}" % arg_attrs[i]
        args.append(a)
    res = ", ".join(result_types)
    if len(result_types) != 1:
        res = "(" + res + ")"
    if attrs:
        attrs = " attributes {%s}" % attrs
    lines = "\n".join("  " + l for l in body)
    return "func.func @%s(%s) -> %s%s {\n%s\n}\n" % (
        name, ", ".join(args), res, attrs, lines)


def fd_module(f_text, inputs, requires, result_types, eps):
    """`f_text` plus `@fd(P_0.., others.., cotangents..) -> tensor<Kxf64>`:
    P_i stacks x_i +- eps e_j for every element j of each required input
    (in order +, -); entry k of the result is sum_r <f(..)_r, ct_r> for the
    k-th perturbation. Returns (module text, fd inputs builder)."""
    arg_types = [ttype(x.shape, NP_TO_MLIR[x.dtype]) for x in inputs]
    float_res = [(i, t) for i, t in enumerate(result_types)
                 if any(e in t for e in ("f64>", "f32>"))]
    params, body = [], []
    # parameters: one stacked tensor per required input, then the inputs
    # unchanged, then the cotangents
    for i, x in enumerate(inputs):
        if requires[i]:
            params.append("%%p%d: %s" % (i, ttype((2 * x.size,) + x.shape, "f64")))
    for i, t in enumerate(arg_types):
        params.append("%%x%d: %s" % (i, t))
    for k, (ri, t) in enumerate(float_res):
        params.append("%%ct%d: %s" % (k, t))
    outs = []
    n = 0
    res_sig = ", ".join(result_types)
    for i, x in enumerate(inputs):
        if not requires[i]:
            continue
        for j in range(2 * x.size):
            sel = "%%s%d" % n
            body.append("%s = kt.select %%p%d {dim = 0 : i64, index = %d : i64} : (%s) -> %s"
                        % (sel, i, j, ttype((2 * x.size,) + x.shape, "f64"), arg_types[i]))
            call_args = ", ".join(sel if a == i else "%%x%d" % a for a in range(len(inputs)))
            nres = len(result_types)
            lhs = "%%c%d" % n + (":%d" % nres if nres > 1 else "")
            body.append("%s = func.call @f(%s) : (%s) -> (%s)"
                        % (lhs, call_args, ", ".join(arg_types), res_sig))
            acc = None
            for k, (ri, t) in enumerate(float_res):
                r = "%%c%d" % n + ("#%d" % ri if nres > 1 else "")
                m = "%%m%d_%d" % (n, k)
                body.append("%s = kt.mul %s, %%ct%d : (%s, %s) -> %s" % (m, r, k, t, t, t))
                sm = "%%q%d_%d" % (n, k)
                body.append("%s = kt.sum %s : (%s) -> tensor<f64>" % (sm, m, t))
                if acc is None:
                    acc = sm
                else:
                    a2 = "%%a%d_%d" % (n, k)
                    body.append("%s = kt.add %s, %s : (tensor<f64>, tensor<f64>) -> tensor<f64>"
                                % (a2, acc, sm))
                    acc = a2
            outs.append(acc)
            n += 1
    body.append("%%st = kt.stack %s {dim = 0 : i64} : (%s) -> tensor<%dxf64>"
                % (", ".join(outs), ", ".join(["tensor<f64>"] * n), n))
    body.append("return %%st : tensor<%dxf64>" % n)
    text = f_text + "func.func @fd(%s) -> tensor<%dxf64> {\n%s\n}\n" % (
        ", ".join(params), n, "\n".join("  " + l for l in body))
    stacks = []
    for i, x in enumerate(inputs):
        if not requires[i]:
            continue
        flat = x.reshape(-1)
        p = np.empty((2 * x.size, x.size))
        for j in range(x.size):
            for k, sgn in enumerate((1, -1)):
                v = flat.copy()
                v[j] += sgn * eps
                p[2 * j + k] = v
        stacks.append(p.reshape((2 * x.size,) + x.shape))
    return text, stacks


class GradSuite(Suite):
    def gradcheck(self, label, body, inputs, result_types, torch_fn=None,
                  requires=None, eps=1e-6, rtol=1e-5, atol=1e-6, fd=True,
                  torch_rtol=1e-9, torch_atol=1e-10, out_rtol=1e-10,
                  arg_types=None, autodiff_options=""):
        """Checks the gradients of the kt `body` (lines over %arg0.. ending
        in `return`) at `inputs` (NumPy; floats must be f64) against finite
        differences and, when `torch_fn` is given, against torch.autograd.
        `requires[i]` says which inputs require grad (default: the float
        ones). `arg_types` overrides the argument types (e.g. with `?`
        dims; the finite differences, which call @f on stacked static
        perturbations, are then skipped: pass a torch_fn).
        `autodiff_options` are kiln-autodiff's pass options."""
        inputs = [np.asarray(x) for x in inputs]
        if requires is None:
            requires = [is_float(x) for x in inputs]
        if arg_types is None:
            arg_types = [ttype(x.shape, NP_TO_MLIR[x.dtype]) for x in inputs]
        else:
            fd = False
        arg_attrs = [None if (requires[i] == is_float(x)) else
                     "kg.requires_grad = %s" % ("true" if requires[i] else "false")
                     for i, x in enumerate(inputs)]
        f_plain = fn_text("f", arg_types, result_types, body)
        f_diff = fn_text("f", arg_types, result_types, body,
                         attrs="kg.differentiate", arg_attrs=arg_attrs)
        float_res = [i for i, t in enumerate(result_types)
                     if any(e in t for e in ("f64>", "f32>"))]
        try:
            outs = run(f_plain, inputs, entry="f")
            cts = [self.rng.standard_normal(outs[i].shape) for i in float_res]
            joint = differentiate(f_diff, autodiff_options)
            res = run(joint, inputs + cts, entry="f_joint")
        except KilnRunError as e:
            self.record(label, False, str(e))
            return
        grads = res[len(result_types):]
        req_idx = [i for i in range(len(inputs)) if requires[i]]
        if len(grads) != len(req_idx):
            self.record(label, False, "%d gradients, expected %d" %
                        (len(grads), len(req_idx)))
            return
        for i, g in zip(req_idx, grads):
            ok = g.shape == inputs[i].shape
            msg = "gradient shape %s != input %s" % (g.shape, inputs[i].shape)
            self.record("%s grad%d shape" % (label, i), ok, msg)
        if fd:
            text, stacks = fd_module(f_plain, inputs, requires, result_types, eps)
            try:
                s = run(text, stacks + inputs + cts, entry="fd")[0]
            except KilnRunError as e:
                self.record(label + " fd", False, str(e))
                return
            off = 0
            for i, g in zip(req_idx, grads):
                n = inputs[i].size
                fdg = ((s[off:off + 2 * n:2] - s[off + 1:off + 2 * n:2]) / (2 * eps)
                       ).reshape(inputs[i].shape)
                off += 2 * n
                ok, msg = close(g, fdg, rtol, atol)
                self.record("%s grad%d vs finite differences" % (label, i), ok, msg)
        if torch_fn is not None:
            ts = []
            for i, x in enumerate(inputs):
                t = torch.from_numpy(x.copy())
                if requires[i]:
                    t.requires_grad_(True)
                ts.append(t)
            out = torch_fn(*ts)
            if not isinstance(out, (list, tuple)):
                out = [out]
            for k, i in enumerate(float_res):
                ok, msg = close(outs[i], out[i].detach().numpy(), out_rtol,
                                out_rtol * 1e-2)
                self.record("%s output%d vs torch" % (label, i), ok, msg)
            loss = sum((out[i] * torch.from_numpy(ct)).sum()
                       for i, ct in zip(float_res, cts))
            tg = torch.autograd.grad(loss, [ts[i] for i in req_idx],
                                     allow_unused=True)
            for i, g, t in zip(req_idx, grads, tg):
                ref = np.zeros_like(inputs[i]) if t is None else t.numpy()
                ok, msg = close(g, ref, torch_rtol, torch_atol)
                self.record("%s grad%d vs torch" % (label, i), ok, msg)

    def unary(self, op, x, torch_fn, attrs="", **kw):
        t = ttype(x.shape, "f64")
        a = (" {" + attrs + "}") if attrs else ""
        self.gradcheck("%s%s %s" % (op, a, x.shape),
                       ["%%0 = %s %%arg0%s : (%s) -> %s" % (op, a, t, t),
                        "return %%0 : %s" % t], [x], [t], torch_fn, **kw)
