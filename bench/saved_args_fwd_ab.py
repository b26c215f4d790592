#!/usr/bin/python3
"""A/B of one training forward program with and without
kiln-partition{pass-primals} (tr25), in one build: captures the training
function `@P_train_g` a model's first compiled training step gives
kiln-autodiff + kiln-partition, partitions it both ways with kiln-opt
(`pass-primals` on: saved arguments are not results; off: each is returned,
a copy per call), and times `@P_train_g_fwd` of each with
`kiln-run --backend=cpu --random-inputs --repeat=N`, alternating the two
variants for --rounds rounds. Prints kiln-run's median/min per call and the
load.

    KILN_BUILD_DIR=build PYTHONPATH=python /usr/bin/python3 \
        bench/saved_args_fwd_ab.py [--model resnet50] [--batch 8]
        [--image 224] [--rounds 2] [--repeat 5]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))

import torch  # noqa: E402
import kiln  # noqa: E402
from kiln import _capi, _compile  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    build = os.environ.get("KILN_BUILD_DIR", "build")
    import torchvision
    from models import seeded_batchnorm
    torch.manual_seed(0)
    model = seeded_batchnorm(getattr(torchvision.models, args.model)(
        weights=None), 0).train()
    captured = []
    transform = _capi.Session.transform

    def spy(self, text, pipeline, *a, **k):
        if "kiln-partition" in pipeline:
            captured.append(text)
        return transform(self, text, pipeline, *a, **k)

    _capi.Session.transform = spy
    x = torch.randn(args.batch, 3, args.image, args.image)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kiln.compile(model, backend="cpu")(x).pow(2).mean().backward()
    _capi.Session.transform = transform
    src = captured[0]
    name = re.search(r"func\.func @(\w+)_g\(", src).group(1) + "_g_fwd"
    tmp = tempfile.mkdtemp(prefix="kiln_fwd_ab_")
    files = {}
    for variant, opt in (("copies", ""), ("pass-primals", "pass-primals")):
        inp = os.path.join(tmp, "g.mlir")
        open(inp, "w").write(src)
        out = os.path.join(tmp, variant + ".mlir")
        # The cpu backend's host pipeline before kiln-cpu (which kiln-run
        # --backend=cpu runs): decomposition as the Python path has it.
        host = _compile._BACKENDS["cpu"][1].rsplit(",kiln-cpu", 1)[0]
        subprocess.run([os.path.join(build, "bin", "kiln-opt"), inp,
                        "--pass-pipeline=builtin.module(kiln-autodiff,"
                        "kiln-partition{%s},%s)" % (opt, host),
                        "-o", out], check=True)
        files[variant] = out
    print("model %s batch %d image %d, @%s" % (args.model, args.batch,
                                               args.image, name))
    for r in range(args.rounds):
        for variant, f in files.items():
            load = open("/proc/loadavg").read().split()[:3]
            p = subprocess.run(
                [os.path.join(build, "bin", "kiln-run"), f, "--entry=" + name,
                 "--backend=cpu", "--random-inputs", "--cache-dir=off",
                 "--repeat=%d" % args.repeat,
                 "--cpu-threads=%d" % args.threads],
                capture_output=True, text=True)
            times = [l for l in (p.stdout + p.stderr).split("\n")
                     if "median" in l or "min" in l]
            print("round %d %-13s load %s: %s" % (
                r, variant, " ".join(load),
                " | ".join(times) if times else p.stderr[-500:]), flush=True)


if __name__ == "__main__":
    main()
