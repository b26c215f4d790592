# RUN: %python %s %t %S/../../runtime/python
# REQUIRES: numpy, torch
# UNSUPPORTED: sanitizer
#
# Packages (docs/packages.md): kiln-compile writes them, and this process,
# which loads only libkiln_rt.so and runtime/python/kiln_rt.py (no compiler,
# no `kiln` package), runs them on NumPy arrays and torch tensors and
# compares with NumPy / PyTorch: pointwise with broadcasting and dynamic
# dims, reductions and softmax, matmul through OpenBLAS and generated code,
# conv2d, integer and boolean dtypes, several entries in one package,
# kg.programs (symbolic dims, shape relations, inline and outlined graphs),
# a run-time error of the compiled code. Then bad package files and bad
# arguments: each a clear error, never a crash.
import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

work, loader_dir = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
tools = os.environ["KILN_TOOLS_DIR"]
kiln_compile = os.path.join(tools, "kiln-compile")
libkiln_rt = os.path.join(os.path.dirname(tools), "lib", "libkiln_rt.so.0")
sys.path.insert(0, loader_dir)
import kiln_rt  # noqa: E402

kiln_rt.load_library(libkiln_rt)
# The compiler must not be in this process.
assert "kiln" not in sys.modules

failures = 0


def record(ok, what, detail=""):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        print(detail)
        failures += 1


