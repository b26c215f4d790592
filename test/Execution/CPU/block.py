# RUN: %python %s
# RUN: env KILN_CPU_CODEGEN_THREADS=3 %python %s
# REQUIRES: numpy
# examples/block.mlir (a pre-norm transformer block: layer_norm, linear,
# causal scaled_dot_product_attention, gelu) on the CPU backend vs the
# interpreter. The second run generates the machine code on 3 threads
# (ParallelCodegen.h: the module split in 3, linked by one JIT).
import os, re, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
from cpu_compare import CPUSuite

s = CPUSuite(__file__)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                    "examples", "block.mlir")
mlir = open(path).read()
sig = re.search(r"func.func @block\((.*?)\) ->", mlir, re.S).group(1)
shapes = [tuple(int(d) for d in m.split("x")) for m in re.findall(r"tensor<([0-9x]+)xf32>", sig)]
for seed in range(3):
    ins = [s.randn(*sh) for sh in shapes]
    s.check("block seed %d" % seed, mlir, ins, entry="block", elems=["f32"])
s.finish()
