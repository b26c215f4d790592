#!/usr/bin/python3
"""Kiln CPU benchmarks (issue 5, section 4).

Runs, one after another in the same run: Kiln's CPU backend (kiln-run
--backend=cpu --repeat: in-process timing of the compiled code, compile
excluded), the interpreter (kiln-run --repeat, small counts; skipped where it
would take minutes), PyTorch 1.13 eager (torch.set_num_threads = Kiln's
threads, OpenBLAS), a STREAM-style copy loop (C, clang-22 -O3 -fopenmp) and
OpenBLAS cblas_sgemm (C) as the machine's limits. Prints medians, ratios,
GB/s or GFLOP/s and Kiln's cold compile times.

    /usr/bin/python3 bench/cpu_bench.py [--threads N] [--repeat R] [--only NAME]

Needs: build/bin/kiln-run (KILN_BUILD_DIR), python3-torch, python3-numpy,
libopenblas-dev, clang-22, libomp-22-dev.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
KILN_RUN = os.path.join(BUILD, "bin", "kiln-run")
LLVM_LIB = subprocess.run(["llvm-config-22", "--libdir"], capture_output=True,
                          text=True).stdout.strip() or "/usr/lib/llvm-22/lib"

# ---------------------------------------------------------------- cases ---

def T(shape, e="f32"):
    return "tensor<%sx%s>" % ("x".join(map(str, shape)), e) if shape else "tensor<%s>" % e


def chain_case():
    n = (4096, 4096)
    t = T(n)
    ops = [("mul", "%x", "%y"), ("add", "%0", "%x"), ("relu", "%1"), ("sub", "%2", "%y"),
           ("mul", "%3", "%3"), ("add", "%4", "%x"), ("neg", "%5"), ("abs", "%6"),
           ("mul", "%7", "%y"), ("add", "%8", "%0")]
    lines = []
    for i, op in enumerate(ops):
        args = ", ".join(op[1:])
        types = ", ".join([t] * (len(op) - 1))
        lines.append("  %%%d = kt.%s %s : (%s) -> %s" % (i, op[0], args, types, t))
    mlir = "func.func @main(%%x: %s, %%y: %s) -> %s {\n%s\n  return %%9 : %s\n}\n" % (
        t, t, t, "\n".join(lines), t)

    def torch_fn(torch, x, y):
        a = x * y
        b = a + x
        c = torch.relu(b)
        d = c - y
        e = d * d
        f = e + x
        g = -f
        h = torch.abs(g)
        i = h * y
        return i + a
    numel = n[0] * n[1]
    return dict(name="pointwise chain (10 ops, 16M f32)", mlir=mlir,
                inputs=[("randn", n), ("randn", n)], torch=torch_fn,
                bytes=3 * numel * 4, interp_ok=True)


def softmax_case():
    n = (4096, 4096)
    mlir = """func.func @main(%%x: %s) -> %s {
  %%0 = kt.softmax %%x {dim = -1} : (%s) -> %s
  return %%0 : %s
}""" % ((T(n),) * 5)
    return dict(name="softmax 4096x4096 (last dim)", mlir=mlir, inputs=[("randn", n)],
                torch=lambda torch, x: torch.softmax(x, -1), bytes=2 * 4096 * 4096 * 4,
                interp_ok=True)


def log_softmax_case():
    n = (4096, 4096)
    mlir = """func.func @main(%%x: %s) -> %s {
  %%0 = kt.log_softmax %%x {dim = -1} : (%s) -> %s
  return %%0 : %s
}""" % ((T(n),) * 5)
    return dict(name="log_softmax 4096x4096 (last dim)", mlir=mlir, inputs=[("randn", n)],
                torch=lambda torch, x: torch.log_softmax(x, -1), bytes=2 * 4096 * 4096 * 4,
                interp_ok=True)


def cross_entropy_case(n, c):
    """cross_entropy (class-index targets, mean) of n x c f32 logits: one
    read of the logits (bytes = the logits; the targets and the scalar are
    negligible)."""
    mlir = """func.func @main(%%x: %s, %%t: %s) -> tensor<f32> {
  %%0 = kt.cross_entropy %%x, %%t : (%s, %s) -> tensor<f32>
  return %%0 : tensor<f32>
}""" % (T((n, c)), T((n,), "i64"), T((n, c)), T((n,), "i64"))
    return dict(name="cross_entropy %dx%d (mean)" % (n, c), mlir=mlir,
                inputs=[("randn", (n, c)), ("classes:%d" % c, (n,))],
                torch=lambda torch, x, t: torch.nn.functional.cross_entropy(x, t),
                bytes=n * c * 4, interp_ok=False)


def cross_entropy_train_case(n, c):
    """The training step of cross_entropy alone (its logits the parameter):
    Kiln's AOT stage (kiln-autodiff + kiln-partition: @ce_fwd, the loss, and
    @ce_bwd, the gradient of the logits from the saved logits and targets),
    against loss.backward() in eager; bytes = the forward's read of the
    logits + the backward's read and gradient write."""
    src = """func.func @ce(%%x: %s, %%t: %s {kg.requires_grad = false}) -> tensor<f32> attributes {kg.differentiate} {
  %%0 = kt.cross_entropy %%x, %%t : (%s, %s) -> tensor<f32>
  return %%0 : tensor<f32>
}""" % (T((n, c)), T((n,), "i64"), T((n, c)), T((n,), "i64"))

    def torch_step(torch, x, t, logits):
        loss = torch.nn.functional.cross_entropy(logits, t)
        loss.backward()
        return loss
    return dict(name="cross_entropy %dx%d (fwd+bwd)" % (n, c), train=src, fn="ce",
                inputs=[("randn", (n, c)), ("classes:%d" % c, (n,))],
                torch_step=torch_step, bytes=3 * n * c * 4, interp_ok=False)