def compile_package(name, text, *options):
    src = os.path.join(work, name + ".mlir")
    with open(src, "w") as f:
        f.write(text)
    out = os.path.join(work, name + ".so")
    r = subprocess.run([kiln_compile, src, "-o", out] + list(options),
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("kiln-compile %s failed:\n%s" % (name, r.stderr))
    return kiln_rt.Package(out)


def close(got, want, what, tol=1e-5):
    got = np.asarray(got)
    want = np.asarray(want)
    ok = got.shape == want.shape and got.dtype == want.dtype and \
        np.allclose(got.astype(np.float64), want.astype(np.float64),
                    rtol=tol, atol=tol)
    record(ok, what, "got %s %s\n%s\nwant %s %s\n%s" %
           (got.dtype, got.shape, got, want.dtype, want.shape, want))


def expect_error(fn, needle, what):
    try:
        fn()
    except kiln_rt.KilnRtError as e:
        record(needle in str(e), what, "message: %s\nwanted: %s" % (e, needle))
        return
    record(False, what, "no error")


rng = np.random.default_rng(7)

# 1. Pointwise with broadcasting and a dynamic dim; NumPy and torch callers.
p = compile_package("pointwise", """
func.func @f(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %e = kt.exp %a : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %m = kt.mul %e, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %r = kt.sub %m, %a : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
""")
b = rng.standard_normal(4).astype(np.float32)
for rows in [1, 3, 17, 0]:
    a = rng.standard_normal((rows, 4)).astype(np.float32)
    r, = p.run("f", a, b)
    close(r, np.exp(a) * b - a, "pointwise %d rows (NumPy)" % rows)
a = rng.standard_normal((5, 4)).astype(np.float32)
r, = p["f"](torch.from_numpy(a), torch.from_numpy(b))
record(isinstance(r, torch.Tensor), "torch arguments give torch results")
close(r.numpy(), np.exp(a) * b - a, "pointwise (torch)")
# A strided (transposed) argument is copied to compact row-major first.
at = np.ascontiguousarray(rng.standard_normal((4, 6)).astype(np.float32)).T
r, = p.run("f", at, b)
close(r, np.exp(at) * b - at, "pointwise on a transposed argument")
r, = p["f"](torch.from_numpy(at), torch.from_numpy(b))
close(r.numpy(), np.exp(at) * b - at, "pointwise on a transposed torch tensor")
sig = p.signature("f")
record(sig == {"args": [("arg0", "f32", ["?", 4]), ("arg1", "f32", [4])],
               "results": [("f32", ["?", 4])]}, "signature from the manifest",
       str(sig))

# 2. Reductions and softmax (several entries in one package).
p = compile_package("reductions", """
func.func @sum1(%a: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = kt.sum %a {dim = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @softmax(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = kt.softmax %a {dim = -1} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @amax(%a: tensor<6x7xf32>) -> tensor<f32> {
  %0 = kt.amax %a : (tensor<6x7xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
""", "--entry=sum1,softmax,amax")
record(p.entries == ["sum1", "softmax", "amax"], "three entries", str(p.entries))
for shape in [(3, 5), (8, 129), (1, 1)]:
    x = rng.standard_normal(shape).astype(np.float32)
    r, = p.run("sum1", x)
    close(r, x.sum(axis=1), "sum over dim 1 %s" % (shape,), 1e-4)
    r, = p.run("softmax", torch.from_numpy(x))
    close(r.numpy(), F.softmax(torch.from_numpy(x), dim=-1).numpy(),
          "softmax %s" % (shape,))
x = rng.standard_normal((6, 7)).astype(np.float32)
r, = p.run("amax", x)
close(r, np.array(x.max(), np.float32), "amax to a 0-d result")

# 3. Matmul: OpenBLAS (needs libopenblas, named in the manifest) and
# generated code.
MM = """
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = kt.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
"""
# f32 BLAS products call oneDNN's sgemm through libkiln_onednn where the
# build has it (--sgemm=auto; MM's `?` sizes choose per call between it and
# OpenBLAS, so both are needed), OpenBLAS with --sgemm=openblas.
HAVE_ONEDNN = os.path.exists(os.path.join(os.path.dirname(tools), "lib",
                                          "libkiln_onednn.so.0"))
for impl, flags in [("openblas", ["--matmul=openblas", "--sgemm=openblas"]),
                    ("generated", ["--matmul=generated"]),
                    ("auto", ["--matmul=openblas"])]:
    p = compile_package("mm_" + impl, MM, *flags)
    libs = [l["name"] for l in p.manifest["needed_libraries"]]
    blas = impl in ("openblas", "auto")
    record(("libopenblas.so.0" in libs) == blas,
           "matmul=%s: needed libraries %s" % (impl, libs))
    record(("libkiln_onednn.so.0" in libs) == (impl == "auto" and HAVE_ONEDNN),
           "matmul=%s: needed libraries %s (libkiln_onednn)" % (impl, libs))
    for m, k, n in [(3, 4, 5), (64, 33, 17), (1, 1, 1)]:
        x = rng.standard_normal((m, k)).astype(np.float32)
        y = rng.standard_normal((k, n)).astype(np.float32)
        r, = p.run("mm", x, y)
        close(r, x @ y, "matmul %s %dx%dx%d" % (impl, m, k, n), 1e-4)

# 4. conv2d with bias, stride and padding against PyTorch.
p = compile_package("conv", """
func.func @conv(%x: tensor<2x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x5x5xf32> {
  %0 = kt.conv2d %x, %w, %b {stride = [2, 2], padding = [1, 1]} : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  return %0 : tensor<2x4x5x5xf32>
}
""")
x = torch.randn(2, 3, 9, 9)
w = torch.randn(4, 3, 3, 3)
bias = torch.randn(4)
r, = p.run("conv", x, w, bias)
close(r.numpy(), F.conv2d(x, w, bias, stride=2, padding=1).numpy(), "conv2d", 1e-4)

# 4b. The same conv through oneDNN (--conv=onednn, where this build has
# libkiln_onednn): the manifest names libkiln_onednn.so.0, which the loader
# finds by name or at its build path, and the numbers match PyTorch.
if os.path.exists(os.path.join(os.path.dirname(tools), "lib", "libkiln_onednn.so.0")):
    src = """
func.func @conv(%x: tensor<?x6x9x9xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<?x8x5x5xf32> {
  %0 = kt.conv2d %x, %w, %b {stride = [2, 2], padding = [1, 1], groups = 2} : (tensor<?x6x9x9xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<?x8x5x5xf32>
  return %0 : tensor<?x8x5x5xf32>
}
"""
    p = compile_package("conv_onednn", src, "--conv=onednn")
    libs = [l["name"] for l in p.manifest["needed_libraries"]]
    record("libkiln_onednn.so.0" in libs, "conv=onednn: needed libraries %s" % libs)
    for n in [1, 3]:
        x = torch.randn(n, 6, 9, 9)
        w = torch.randn(8, 3, 3, 3)
        bias = torch.randn(8)
        r, = p.run("conv", x, w, bias)
        close(r.numpy(), F.conv2d(x, w, bias, stride=2, padding=1, groups=2).numpy(),
              "conv2d through oneDNN, batch %d" % n, 1e-4)

# 5. Integer and boolean dtypes: i64 arithmetic, an i1 result, f16.
p = compile_package("dtypes", """
func.func @ints(%a: tensor<?xi64>, %b: tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi1>) {
  %0 = kt.mul %a, %b : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %1 = kt.lt %a, %b : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi1>
  return %0, %1 : tensor<?xi64>, tensor<?xi1>
}
func.func @half(%a: tensor<5xf16>) -> tensor<5xf16> {
  %0 = kt.add %a, %a : (tensor<5xf16>, tensor<5xf16>) -> tensor<5xf16>
  return %0 : tensor<5xf16>
}
""", "--entry=ints,half")
ia = rng.integers(-1000, 1000, 11)
ib = rng.integers(-1000, 1000, 11)
prod, less = p.run("ints", ia, ib)
close(prod, ia * ib, "i64 product (NumPy)")
close(less, ia < ib, "i1 result (NumPy)")
prod, less = p.run("ints", torch.from_numpy(ia), torch.from_numpy(ib))
record(less.dtype == torch.bool and bool((less == (torch.from_numpy(ia) < torch.from_numpy(ib))).all()),
       "i1 result (torch bool)")
h = rng.standard_normal(5).astype(np.float16)
r, = p.run("half", h)
close(r, h + h, "f16")

# int8, uint8 and int16 (DLPack kDLInt 8/16, kDLUInt 8): wrap-around and
# uint8's unsigned comparison, from NumPy and torch.
p = compile_package("small_ints", """
func.func @small(%a: tensor<4xui8>, %b: tensor<4xui8>, %c: tensor<4xi8>, %d: tensor<4xi16>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xi8>, tensor<4xi16>) {
  %0 = kt.add %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = kt.gt %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %2 = kt.neg %c : (tensor<4xi8>) -> tensor<4xi8>
  %3 = kt.add %d, %d : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
  return %0, %1, %2, %3 : tensor<4xui8>, tensor<4xi1>, tensor<4xi8>, tensor<4xi16>
}
""")
ua = np.array([255, 200, 100, 0], np.uint8)
ub = np.array([1, 100, 200, 0], np.uint8)
c8 = np.array([-128, 127, -1, 0], np.int8)
d16 = np.array([32767, -32768, 5, -5], np.int16)
want = [(torch.from_numpy(ua) + torch.from_numpy(ub)).numpy(),
        (torch.from_numpy(ua) > torch.from_numpy(ub)).numpy(),
        (-torch.from_numpy(c8)).numpy(),
        (torch.from_numpy(d16) * 2).numpy()]
for label, args in (("NumPy", (ua, ub, c8, d16)),
                    ("torch", [torch.from_numpy(x) for x in (ua, ub, c8, d16)])):
    got = p.run("small", *args)
    for g, w, what in zip(got, want, ("ui8 add", "ui8 gt", "i8 neg", "i16 add")):
        g = g.numpy() if hasattr(g, "numpy") else np.asarray(g)
        record(g.dtype == w.dtype and np.array_equal(g, w),
               "%s (%s)" % (what, label), "got %r want %r" % (g, w))

# 6. A kg.program: guards with a symbolic dim shared by two arguments, a
# shape relation, an inline graph followed by an outlined one.
p = compile_package("program", """
func.func private @prog_g1(%x: tensor<?x3xf32>) -> tensor<?x3xf32> attributes {kg.graph_function} {
  %0 = kt.tanh %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
kg.program @prog(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  kg.guard_tensor %a {dtype = f32, shape = ["s0", 3]} : tensor<?x3xf32>
  kg.guard_tensor %b {dtype = f32, shape = ["s0", 3]} : tensor<?x3xf32>
  kg.guard_shape_relation "s0 >= 2"
  %s = kg.graph @prog_g0(%a, %b) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32> {
  ^bb0(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>):
    %0 = kt.add %x, %y : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    kg.yield %0 : tensor<?x3xf32>
  }
  %t = kg.graph @prog_g1(%s) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  kg.return %t, %s : tensor<?x3xf32>, tensor<?x3xf32>
}
""")
record(p.signature("prog")["args"] == [("a", "f32", ["s0", 3]), ("b", "f32", ["s0", 3])],
       "program signature: source names and symbolic dims",
       str(p.signature("prog")))
for n in [2, 7]:
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = rng.standard_normal((n, 3)).astype(np.float32)
    t, s = p.run("prog", x, y)
    close(t, np.tanh(x + y), "program result 0, s0=%d" % n, 1e-5)
    close(s, x + y, "program result 1, s0=%d" % n)
x3 = np.zeros((3, 3), np.float32)
expect_error(lambda: p.run("prog", x3, np.zeros((4, 3), np.float32)),
             "@prog: argument 'b' (#1) has size 4 in dim 0, which is s0, and s0 is 3 (argument 'a' dim 0)",
             "symbolic dim mismatch names the argument")
expect_error(lambda: p.run("prog", np.zeros((1, 3), np.float32), np.zeros((1, 3), np.float32)),
             "@prog: shape relation 's0 >= 2' does not hold (s0 = 1, 2 = 2)",
             "failed shape relation")

# 7. A run-time error of the compiled code: the formatted message with the
# op's location, from the manifest's templates.
p = compile_package("oob", """
func.func @gather(%x: tensor<3x4xf32>, %i: tensor<2x2xi64>) -> tensor<2x2xf32> {
  %0 = kt.gather %x, %i {dim = 1} : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<2x2xf32> loc("model.py":12:7)
  return %0 : tensor<2x2xf32>
}
""")
xg = rng.standard_normal((3, 4)).astype(np.float32)
good = np.array([[0, 3], [2, 1]], np.int64)
r, = p.run("gather", xg, good)
close(r, np.take_along_axis(xg[:2], good, axis=1), "gather in range")
expect_error(lambda: p.run("gather", xg, np.array([[0, 9], [1, 1]], np.int64)),
             "model.py:12:7: index 9 is out of bounds for dim 1 with size 4",
             "run-time error (index out of range) with its location")
r, = p.run("gather", xg, good)
close(r, np.take_along_axis(xg[:2], good, axis=1), "calls after a run-time error work")

# A failed allocation in compiled code (2^48 bytes: more than the address
# space) is an error naming the op that needed the buffer (its location,
# from the manifest's templates) and the buffer, and the package stays
# usable.
p = compile_package("alloc", """
func.func @huge(%a: tensor<4xf32>) -> tensor<70368744177664xf32> {
  %r = kt.expand %a {size = [17592186044416, 4]} : (tensor<4xf32>) -> tensor<17592186044416x4xf32>
  %f = kt.reshape %r {shape = [70368744177664]} : (tensor<17592186044416x4xf32>) -> tensor<70368744177664xf32>
  return %f : tensor<70368744177664xf32>
}
func.func @small(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
""", "--entry=huge,small")
v = np.arange(4, dtype=np.float32)
expect_error(lambda: p.run("huge", v), ":3:8: cannot allocate 281474976710720 bytes (256.0 TiB) for tensor<17592186044416x4xf32> in compiled code: out of memory",
             "a failed allocation in compiled code")
r, = p.run("small", v)
close(r, v + v, "calls after a failed allocation work")

# 8. Bad arguments.
p = kiln_rt.Package(os.path.join(work, "pointwise.so"))
expect_error(lambda: p.run("f", np.zeros((2, 4), np.float32)),
             "@f: expected 2 arguments, got 1", "argument count")
expect_error(lambda: p.run("f", np.zeros((2, 4), np.float64), b),
             "@f: argument 'arg0' (#0) has dtype float64, expected f32", "dtype")
expect_error(lambda: p.run("f", np.zeros((2, 4, 1), np.float32), b),
             "@f: argument 'arg0' (#0) has rank 3 (shape [2, 4, 1]), expected rank 2 (shape [?, 4])",
             "rank")
expect_error(lambda: p.run("f", np.zeros((2, 5), np.float32), b),
             "@f: argument 'arg0' (#0) has shape [2, 5], expected [?, 4] (size 5 in dim 1, expected 4)",
             "static dim")
expect_error(lambda: p.run("nope", b), "has no entry 'nope' (entries: f)", "unknown entry")
# A CUDA tensor (the device field; no GPU needed to build the descriptor).
L = kiln_rt.load_library()
shape = (ctypes.c_int64 * 2)(2, 4)
dl = kiln_rt.DLTensor()
dl.data = 4096
dl.device = kiln_rt.DLDevice(2, 0)
dl.ndim = 2
dl.dtype = kiln_rt.DLDataType(2, 32, 1)
dl.shape = shape
args = (ctypes.POINTER(kiln_rt.DLTensor) * 2)(ctypes.pointer(dl), ctypes.pointer(dl))
record(L.kiln_rt_check_args(p._h, 0, args, 2) != 0 and
       b"CUDA tensor (kDLCUDA): this is a CPU package (compile it with kiln-compile --backend=nvptx for the GPU)"
       in L.kiln_rt_last_error(), "a kDLCUDA argument is refused", L.kiln_rt_last_error())
record(L.kiln_rt_check_args(p._h, 5, args, 2) != 0 and
       b"entry index 5 is out of range" in L.kiln_rt_last_error(), "entry index out of range")

# 9. Bad package files.
good_file = os.path.join(work, "pointwise.so")
with open(good_file, "rb") as f:
    blob = f.read()


def bad_file(name, data):
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


expect_error(lambda: kiln_rt.Package(os.path.join(work, "missing.so")),
             "cannot open package", "missing file")
expect_error(lambda: kiln_rt.Package(bad_file("text.so", b"hello, world\n" * 10)),
             "is not a Kiln package: not an ELF file", "not an ELF file")
expect_error(lambda: kiln_rt.Package(bad_file("tiny.so", blob[:40])),
             "is not a Kiln package: truncated ELF header", "truncated header")
for cut in [200, len(blob) // 2, len(blob) - 100]:
    expect_error(lambda: kiln_rt.Package(bad_file("cut%d.so" % cut, blob[:cut])),
                 "is not a Kiln package", "truncated at %d of %d bytes" % (cut, len(blob)))
expect_error(lambda: kiln_rt.Package(libkiln_rt),
             "is not a Kiln package: no .kiln_manifest section", "a plain .so without a manifest")
assert blob.count(b'"format_version": 1,') == 1
expect_error(lambda: kiln_rt.Package(bad_file("v9.so", blob.replace(b'"format_version": 1,', b'"format_version": 9,'))),
             "it has package format version 9, and this libkiln_rt reads version 1",
             "wrong format version")
expect_error(lambda: kiln_rt.Package(bad_file("badjson.so", blob.replace(b'"format": "kiln-package"', b'"format"; "kiln-package"'))),
             "its manifest is not valid JSON", "corrupt manifest")
expect_error(lambda: kiln_rt.Package(bad_file("gpu.so", blob.replace(b'"device": "cpu"', b'"device": "gpu"'))),
             "it is for device 'gpu'; this libkiln_rt runs cpu and cuda packages", "a package for another device")

# A needed library that cannot be found names itself and what it is for;
# KILN_RT_LIBRARY_PATH is searched first. (The package's libomp renamed in
# its manifest: "libomq.so.5", with no such file where it was made.)
omp = [l for l in kiln_rt.Package(good_file).manifest["needed_libraries"]
       if l["name"] == "libomp.so.5"]
assert omp and b"libomq" not in blob
renamed = bad_file("omq.so", blob.replace(b"libomp.so.5", b"libomq.so.5"))
expect_error(lambda: kiln_rt.Package(renamed),
             "needs libomq.so.5 (OpenMP threads of the compiled code), which cannot be "
             "loaded", "a missing needed library")
libdir = os.path.join(work, "libs")
os.makedirs(libdir)
shutil.copy(omp[0]["path"], os.path.join(libdir, "libomq.so.5"))
os.environ["KILN_RT_LIBRARY_PATH"] = "/nonexistent:" + libdir
q = kiln_rt.Package(renamed)
a = rng.standard_normal((3, 4)).astype(np.float32)
r, = q.run("f", a, b)
close(r, np.exp(a) * b - a, "needed library found through KILN_RT_LIBRARY_PATH")
del os.environ["KILN_RT_LIBRARY_PATH"]

print("FAILED" if failures else "PASSED")
sys.exit(1 if failures else 0)
