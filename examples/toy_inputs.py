"""Writes inputs for examples/toy_example.mlir into a folder (default: toy-inputs/):
a<n>.npy (random), bpos<n>.npy (b.sum() > 0: the else branch) and bneg<n>.npy
(b.sum() < 0: the b * -1 branch) for n = 10, 20, 30.

    /usr/bin/python3 examples/toy_inputs.py toy-inputs
    build/bin/kiln-run examples/toy_example.mlir --print --stats \\
        --call=toy-inputs/a10.npy,toy-inputs/bpos10.npy \\
        --call=toy-inputs/a10.npy,toy-inputs/bneg10.npy \\
        --call=toy-inputs/a20.npy,toy-inputs/bneg20.npy \\
        --call=toy-inputs/a30.npy,toy-inputs/bpos30.npy
"""

import os
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "toy-inputs"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
for n in (10, 20, 30):
    np.save(os.path.join(out, "a%d.npy" % n), rng.standard_normal(n).astype(np.float32))
    b = np.abs(rng.standard_normal(n)).astype(np.float32) + 0.1
    np.save(os.path.join(out, "bpos%d.npy" % n), b)
    np.save(os.path.join(out, "bneg%d.npy" % n), -b)
print("wrote inputs for n = 10, 20, 30 to", out)