def layernorm_case():
    n = (8192, 1024)
    mlir = """func.func @main(%%x: %s, %%w: %s, %%b: %s) -> %s {
  %%0 = kt.layer_norm %%x weight %%w bias %%b {normalized_shape = [1024]} : (%s, %s, %s) -> %s
  return %%0 : %s
}""" % (T(n), T((1024,)), T((1024,)), T(n), T(n), T((1024,)), T((1024,)), T(n), T(n))
    return dict(name="layer_norm 8192x1024", mlir=mlir,
                inputs=[("randn", n), ("randn", (1024,)), ("randn", (1024,))],
                torch=lambda torch, x, w, b: torch.nn.functional.layer_norm(x, (1024,), w, b),
                bytes=2 * 8192 * 1024 * 4, interp_ok=True)


def mlp_case():
    B, D, H = 256, 1024, 4096
    mlir = """func.func @main(%%x: %s, %%w1: %s, %%b1: %s, %%w2: %s, %%b2: %s) -> %s {
  %%0 = kt.linear %%x, %%w1, %%b1 : (%s, %s, %s) -> %s
  %%1 = kt.gelu %%0 : (%s) -> %s
  %%2 = kt.linear %%1, %%w2, %%b2 : (%s, %s, %s) -> %s
  return %%2 : %s
}""" % (T((B, D)), T((H, D)), T((H,)), T((D, H)), T((D,)), T((B, D)),
        T((B, D)), T((H, D)), T((H,)), T((B, H)), T((B, H)), T((B, H)),
        T((B, H)), T((D, H)), T((D,)), T((B, D)), T((B, D)))

    def torch_fn(torch, x, w1, b1, w2, b2):
        F = torch.nn.functional
        return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)
    return dict(name="GELU MLP 1024->4096->1024, batch 256 (fwd)", mlir=mlir,
                inputs=[("randn", (B, D)), ("small", (H, D)), ("randn", (H,)),
                        ("small", (D, H)), ("randn", (D,))],
                torch=torch_fn, flops=2 * 2 * B * D * H, interp_ok=False)


def mlp_train_case():
    """The MLP's joint forward + backward (training step without the
    optimizer): loss = sum(MLP(x)), gradients w.r.t. w1, b1, w2, b2, made by
    Kiln's AOT stage (kiln-autodiff + kiln-partition) as @mlp_fwd (loss and
    saved values) and @mlp_bwd (saved values, cotangent -> gradients), both
    compiled by the CPU backend; one step = the two kernel times."""
    B, D, H = 256, 1024, 4096
    src = """func.func @mlp(%%x: %s {kg.requires_grad = false}, %%w1: %s, %%b1: %s, %%w2: %s, %%b2: %s) -> tensor<f32> attributes {kg.differentiate} {
  %%0 = kt.linear %%x, %%w1, %%b1 : (%s, %s, %s) -> %s
  %%1 = kt.gelu %%0 : (%s) -> %s
  %%2 = kt.linear %%1, %%w2, %%b2 : (%s, %s, %s) -> %s
  %%3 = kt.sum %%2 : (%s) -> tensor<f32>
  return %%3 : tensor<f32>
}""" % (T((B, D)), T((H, D)), T((H,)), T((D, H)), T((D,)),
        T((B, D)), T((H, D)), T((H,)), T((B, H)), T((B, H)), T((B, H)),
        T((B, H)), T((D, H)), T((D,)), T((B, D)), T((B, D)))

    def torch_step(torch, x, w1, b1, w2, b2):
        F = torch.nn.functional
        y = F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)
        loss = y.sum()
        loss.backward()
        return loss
    # fwd: 2 matmuls; bwd: dH = dY W2, dW2 = dY^T G, dW1 = dH^T X (x needs
    # no gradient): 5 matmuls of 2*B*D*H flops.
    return dict(name="GELU MLP 1024->4096->1024, batch 256 (fwd+bwd)", train=src,
                inputs=[("randn", (B, D)), ("small", (H, D)), ("randn", (H,)),
                        ("small", (D, H)), ("randn", (D,))],
                torch_step=torch_step, flops=5 * 2 * B * D * H, interp_ok=False)


