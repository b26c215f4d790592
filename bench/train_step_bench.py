#!/usr/bin/python3
"""Compile cost of a training step (issue 13, section 1): a torchvision
resnet18 in train mode (BatchNorm with batch statistics), batch 8, 3x64x64,
through kiln.compile(backend="cpu"): the cold compile + first run of one
forward and backward, and the kt ops of the joint program after
kiln-autodiff (counted per op name with kiln-opt on the graph that
kiln/_training.py hands to kiln-autodiff + kiln-partition).

    /usr/bin/python3 bench/train_step_bench.py [--model resnet18|proxy]
        [--batch 8] [--size 64] [--top 12] [--steps 0]

`--steps N` then times N more training steps (forward + backward, the
compiled code warm) against the same steps in eager PyTorch, both on
torch's thread count (2 unless OMP_NUM_THREADS says otherwise), rounds
interleaved; median and min of each. `KILN_LOGS=perf,codegen` adds the
per-graph compile phases and kernel counts.

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
    ap.add_argument("--steps", type=int, default=0)
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
        t0, c0 = time.time(), time.process_time()
        out = compiled(x)
        t1, c1 = time.time(), time.process_time()
        (out * out).mean().backward()
        t2, c2 = time.time(), time.process_time()
    # CPU seconds of the process (all threads) too: on the shared machine
    # they vary less with the load than the wall time.
    print("%s batch %d %dx%d: forward call (capture, autodiff, partition, "
          "compile fwd, run) %.1f s (cpu %.1f s), backward call (compile "
          "bwd, run) %.1f s (cpu %.1f s), total %.1f s (cpu %.1f s)" % (
              args.model, args.batch, args.size, args.size, t1 - t0,
              c1 - c0, t2 - t1, c2 - c1, t2 - t0, c2 - c0))
    if args.steps:
        eager = model_of(args.model)
        times = {"kiln": [], "eager": []}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(args.steps):
                for name, m in (("kiln", compiled), ("eager", eager)):
                    t0 = time.time()
                    out = m(x)
                    (out * out).mean().backward()
                    times[name].append(time.time() - t0)
        med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        print("step (forward + backward), %d rounds, %d threads: kiln median "
              "%.1f ms (min %.1f), eager median %.1f ms (min %.1f): "
              "kiln/eager speedup %.2fx" % (
                  args.steps, torch.get_num_threads(), med["kiln"] * 1e3,
                  min(times["kiln"]) * 1e3, med["eager"] * 1e3,
                  min(times["eager"]) * 1e3, med["eager"] / med["kiln"]))
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
