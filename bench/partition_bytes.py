#!/usr/bin/env python3
"""Saved-activation bytes of kiln-partition vs functorch's partitioners.

For each graph (test/lib/partition_graphs.py, the sizes of issue 4 section 6):
MLP 256x1024 -> 4096 -> 1024 with relu, the same with gelu, an attention
block (seq 512, d_model 512, 8 heads, q/k/v/o projections; once with
kt.scaled_dot_product_attention, once with explicit matmul/softmax ops),
layer_norm + residual on 8192x1024, conv-bn-relu (batch 8, 64 channels,
56x56, 3x3 conv, training-mode batch norm), in f32:

* Kiln: `kiln-opt -kiln-autodiff -kiln-partition{policy=... print-report}`
  under save-all, recompute-all, mincut and mincut with memory-budget=0.5;
  the saved bytes come from the report table.
* functorch (Debian's PyTorch 1.13): the same model as a torch function
  through `functorch.compile.aot_function` with
  `min_cut_rematerialization_partition` and `default_partition`; the saved
  bytes are the forward graph's outputs beyond the real output, numel x
  element size from the node's tensor_meta, in the same script.

Both count primals that are saved (AOTAutograd's saved_values include them);
the second table leaves them out. functorch counts a saved view of a primal
(e.g. `t(weight)`) as an activation of its full size, as Kiln counts a saved
`kt.transpose` result.

    python3 bench/partition_bytes.py [--build-dir build]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "lib"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import partition_graphs as pg  # noqa: E402

KILN_POLICIES = [("save-all", "policy=save-all"),
                 ("recompute-all", "policy=recompute-all"),
                 ("mincut", "policy=mincut"),
                 ("mincut b=0.5", "policy=mincut memory-budget=0.5")]


def kiln(kiln_opt, g, options):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(g.mlir)
        path = f.name
    try:
        proc = subprocess.run(
            [kiln_opt, path, "-kiln-autodiff",
             "-kiln-partition=%s print-report" % options, "-o", os.devnull],
            capture_output=True, text=True)
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        sys.exit("kiln-opt failed on %s:\n%s" % (g.name, proc.stderr))
    row = [l.split() for l in proc.stderr.splitlines()
           if l.startswith(g.name + "_joint")][0]
    return {"n": int(row[3]), "primals": int(row[4]), "bytes": int(row[5]),
            "act": int(row[6]), "recomputed": int(row[7])}


def functorch_bytes(g, partition_fn):
    from functorch.compile import aot_function, make_boxed_func
    info = {}

    def fw_compiler(gm, _inputs):
        out = [n for n in gm.graph.nodes if n.op == "output"][0]
        saved = list(out.args[0])[1:]  # the model has one output
        total = act = 0
        for n in saved:
            tm = n.meta.get("tensor_meta")
            if tm is None:
                continue
            b = tm.shape.numel() * torch.empty((), dtype=tm.dtype).element_size()
            total += b
            if n.op != "placeholder":
                act += b
        info.update(n=len(saved), bytes=total, act=act)
        return make_boxed_func(gm.forward)

    def bw_compiler(gm, _inputs):
        return make_boxed_func(gm.forward)

    f = aot_function(g.torch_fn, fw_compiler=fw_compiler,
                     bw_compiler=bw_compiler, partition_fn=partition_fn)
    rng = np.random.default_rng(0)
    xs = [torch.tensor(x, requires_grad=True) for x in g.inputs(rng, 0.1)]
    f(*xs)  # the first call traces, partitions and compiles
    return info


def mib(b):
    return "%.2f" % (b / 2**20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default=os.path.join(HERE, "..", "build"))
    args = ap.parse_args()
    kiln_opt = os.path.join(args.build_dir, "bin", "kiln-opt")
    from functorch.compile import (default_partition,
                                   min_cut_rematerialization_partition)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)

    graphs = [pg.mlp(), pg.gelu_mlp(), pg.attention(),
              pg.attention(explicit=True), pg.layer_norm_residual(),
              pg.conv_bn_relu()]
    rows = []
    for g in graphs:
        k = {label: kiln(kiln_opt, g, opts) for label, opts in KILN_POLICIES}
        ft_min = functorch_bytes(g, min_cut_rematerialization_partition)
        ft_def = functorch_bytes(g, default_partition)
        rows.append((g, k, ft_def, ft_min))

    cols = ["graph"] + ["kiln " + l for l, _ in KILN_POLICIES] + \
        ["ft default", "ft mincut", "kiln/ft mincut"]
    for title, key in [("saved bytes, MiB (primals included)", "bytes"),
                       ("saved activation bytes, MiB (primals excluded)", "act")]:
        print("\n" + title)
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for g, k, ft_def, ft_min in rows:
            ratio = (k["mincut"][key] / ft_min[key]) if ft_min[key] else float("nan")
            cells = [g.name] + [mib(k[l][key]) for l, _ in KILN_POLICIES] + \
                [mib(ft_def[key]), mib(ft_min[key]), "%.3f" % ratio]
            print("| " + " | ".join(cells) + " |")
    print("\nsaved values (count) / ops recomputed by Kiln")
    print("| graph | " + " | ".join("kiln " + l for l, _ in KILN_POLICIES) +
          " | ft default | ft mincut |")
    print("|" + "---|" * (3 + len(KILN_POLICIES)))
    for g, k, ft_def, ft_min in rows:
        print("| %s | %s | %d | %d |" % (
            g.name, " | ".join("%d / %d" % (k[l]["n"], k[l]["recomputed"])
                               for l, _ in KILN_POLICIES),
            ft_def["n"], ft_min["n"]))
    worse = [g.name for g, k, _, ft_min in rows
             if k["mincut"]["bytes"] > ft_min["bytes"]]
    print("\nkiln mincut <= functorch mincut on every graph: %s"
          % ("yes" if not worse else "no (" + ", ".join(worse) + ")"))


if __name__ == "__main__":
    main()
