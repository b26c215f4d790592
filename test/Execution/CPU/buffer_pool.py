# RUN: %python %s
# REQUIRES: numpy
# Repeated CPU calls reuse large blocks from the buffer pool
# (docs/codegen.md): results, several large temporaries, two results from
# one call and a result that is a view of a temporary must stay right on
# every call, in one process (kiln-run --repeat) and with the pool off.
import os
import numpy as np
from kiln_testing import KilnRunError, close, run

rng = np.random.default_rng(5)
x = rng.standard_normal((512, 1024)).astype(np.float32)
y = rng.standard_normal((512, 1024)).astype(np.float32)
T = "tensor<512x1024xf32>"
mlir = """func.func @main(%x: {T}, %y: {T}) -> ({T}, tensor<1024x512xf32>, tensor<512xf32>) {{
  %a = kt.mul %x, %y : ({T}, {T}) -> {T}
  %e = kt.exp %a : ({T}) -> {T}
  %s = kt.softmax %e {{dim = -1}} : ({T}) -> {T}
  %m = kt.matmul %s, %y {{}} : ({T}, {T}) -> {T}
  %t = kt.transpose %a {{dim0 = 0, dim1 = 1}} : ({T}) -> tensor<1024x512xf32>
  %r = kt.sum %e {{dim = [1]}} : ({T}) -> tensor<512xf32>
  return %s, %t, %r : {T}, tensor<1024x512xf32>, tensor<512xf32>
}}""".replace("  %m = kt.matmul %s, %y {{}} : ({T}, {T}) -> {T}\n", "").format(T=T)
xd, yd = x.astype(np.float64), y.astype(np.float64)
a = xd * yd
e = np.exp(a)
z = np.exp(e - e.max(-1, keepdims=True))
want = [z / z.sum(-1, keepdims=True), a.T, e.sum(1)]
failed = 0
for label, env in [("pool", None), ("pool off", "0"), ("tiny pool", str(5 << 20))]:
    if env is None:
        os.environ.pop("KILN_CPU_POOL_BYTES", None)
    else:
        os.environ["KILN_CPU_POOL_BYTES"] = env
    for extra in [("--repeat=5",), ("--repeat=3", "--cpu-threads=1")]:
        try:
            got = run(mlir, [x, y], extra_args=("--backend=cpu",) + extra)
        except KilnRunError as err:
            print("FAIL %s %s: %s" % (label, extra, str(err)[:300]))
            failed += 1
            continue
        for i, (g, w) in enumerate(zip(got, want)):
            if g.shape != w.shape or not close(g, w, 1e-4, 1e-4)[0]:
                print("FAIL %s %s result %d" % (label, extra, i))
                failed += 1
print("buffer_pool.py: %d failed" % failed)
raise SystemExit(1 if failed else 0)