def attention_case():
    S, Dm, Hh = 512, 512, 8
    hd = Dm // Hh
    mlir = """func.func @main(%x: {X}, %wqkv: {WQKV}, %bqkv: {BQKV}, %wo: {WO}, %bo: {BO}) -> {X} {{
  %qkv = kt.linear %x, %wqkv, %bqkv : ({X}, {WQKV}, {BQKV}) -> {QKV}
  %qkv4 = kt.reshape %qkv {{shape = [{S}, 3, {H}, {hd}]}} : ({QKV}) -> {QKV4}
  %heads = kt.permute %qkv4 {{dims = [1, 2, 0, 3]}} : ({QKV4}) -> {HEADS}
  %q = kt.select %heads {{dim = 0, index = 0}} : ({HEADS}) -> {HD}
  %k = kt.select %heads {{dim = 0, index = 1}} : ({HEADS}) -> {HD}
  %v = kt.select %heads {{dim = 0, index = 2}} : ({HEADS}) -> {HD}
  %att = kt.scaled_dot_product_attention %q, %k, %v : ({HD}, {HD}, {HD}) -> {HD}
  %att_t = kt.transpose %att {{dim0 = 0, dim1 = 1}} : ({HD}) -> {ATT_T}
  %att2 = kt.reshape %att_t {{shape = [{S}, {Dm}]}} : ({ATT_T}) -> {X}
  %out = kt.linear %att2, %wo, %bo : ({X}, {WO}, {BO}) -> {X}
  return %out : {X}
}}""".format(X=T((S, Dm)), WQKV=T((3 * Dm, Dm)), BQKV=T((3 * Dm,)), WO=T((Dm, Dm)),
             BO=T((Dm,)), QKV=T((S, 3 * Dm)), QKV4=T((S, 3, Hh, hd)),
             HEADS=T((3, Hh, S, hd)), HD=T((Hh, S, hd)), ATT_T=T((S, Hh, hd)),
             S=S, H=Hh, hd=hd, Dm=Dm)

    def torch_fn(torch, x, wqkv, bqkv, wo, bo):
        F = torch.nn.functional
        qkv = F.linear(x, wqkv, bqkv).reshape(S, 3, Hh, hd).permute(1, 2, 0, 3)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = torch.softmax(q @ k.transpose(-1, -2) / (hd ** 0.5), -1) @ v
        return F.linear(a.transpose(0, 1).reshape(S, Dm), wo, bo)
    flops = 2 * S * Dm * 3 * Dm + 2 * 2 * Hh * S * S * hd + 2 * S * Dm * Dm
    return dict(name="attention block (seq 512, d 512, 8 heads)", mlir=mlir,
                inputs=[("randn", (S, Dm)), ("small", (3 * Dm, Dm)), ("randn", (3 * Dm,)),
                        ("small", (Dm, Dm)), ("randn", (Dm,))],
                torch=torch_fn, flops=flops, interp_ok=True)


def resnet_case():
    N, C, HW = 8, 64, 56
    X = T((N, C, HW, HW))
    W = T((C, C, 3, 3))
    V = T((C,))
    mlir = """func.func @main(%x: {X}, %w1: {W}, %g1: {V}, %b1: {V}, %m1: {V}, %v1: {V},
                %w2: {W}, %g2: {V}, %b2: {V}, %m2: {V}, %v2: {V}) -> {X} {{
  %c1 = kt.conv2d %x, %w1 {{padding = [1, 1]}} : ({X}, {W}) -> {X}
  %n1 = kt.batch_norm %c1, %m1, %v1 weight %g1 bias %b1 : ({X}, {V}, {V}, {V}, {V}) -> {X}
  %r1 = kt.relu %n1 : ({X}) -> {X}
  %c2 = kt.conv2d %r1, %w2 {{padding = [1, 1]}} : ({X}, {W}) -> {X}
  %n2 = kt.batch_norm %c2, %m2, %v2 weight %g2 bias %b2 : ({X}, {V}, {V}, {V}, {V}) -> {X}
  %s = kt.add %n2, %x : ({X}, {X}) -> {X}
  %y = kt.relu %s : ({X}) -> {X}
  return %y : {X}
}}""".format(X=X, W=W, V=V)

    def torch_fn(torch, x, w1, g1, b1, m1, v1, w2, g2, b2, m2, v2):
        F = torch.nn.functional
        h = F.relu(F.batch_norm(F.conv2d(x, w1, padding=1), m1, v1, g1, b1))
        return F.relu(F.batch_norm(F.conv2d(h, w2, padding=1), m2, v2, g2, b2) + x)
    vec = [("randn", (C,)), ("randn", (C,)), ("randn", (C,)), ("pos", (C,))]
    return dict(name="ResNet basic block (8x64x56x56)", mlir=mlir,
                inputs=[("randn", (N, C, HW, HW)), ("small", (C, C, 3, 3))] + vec +
                       [("small", (C, C, 3, 3))] + vec,
                torch=torch_fn, flops=2 * 2 * N * C * C * 9 * HW * HW, interp_ok=False)


