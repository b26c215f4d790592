# RUN: %python %s
# REQUIRES: numpy
# UNSUPPORTED: sanitizer
# A program without products runs on the CPU backend under a small
# `ulimit -v`: OpenBLAS is loaded only by compiles whose code calls it
# (docs/codegen.md, "OpenBLAS"). Loading it starts its worker threads,
# whose buffers it maps at start; under `ulimit -v 400000` a worker retried
# its failing mmap forever and kiln-run hung at exit joining it (before the
# fix: a time-out here). OpenBLAS's thread count is forced to 4 (lit sets
# OMP_NUM_THREADS=1, with which OpenBLAS starts no worker). The results are
# compared with NumPy. (ASan's shadow memory needs more address space than
# the limit: unsupported under the sanitizers.)
import os, resource, subprocess, sys, tempfile
import numpy as np

KILN_RUN = os.environ.get("KILN_RUN_UNDER_TEST") or os.path.join(os.environ["KILN_TOOLS_DIR"], "kiln-run")
PROGRAM = """func.func @f(%a: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<32xf32>) {
  %e = kt.exp %a : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %s = kt.softmax %a {dim = 1} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %m = kt.mul %e, %s : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %r = kt.sum %m {dim = [0], keepdim = false} : (tensor<64x32xf32>) -> tensor<32xf32>
  return %s, %r : tensor<64x32xf32>, tensor<32xf32>
}
"""
failed = 0
tmp = tempfile.mkdtemp(prefix="kiln-ulimit-")
path = os.path.join(tmp, "f.mlir")
with open(path, "w") as f:
    f.write(PROGRAM)
a = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
np.save(os.path.join(tmp, "a.npy"), a)
x = np.exp(a - a.max(axis=1, keepdims=True))
soft = x / x.sum(axis=1, keepdims=True)
want = [soft, (np.exp(a) * soft).sum(axis=0)]
env = dict(os.environ, OPENBLAS_NUM_THREADS="4", OMP_NUM_THREADS="4")
for kb in (400000, 500000):
    out = os.path.join(tmp, "out%d" % kb)
    limit = kb * 1024
    try:
        proc = subprocess.run(
            [KILN_RUN, path, "--entry=f", "--backend=cpu", "--cpu-threads=1",
             "--input=" + os.path.join(tmp, "a.npy"), "--output-dir=" + out],
            env=env, capture_output=True, text=True, timeout=60,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                  (limit, limit)))
    except subprocess.TimeoutExpired:
        print("FAIL ulimit -v %d: kiln-run hung (60 s)" % kb)
        failed += 1
        continue
    if proc.returncode != 0:
        print("FAIL ulimit -v %d: exit %d: %s" % (kb, proc.returncode,
                                                  proc.stderr.strip()))
        failed += 1
        continue
    for i, w in enumerate(want):
        got = np.load(os.path.join(out, "result%d.npy" % i))
        if got.shape != w.shape or not np.allclose(got, w, rtol=1e-5, atol=1e-6):
            print("FAIL ulimit -v %d: result %d differs from NumPy" % (kb, i))
            failed += 1
    print("ulimit -v %d: ok" % kb)
sys.exit(1 if failed else 0)
