#!/usr/bin/python3
"""Compile cost of a training step (issue 13, section 1): a torchvision
resnet18 in train mode (BatchNorm with batch statistics), batch 8, 3x64x64,
through kiln.compile(backend="cpu"): the cold compile + first run of one
forward and backward, and the kt ops of the joint program after
kiln-autodiff (counted per op name with kiln-opt on the graph that
kiln/_training.py hands to kiln-autodiff + kiln-partition).

    /usr/bin/python3 bench/train_step_bench.py [--model resnet18|proxy]
        [--batch 8] [--size 64] [--top 12]

`proxy` is resnet18's stem (conv, bn, relu, max pool) and its first two
basic blocks. The disk cache is off (KILN_CACHE_DIR=off), so every run is
cold. The machine is shared: the load (/proc/loadavg) is printed first.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("KILN_CACHE_DIR", "off")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torchvision  # noqa: E402

import kiln  # noqa: E402
from kiln import _capi  # noqa: E402


def model_of(name):
    torch.manual_seed(0)
    m = torchvision.models.resnet18(weights=None)
    if name == "proxy":
        m = nn.Sequential(m.conv1, m.bn1, m.relu, m.maxpool, m.layer1)
    return m.train()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet18",
                    choices=["resnet18", "proxy"])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    print("load: %s" % open("/proc/loadavg").read().strip())
    print("library: %s" % _capi.library_path())

    joints = []
    orig = _capi.Session.transform

    def transform(self, text, pipeline):
        if "kiln-autodiff" in pipeline:
            joints.append(text)
        return orig(self, text, pipeline)

    _capi.Session.transform = transform
    model = model_of(args.model)
    compiled = kiln.compile(model, backend="cpu")
    x = torch.randn(args.batch, 3, args.size, args.size,
                    generator=torch.Generator().manual_seed(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.time()
        out = compiled(x)
        t1 = time.time()
        (out * out).mean().backward()
        t2 = time.time()
    print("%s batch %d %dx%d: forward call (capture, autodiff, partition, "
          "compile fwd, run) %.1f s, backward call (compile bwd, run) "
          "%.1f s, total %.1f s" % (args.model, args.batch, args.size,
                                     args.size, t1 - t0, t2 - t1, t2 - t0))
    opt = os.path.join(BUILD, "bin", "kiln-opt")
    for i, text in enumerate(joints):
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write(text)
            f.flush()
            r = subprocess.run([opt, f.name, "-kiln-autodiff"],
                               capture_output=True, text=True)
        if r.returncode:
            print(r.stderr)
            continue
        # Only the joint function (the module also holds the original).
        joint = [f for f in r.stdout.split("func.func @")[1:]
                 if f.split("(", 1)[0].endswith("_joint")]
        ops = collections.Counter(
            re.findall(r"^\s*(?:%[^=]*=\s*)?(kt\.[a-z_0-9]+)",
                       "".join(joint), re.M))
        print("joint %d after kiln-autodiff: %d kt ops; top: %s" % (
            i, sum(ops.values()),
            ", ".join("%s %d" % (k[3:], v)
                      for k, v in ops.most_common(args.top))))
    print("load: %s" % open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