def bn_relu_lines(n, src, X, V, relu=True, relu6=False):
    """kt lines: batch_norm (+ relu / relu6 as clamp) of %<src>, named %<n>."""
    lines = ["  %%n%s = kt.batch_norm %%%s, %%m%s, %%v%s weight %%g%s bias %%b%s : "
             "(%s, %s, %s, %s, %s) -> %s" % (n, src, n, n, n, n, X, V, V, V, V, X)]
    if relu6:
        lines.append("  %%r%s = kt.clamp %%n%s {min = 0.0 : f64, max = 6.0 : f64} : (%s) -> %s"
                     % (n, n, X, X))
    elif relu:
        lines.append("  %%r%s = kt.relu %%n%s : (%s) -> %s" % (n, n, X, X))
    return lines


def bn_args(n, V):
    return ", ".join("%%%s%s: %s" % (p, n, V) for p in "gbmv")


def bn_inputs(c):
    return [("randn", (c,)), ("randn", (c,)), ("randn", (c,)), ("pos", (c,))]


def torch_bn(F, x, g, b, m, v):
    return F.batch_norm(x, m, v, g, b)


def bottleneck_case():
    """resnet50 bottleneck: 1x1 256->64, 3x3 64->64, 1x1 64->256, residual."""
    N, C, M, HW = 8, 256, 64, 56
    X, H = T((N, C, HW, HW)), T((N, M, HW, HW))
    W1, W2, W3 = T((M, C, 1, 1)), T((M, M, 3, 3)), T((C, M, 1, 1))
    VM, VC = T((M,)), T((C,))
    lines = ["  %%c1 = kt.conv2d %%x, %%w1 : (%s, %s) -> %s" % (X, W1, H)]
    lines += bn_relu_lines("1", "c1", H, VM)
    lines += ["  %%c2 = kt.conv2d %%r1, %%w2 {padding = [1, 1]} : (%s, %s) -> %s" % (H, W2, H)]
    lines += bn_relu_lines("2", "c2", H, VM)
    lines += ["  %%c3 = kt.conv2d %%r2, %%w3 : (%s, %s) -> %s" % (H, W3, X)]
    lines += bn_relu_lines("3", "c3", X, VC, relu=False)
    lines += ["  %%s = kt.add %%n3, %%x : (%s, %s) -> %s" % (X, X, X),
              "  %%y = kt.relu %%s : (%s) -> %s" % (X, X), "  return %%y : %s" % X]
    mlir = ("func.func @main(%%x: %s, %%w1: %s, %s, %%w2: %s, %s, %%w3: %s, %s) -> %s {\n"
            % (X, W1, bn_args("1", VM), W2, bn_args("2", VM), W3, bn_args("3", VC), X)
            + "\n".join(lines) + "\n}")

    def torch_fn(torch, x, w1, g1, b1, m1, v1, w2, g2, b2, m2, v2, w3, g3, b3, m3, v3):
        F = torch.nn.functional
        h = F.relu(torch_bn(F, F.conv2d(x, w1), g1, b1, m1, v1))
        h = F.relu(torch_bn(F, F.conv2d(h, w2, padding=1), g2, b2, m2, v2))
        return F.relu(torch_bn(F, F.conv2d(h, w3), g3, b3, m3, v3) + x)
    flops = 2 * N * HW * HW * (C * M + M * M * 9 + M * C)
    return dict(name="resnet50 bottleneck (8x256x56x56, 256->64->256)", mlir=mlir,
                inputs=[("randn", (N, C, HW, HW)), ("small", (M, C, 1, 1))] + bn_inputs(M)
                + [("small", (M, M, 3, 3))] + bn_inputs(M) + [("small", (C, M, 1, 1))]
                + bn_inputs(C),
                torch=torch_fn, flops=flops, interp_ok=False)


