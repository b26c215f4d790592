#!/usr/bin/python3
"""Counts the copies a compiled training step's forward makes of its
arguments (tr25, issue 12 section 4): compiles one training step of each
model with the `cpu` backend, runs the pair's module (`Pair.text`: @P_g_fwd,
@P_g_bwd and their kg.programs) through the same pipeline with kiln-opt,
and counts `bufferization.clone` ops and their bytes in the forward function
`@..._g_fwd` after kiln-cpu's deallocation stage (the bufferized function;
each clone is a malloc + copy per step), with the saved-argument count and bytes.

    KILN_BUILD_DIR=build PYTHONPATH=python /usr/bin/python3 \
        bench/saved_args_clones.py [--only resnet18,densenet121,mlp]

Run it with another build and python/ (e.g. main's) for the before column:
the count comes from that checkout's kiln-opt and package.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import warnings

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))

import kiln  # noqa: E402
from kiln import _compile  # noqa: E402


def models(only):
    import torchvision
    from models import seeded_batchnorm
    out = {}
    if "mlp" in only:
        torch.manual_seed(0)
        out["mlp"] = (nn.Sequential(nn.Linear(256, 512), nn.ReLU(),
                                    nn.Linear(512, 10)),
                      torch.randn(32, 256))
    for name in ("resnet18", "resnet50", "densenet121"):
        if name in only:
            torch.manual_seed(0)
            m = seeded_batchnorm(getattr(torchvision.models, name)(
                weights=None), 0)
            out[name] = (m, torch.randn(2, 3, 64, 64))
    return out


def fwd_body(text):
    m = re.search(r"func\.func @\w+_g_fwd\(.*?\n(.*?)\n  \}", text, re.S)
    return m.group(1) if m else ""


def type_bytes(t):
    m = re.match(r"memref<([0-9x]+)x(f32|f64|f16|bf16|i64|i32|i8|i1)", t)
    if not m:
        return 0
    n = 1
    for d in m.group(1).split("x"):
        n *= int(d)
    return n * {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i64": 8, "i32": 4,
                "i8": 1, "i1": 1}[m.group(2)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="mlp,resnet18,densenet121")
    args = ap.parse_args()
    build = os.environ.get("KILN_BUILD_DIR", "build")
    opt = os.path.join(build, "bin", "kiln-opt")
    pipeline = _compile._BACKENDS["cpu"][1]
    print("load:", open("/proc/loadavg").read().split()[:3])
    print("%-12s %8s %10s %8s %12s" % ("model", "passed", "passed MB",
                                       "clones", "clone MB"))
    for name, (model, x) in models(args.only.split(",")).items():
        model.train()
        c = kiln.compile(model, backend="cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c(x).pow(2).mean().backward()
        pairs = [p for prog in c._kiln.programs.values()
                 for p in getattr(prog, "training_pairs", {}).values()]
        clones = clone_bytes = passed = passed_bytes = 0
        for pair in pairs:
            sp = getattr(pair, "saved_primals", [])
            passed += len(sp)
            args_ = [a for a in pair.capture.args]
            with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
                # kiln-cpu compiles the graph functions (the session runs
                # the kg.programs as host code).
                f.write(re.sub(r"\n  kg\.program .*?\n  \} loc\([^\n]*",
                               "", pair.text, flags=re.S))
                f.flush()
                # The bufferized functions, after kiln-cpu's deallocation
                # stage (before the LLVM lowering).
                out = subprocess.run(
                    [opt, f.name, "--pass-pipeline=builtin.module(%s)"
                     % pipeline, "-o", "/dev/null",
                     "-mlir-print-ir-after=kiln-cpu-early-dealloc",
                     "-mlir-print-debuginfo=false"],
                    capture_output=True, text=True)
            if out.returncode:
                print(name, "kiln-opt failed:", out.stderr[-2000:])
                continue
            body = fwd_body(out.stderr)
            for line in body.split("\n"):
                if "bufferization.clone" in line:
                    clones += 1
                    clone_bytes += type_bytes(line.rsplit(" to ", 1)[-1]
                                              .strip())
            ptypes = re.search(r"kg\.program @\w+_fwd\((.*?)\) ->",
                               pair.text).group(1)
            types = re.findall(r"tensor<[^>]*>", ptypes)
            assert len(types) == len(args_), (types, args_)
            passed_bytes += sum(type_bytes("memref<" + t[7:])
                                for j, t in enumerate(types) if j in sp)
        print("%-12s %8d %10.1f %8d %12.1f" % (
            name, passed, passed_bytes / 1e6, clones, clone_bytes / 1e6))


if __name__ == "__main__":
    main()
