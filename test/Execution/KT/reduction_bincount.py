# RUN: %python %s
# REQUIRES: numpy, torch
# Tests kt.bincount (a result whose length is only known when it runs:
# max(max(self) + 1, minlength)) against np.bincount in the interpreter and
# the CPU backend: every integer dtype (ui8 values above 127), with and
# without f32/f64 weights (summed in order in the weights' type), minlength
# below, equal to and above max + 1, empty operands (minlength only), `?`
# operand dims, an op downstream of the data-dependent length, and the
# run-time errors (a negative element, weights of another `?` length).

import numpy as np
from kiln_testing import Suite, func_text, ttype

s = Suite(__file__, cpu=True)

NP = {"i64": np.int64, "i32": np.int32, "i16": np.int16, "i8": np.int8,
      "ui8": np.uint8, "f32": np.float32, "f64": np.float64}


def case(label, x, el, w=None, wel=None, minlength=0, dynamic=False):
    n = -1 if dynamic else len(x)
    xt = ttype((n,), el)
    args = [xt]
    ops = "%arg0"
    if w is not None:
        args.append(ttype((n,), wel))
        ops += ", %arg1"
    rel = wel if w is not None else "i64"
    rt = "tensor<?x%s>" % rel
    attr = " {minlength = %d}" % minlength if minlength else ""
    inputs = [np.asarray(x, dtype=NP[el])]
    if w is not None:
        inputs.append(np.asarray(w, dtype=NP[wel]))
    ref = np.bincount(inputs[0].astype(np.int64),
                      weights=None if w is None else inputs[1].astype(np.float64),
                      minlength=minlength)
    # PyTorch's CPU kernel adds f32 weights in f32, in order.
    if w is not None and wel == "f32":
        acc = np.zeros(len(ref), dtype=np.float32)
        for v, wi in zip(inputs[0].astype(np.int64), inputs[1]):
            acc[v] = np.float32(acc[v] + wi)
        ref = acc
    ref = ref.astype(NP[rel])
    s.check("kt.bincount %s %s%s" % (label, el, "" if w is None else " " + wel),
            func_text("main", args, [rt], [
                "%%r = kt.bincount %s%s : (%s) -> %s" % (ops, attr,
                                                        ", ".join(args), rt),
                "return %%r : %s" % rt]), inputs, ref)


for el in ("i64", "i32", "i16", "i8", "ui8"):
    x = s.randint(0, 9, 20)
    case("random", x, el)
    case("random ?", x, el, dynamic=True)
    case("minlength above", x, el, minlength=15)
    case("minlength below", x, el, minlength=3)
    case("all equal", np.full(6, 4), el)
    case("empty", np.zeros(0), el)
    case("empty minlength", np.zeros(0), el, minlength=4, dynamic=True)
    for wel in ("f32", "f64"):
        case("weights", x, el, s.randn(20), wel)
        case("weights ?", x, el, s.randn(20), wel, minlength=12,
             dynamic=True)
        case("empty weights", np.zeros(0), el, np.zeros(0), wel, minlength=2)
case("ui8 above 127", np.array([200, 3, 255, 200]), "ui8")
case("i64 large", np.array([70000, 3]), "i64")
# f32 weights rounded at every step (1 + 1e-8 + ... stays 1 in f32).
case("f32 rounding", np.array([0] * 5 + [1]), "i64",
     np.array([1.0] + [1e-8] * 4 + [2.5]), "f32")

# Downstream: the sum of the counts is the operand's length.
x = s.randint(0, 50, 30)
s.check("kt.bincount downstream sum",
        func_text("main", ["tensor<30xi64>"], ["tensor<i64>"], [
            "%n = kt.bincount %arg0 : (tensor<30xi64>) -> tensor<?xi64>",
            "%r = kt.sum %n : (tensor<?xi64>) -> tensor<i64>",
            "return %r : tensor<i64>"]), [x],
        np.asarray(30, dtype=np.int64))

s.check_error("kt.bincount negative",
              func_text("main", ["tensor<4xi32>"], ["tensor<?xi64>"], [
                  "%r = kt.bincount %arg0 : (tensor<4xi32>) -> tensor<?xi64>",
                  "return %r : tensor<?xi64>"]),
              [np.array([3, 1, -7, -1], dtype=np.int32)],
              "bincount only supports non-negative inputs: self[2] is -7")
s.check_error("kt.bincount weights length",
              func_text("main", ["tensor<?xi64>", "tensor<?xf64>"],
                        ["tensor<?xf64>"], [
                  "%r = kt.bincount %arg0, %arg1 : (tensor<?xi64>, "
                  "tensor<?xf64>) -> tensor<?xf64>",
                  "return %r : tensor<?xf64>"]),
              [np.array([3, 1, 2]), np.array([1.0, 2.0])],
              "weights have length 2 but self has length 3")
s.finish()