def inverted_residual_case():
    """mobilenet_v2 inverted residual: 1x1 32->192 + relu6, depthwise 3x3 +
    relu6, 1x1 192->32, residual add."""
    N, C, E, HW = 8, 32, 192, 56
    X, H = T((N, C, HW, HW)), T((N, E, HW, HW))
    W1, W2, W3 = T((E, C, 1, 1)), T((E, 1, 3, 3)), T((C, E, 1, 1))
    VE, VC = T((E,)), T((C,))
    lines = ["  %%c1 = kt.conv2d %%x, %%w1 : (%s, %s) -> %s" % (X, W1, H)]
    lines += bn_relu_lines("1", "c1", H, VE, relu6=True)
    lines += ["  %%c2 = kt.conv2d %%r1, %%w2 {padding = [1, 1], groups = %d} : (%s, %s) -> %s"
              % (E, H, W2, H)]
    lines += bn_relu_lines("2", "c2", H, VE, relu6=True)
    lines += ["  %%c3 = kt.conv2d %%r2, %%w3 : (%s, %s) -> %s" % (H, W3, X)]
    lines += bn_relu_lines("3", "c3", X, VC, relu=False)
    lines += ["  %%y = kt.add %%n3, %%x : (%s, %s) -> %s" % (X, X, X), "  return %%y : %s" % X]
    mlir = ("func.func @main(%%x: %s, %%w1: %s, %s, %%w2: %s, %s, %%w3: %s, %s) -> %s {\n"
            % (X, W1, bn_args("1", VE), W2, bn_args("2", VE), W3, bn_args("3", VC), X)
            + "\n".join(lines) + "\n}")

    def torch_fn(torch, x, w1, g1, b1, m1, v1, w2, g2, b2, m2, v2, w3, g3, b3, m3, v3):
        F = torch.nn.functional
        h = F.relu6(torch_bn(F, F.conv2d(x, w1), g1, b1, m1, v1))
        h = F.relu6(torch_bn(F, F.conv2d(h, w2, padding=1, groups=E), g2, b2, m2, v2))
        return torch_bn(F, F.conv2d(h, w3), g3, b3, m3, v3) + x
    flops = 2 * N * HW * HW * (C * E + E * 9 + E * C)
    return dict(name="mobilenet_v2 inverted residual (8x32x56x56, x6, dw 3x3)", mlir=mlir,
                inputs=[("randn", (N, C, HW, HW)), ("small", (E, C, 1, 1))] + bn_inputs(E)
                + [("small", (E, 1, 3, 3))] + bn_inputs(E) + [("small", (C, E, 1, 1))]
                + bn_inputs(C),
                torch=torch_fn, flops=flops, interp_ok=False)


def sgemm_case(n):
    t = T((n, n))
    mlir = """func.func @main(%%a: %s, %%b: %s) -> %s {
  %%0 = kt.matmul %%a, %%b : (%s, %s) -> %s
  return %%0 : %s
}""" % ((t,) * 7)
    return dict(name="sgemm %d^3" % n, mlir=mlir, inputs=[("randn", (n, n)), ("randn", (n, n))],
                torch=lambda torch, a, b: a @ b, flops=2 * n ** 3, interp_ok=False, sgemm=n)


def reduce_case(name, shape, op, attrs, out_shape, torch_fn):
    mlir = """func.func @main(%%x: %s) -> %s {
  %%0 = kt.%s %%x %s: (%s) -> %s
  return %%0 : %s
}""" % (T(shape), T(out_shape), op, ("{%s} " % attrs) if attrs else "", T(shape),
        T(out_shape), T(out_shape))
    numel = 1
    for d in shape:
        numel *= d
    # Inputs randn + 1 (a mean away from zero, as activations and losses
    # have): the error column gives Kiln's and PyTorch's max error against
    # the float64 result of the same function.
    return dict(name=name, mlir=mlir, inputs=[("randn1", shape)], torch=torch_fn,
                bytes=4 * numel, interp_ok=False, ref64=True)


REDUCE_CASES = [
    lambda: reduce_case("sum 4096x4096 rows (dim -1)", (4096, 4096), "sum", "dim = [-1]",
                        (4096,), lambda torch, x: x.sum(-1)),
    lambda: reduce_case("sum 65536x256 columns (dim 0)", (65536, 256), "sum", "dim = [0]",
                        (256,), lambda torch, x: x.sum(0)),
    lambda: reduce_case("mean 4096x4096 (all dims)", (4096, 4096), "mean", "", (),
                        lambda torch, x: x.mean()),
    lambda: reduce_case("mean 64x128x2048 dims [0, 2]", (64, 128, 2048), "mean",
                        "dim = [0, 2]", (128,), lambda torch, x: x.mean((0, 2))),
]


CASES = [chain_case, softmax_case, log_softmax_case,
         lambda: cross_entropy_case(4096, 4096), lambda: cross_entropy_case(4096, 32000),
         lambda: cross_entropy_train_case(4096, 4096),
         lambda: cross_entropy_train_case(4096, 32000), layernorm_case, mlp_case, mlp_train_case, attention_case,
         resnet_case, bottleneck_case, inverted_residual_case,
         lambda: sgemm_case(1024), lambda: sgemm_case(2048)] + REDUCE_CASES

# ------------------------------------------------------------- baselines ---

COPY_C = r"""
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
  long n = atol(argv[1]); int reps = atoi(argv[2]);
  float *a = aligned_alloc(64, n * 4), *b = aligned_alloc(64, n * 4);
  #pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) { a[i] = (float)i; b[i] = 0; }
  double t[64];
  for (int r = 0; r < reps; ++r) {
    double t0 = omp_get_wtime();
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) b[i] = a[i];
    t[r] = omp_get_wtime() - t0;
  }
  qsort(t, reps, sizeof(double), cmp);
  printf("%.9f %f\n", t[reps / 2], b[n - 1]);
  return 0;
}
"""

SGEMM_C = r"""
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
  int n = atoi(argv[1]), reps = atoi(argv[2]), threads = atoi(argv[3]);
  openblas_set_num_threads(threads);
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n),
        *c = malloc(sizeof(float) * n * n);
  for (long i = 0; i < (long)n * n; ++i) { a[i] = (float)(i % 7) - 3; b[i] = (float)(i % 5) - 2; }
  double t[64];
  for (int r = 0; r <= reps; ++r) {
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a, n, b, n, 0.f, c, n);
    if (r) t[r - 1] = now() - t0;
  }
  qsort(t, reps, sizeof(double), cmp);
  printf("%.9f %f\n", t[reps / 2], c[0]);
  return 0;
}
"""


def build_c(tmp, name, src, flags):
    path = os.path.join(tmp, name + ".c")
    with open(path, "w") as f:
        f.write(src)
    exe = os.path.join(tmp, name)
    r = subprocess.run(["clang-22", "-O3", "-march=native", path, "-o", exe] + flags,
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr)
    return exe


def copy_gbps(tmp, threads):
    exe = build_c(tmp, "copy", COPY_C, ["-fopenmp", "-L" + LLVM_LIB, "-Wl,-rpath," + LLVM_LIB])
    n = 16 * 1024 * 1024 * 2  # 128 MiB per array
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([exe, str(n), "15"], capture_output=True, text=True, env=env).stdout
    t = float(out.split()[0])
    return 2 * n * 4 / t / 1e9


def openblas_gflops(tmp, n, threads):
    exe = build_c(tmp, "sgemm", SGEMM_C, ["-lopenblas"])
    out = subprocess.run([exe, str(n), "7", str(threads)], capture_output=True, text=True).stdout
    return 2 * n ** 3 / float(out.split()[0]) / 1e9

# ----------------------------------------------------------------- runs ---

def make_inputs(specs, rng):
    out = []
    for kind, shape in specs:
        if kind.startswith("classes:"):  # class indices in [0, C)
            out.append(rng.integers(0, int(kind.split(":")[1]), shape).astype(np.int64))
            continue
        x = rng.standard_normal(shape).astype(np.float32)
        if kind == "small":
            x *= 0.05
        elif kind == "randn1":
            x += 1
        elif kind == "pos":
            x = np.abs(x) + 0.5
        out.append(x)
    return out


def kiln(tmp, mlir, inputs, repeat, extra):
    path = os.path.join(tmp, "case.mlir")
    with open(path, "w") as f:
        f.write(mlir)
    args = [KILN_RUN, path, "--stats", "--repeat=%d" % repeat,
            "--output-dir=" + os.path.join(tmp, "out")]
    for i, x in enumerate(inputs):
        p = os.path.join(tmp, "in%d.npy" % i)
        np.save(p, x)
        args.append("--input=" + p)
    r = subprocess.run(args + list(extra), capture_output=True, text=True)
    if r.returncode:
        msg = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])
        first = next((l for l in msg if "error" in l), msg[0])
        raise RuntimeError(first[:160])
    out = r.stdout
    res = {}
    m = re.search(r"compile time: kiln-cpu ([0-9.]+) s, jit ([0-9.]+) s", out)
    if m:
        res["compile"] = float(m.group(1)) + float(m.group(2))
    m = re.search(r"kernel time: median ([0-9.]+)", out)
    if m:
        res["kernel"] = float(m.group(1))
    m = re.search(r"call time: median ([0-9.]+)", out)
    res["call"] = float(m.group(1))
    res["results"] = []
    while os.path.exists(os.path.join(tmp, "out", "result%d.npy" % len(res["results"]))):
        res["results"].append(np.load(os.path.join(tmp, "out", "result%d.npy"
                                                   % len(res["results"]))))
    res["result"] = res["results"][0]
    return res


KILN_OPT = os.path.join(BUILD, "bin", "kiln-opt")


def kiln_train(tmp, src, inputs, repeat, extra, fn="mlp"):
    """Kiln's AOT stage on `src` (kiln-autodiff, kiln-partition: @mlp_fwd,
    @mlp_bwd), then the CPU backend: @mlp_fwd on the inputs, @mlp_bwd on its
    saved values and the cotangent 1. Returns the two kernel times, the
    AOT + compile times, the loss and the gradients."""
    path = os.path.join(tmp, "train.mlir")
    with open(path, "w") as f:
        f.write(src)
    joint = os.path.join(tmp, "train_aot.mlir")
    t0 = time.perf_counter()
    r = subprocess.run([KILN_OPT, path, "-kiln-autodiff", "-kiln-partition", "-o", joint],
                       capture_output=True, text=True)
    aot = time.perf_counter() - t0
    if r.returncode:
        raise RuntimeError("kiln-opt -kiln-autodiff -kiln-partition: " +
                           (r.stderr.strip().splitlines() or ["?"])[0][:160])
    text = open(joint).read()
    fwd = kiln(tmp, text, inputs, repeat, list(extra) + ["--entry=%s_fwd" % fn])
    loss, saved = fwd["results"][0], fwd["results"][1:]
    bwd = kiln(tmp, text, saved + [np.ones((), np.float32)], repeat,
               list(extra) + ["--entry=%s_bwd" % fn])
    return dict(fwd=fwd.get("kernel", fwd["call"]), bwd=bwd.get("kernel", bwd["call"]),
                compile=aot + fwd.get("compile", 0) + bwd.get("compile", 0),
                loss=loss, grads=bwd["results"], saved=len(saved))


def torch_train_time(torch, step, inputs, repeat, fn="mlp"):
    if fn == "ce":  # the logits are the parameter; the targets are data
        x = torch.from_numpy(inputs[1])
        params = [torch.from_numpy(inputs[0]).clone().requires_grad_()]
        return _train_loop(torch, lambda torch, x, p: step(torch, None, x, p), x,
                           params, repeat)
    x = torch.from_numpy(inputs[0])
    params = [torch.from_numpy(a).clone().requires_grad_() for a in inputs[1:]]
    return _train_loop(torch, step, x, params, repeat)


def _train_loop(torch, step, x, params, repeat):
    times = []
    for r in range(repeat + 1):
        for p in params:
            p.grad = None
        t0 = time.perf_counter()
        loss = step(torch, x, *params)
        if r:
            times.append(time.perf_counter() - t0)
    return statistics.median(times), float(loss), [p.grad.numpy() for p in params]


def torch_time(torch, fn, inputs, repeat):
    xs = [torch.from_numpy(x) for x in inputs]
    with torch.no_grad():
        out = fn(torch, *xs)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn(torch, *xs)
            times.append(time.perf_counter() - t0)
    return statistics.median(times), out.numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--interp-repeat", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--kiln-args", default="",
                    help="extra kiln-run arguments for the Kiln runs, e.g. '--cpu-fuse'")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    th = args.threads
    print("Kiln CPU benchmarks: %d threads, %s, torch %s (%s), repeat %d (medians)" % (
        th, open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": "),
        torch.__version__, "OpenBLAS" if "openblas" in torch.__config__.show().lower()
        or os.path.exists("/usr/lib/x86_64-linux-gnu/libopenblas.so.0") else "?", args.repeat))
    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as tmp:
        gbps = copy_gbps(tmp, th)
        print("STREAM-style copy (clang-22 -O3 -fopenmp, %d threads): %.1f GB/s" % (th, gbps))
        blas = {n: openblas_gflops(tmp, n, th) for n in (1024, 2048)}
        for n, g in blas.items():
            print("OpenBLAS cblas_sgemm %d^3 (%d threads): %.1f GFLOP/s" % (n, th, g))
        print()
        hdr = ("case", "kiln ms", "compile s", "interp ms", "torch ms", "kiln/torch",
               "kiln/interp", "rate", "limit", "max err")
        rows = [hdr]
        for make in CASES:
            c = make()
            if args.only and args.only not in c["name"]:
                continue
            inputs = make_inputs(c["inputs"], rng)
            row = [c["name"]]
            if "train" in c:
                try:
                    k = kiln_train(tmp, c["train"], inputs, args.repeat,
                                   ["--backend=cpu", "--cpu-threads=%d" % th],
                                   c.get("fn", "mlp"))
                except RuntimeError as e:
                    rows.append(row + ["n/a (%s)" % e] + [""] * 8)
                    print(" | ".join(rows[-1]), flush=True)
                    continue
                kt = k["fwd"] + k["bwd"]
                tt, tloss, tgrads = torch_train_time(torch, c["torch_step"], inputs,
                                                     args.repeat, c.get("fn", "mlp"))
                err = max(float(np.max(np.abs(g.astype(np.float64) - t)))
                          for g, t in zip(k["grads"], tgrads))
                rel = max(float(np.max(np.abs(g.astype(np.float64) - t)) /
                                max(float(np.max(np.abs(t))), 1e-30))
                          for g, t in zip(k["grads"], tgrads))
                if "bytes" in c:
                    rate = "%.1f GB/s" % (c["bytes"] / kt / 1e9)
                    limit = "%.0f%% of copy" % (100 * c["bytes"] / kt / 1e9 / gbps)
                else:
                    g = c["flops"] / kt / 1e9
                    rate = "%.1f GFLOP/s" % g
                    limit = "%.0f%% of OpenBLAS" % (100 * g / blas[2048])
                row += ["%.2f (fwd %.2f + bwd %.2f)" % (kt * 1e3, k["fwd"] * 1e3,
                                                         k["bwd"] * 1e3),
                        "%.2f" % k["compile"], "skipped (minutes)", "%.2f" % (tt * 1e3),
                        "%.2fx" % (tt / kt), "", rate, limit,
                        "%.1e (rel %.1e)" % (err, rel)]
                rows.append(row)
                print(" | ".join(row), flush=True)
                print("  (fwd+bwd: %d saved values; loss kiln %.6g torch %.6g; max err over "
                      "the %d gradients vs torch's loss.backward())" % (
                          k["saved"], float(k["loss"]), tloss, len(tgrads)), flush=True)
                continue
            try:
                k = kiln(tmp, c["mlir"], inputs, args.repeat,
                         ["--backend=cpu", "--cpu-threads=%d" % th] + args.kiln_args.split())
            except RuntimeError as e:
                rows.append(row + ["n/a (%s)" % e] + [""] * 8)
                print(" | ".join(rows[-1]), flush=True)
                continue
            kt = k.get("kernel", k["call"])
            tt, tout = torch_time(torch, c["torch"], inputs, args.repeat)
            if c.get("interp_ok"):
                try:
                    it = kiln(tmp, c["mlir"], inputs, args.interp_repeat,
                              ["--backend=interpreter"])["call"]
                    itxt, iratio = "%.1f" % (it * 1e3), "%.1fx" % (it / kt)
                except RuntimeError as e:
                    itxt, iratio = "n/a (%s)" % e, ""
            else:
                itxt, iratio = "skipped (minutes)", ""
            err = float(np.max(np.abs(k["result"].astype(np.float64) - tout)))
            errtxt = "%.1e" % err
            if c.get("ref64"):
                with torch.no_grad():
                    ref = c["torch"](torch, *[torch.from_numpy(x.astype(np.float64))
                                             for x in inputs]).numpy()
                errtxt = "kiln %.1e, torch %.1e vs fp64" % (
                    float(np.max(np.abs(k["result"].astype(np.float64) - ref))),
                    float(np.max(np.abs(tout.astype(np.float64) - ref))))
            if "bytes" in c:
                rate = "%.1f GB/s" % (c["bytes"] / kt / 1e9)
                limit = "%.0f%% of copy" % (100 * c["bytes"] / kt / 1e9 / gbps)
            else:
                g = c["flops"] / kt / 1e9
                rate = "%.1f GFLOP/s" % g
                limit = ("%.0f%% of OpenBLAS" % (100 * g / blas[c["sgemm"]])
                         if "sgemm" in c else "")
            row += ["%.2f" % (kt * 1e3), "%.2f" % k.get("compile", float("nan")), itxt,
                    "%.2f" % (tt * 1e3), "%.2fx" % (tt / kt), iratio, rate, limit,
                    errtxt]
            rows.append(row)
            print(" | ".join(row), flush=True)
        print()
        print("| " + " | ".join(rows[0]) + " |")
        print("|" + " --- |" * len(rows[0]))
        for r in rows[1:]:
            print("| " + " | ".join(r) + " |")
        print("\nkiln/torch > 1 means Kiln is faster. Kiln times: the compiled code per call "
              "(kiln-run 'kernel time', result copy-out excluded); compile = kiln-cpu pipeline "
              "+ JIT, cold (first compile in a fresh process).")


if __name__ == "__main__":
    main()
