"""torchvision's model zoo through kiln.compile, against eager PyTorch.

Not a pytest file (minutes per model family on 2 cores): run it by hand
after changes to the importer, the decompositions or the CPU backend, and
put its table in the note (docs/python.md, "The torchvision zoo").

  KILN_BUILD_DIR=build PYTHONPATH=python:test/python \\
    python3 test/python/zoo_sweep.py [--train] [--backend cpu] \\
    [--only resnet18,vit_b_16] [--size 96]

Every model is built with `weights=None`, seeded values, random
BatchNorm statistics (models.seeded_batchnorm) and random values in
zero-initialized layers (ViT's head would make the output 0); inference compares the
output (eval mode, no_grad); `--train` runs one step in train mode
(forward, `out.sum().backward()`; dropout and stochastic depth off) and
checks the output and every parameter's gradient by the `same()` rule:
Kiln's error against a float64 copy at most 10x eager float32's (a
gradient that is 0 in exact arithmetic, a BatchNorm bias before another
BatchNorm, is noise on both sides). Inference errors are relative to the
largest magnitude of the reference. A model that fails prints its exception; the exit status is the
number of failures."""

import argparse
import sys
import time
import traceback
import warnings

import torch

import kiln
from models import seeded_batchnorm, seeded_zero_layers

# One or two of each family, small enough for 2 cores.
DEFAULT = ("alexnet squeezenet1_1 vgg11_bn resnet18 resnext50_32x4d "
           "wide_resnet50_2 densenet121 googlenet inception_v3 "
           "shufflenet_v2_x0_5 mobilenet_v2 mobilenet_v3_small mnasnet0_5 "
           "efficientnet_b0 efficientnet_v2_s regnet_x_400mf regnet_y_400mf "
           "convnext_tiny swin_t vit_b_32 maxvit_t "
           "segmentation.fcn_resnet50 segmentation.lraspp_mobilenet_v3_large "
           "segmentation.deeplabv3_mobilenet_v3_large video.r3d_18").split()

# Models whose input size is fixed by their architecture.
FIXED_SIZE = {"vit_b_32": 224, "vit_b_16": 224, "maxvit_t": 224,
              "inception_v3": 299}


def build(name):
    import torchvision.models as tvm
    ns = tvm
    short = name
    if "." in name:
        sub, short = name.split(".")
        ns = getattr(tvm, sub)
    kw = {"weights": None}
    if short in ("inception_v3", "googlenet"):
        kw.update(aux_logits=False, init_weights=True)
    if name.startswith("segmentation."):
        kw.update(weights_backbone=None, num_classes=5)
    torch.manual_seed(0)
    return seeded_zero_layers(seeded_batchnorm(getattr(ns, short)(**kw))
                              .eval())


def example(name, size):
    size = FIXED_SIZE.get(name, size)
    if name.startswith("video."):
        return torch.randn(1, 3, 8, 64, 64)
    return torch.randn(2, 3, size, size)


def _main_output(out):
    return out["out"] if isinstance(out, dict) else out


def rel_err(a, b):
    return (a - b).abs().max().item() / (b.abs().max().item() + 1e-30)


def no_randomness(m):
    """Dropout and stochastic depth off (their masks are random draws that
    Kiln's Philox stream and eager's do not share)."""
    for mod in m.modules():
        if isinstance(mod, torch.nn.modules.dropout._DropoutNd) or \
                type(mod).__name__ == "StochasticDepth":
            mod.p = 0.0


def same(got, ref32, ref64, slack=10.0):
    """The `same()` rule of PyTorch's benchmarks: Kiln's error against the
    float64 reference at most `slack` times eager float32's (plus a floor
    for values that are exactly representable); returns (ok, the ratio)."""
    e_kiln = (got.double() - ref64).abs().max().item()
    e_eager = (ref32.double() - ref64).abs().max().item()
    floor = 1e-6 * (ref64.abs().max().item() + 1e-30)
    return e_kiln <= slack * e_eager + floor, e_kiln / max(e_eager, floor)


def check(name, backend, train, size):
    m = build(name)
    x = example(name, size)
    ref_m = build(name)
    ref_m.load_state_dict(m.state_dict())
    if train:
        for mod in (m, ref_m):
            no_randomness(mod)
        ref64 = build(name)
        ref64.load_state_dict(m.state_dict())
        no_randomness(ref64)
        ref64 = ref64.double()
    c = kiln.compile(m, backend=backend)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t0 = time.time()
        if train:
            m.train()
            ref_m.train()
            ref64.train()
            out = _main_output(c(x))
            out.sum().backward()
            secs = time.time() - t0
            pairs = [("output", out.detach(), _main_output(ref_m(x)),
                      _main_output(ref64(x.double())))]
            pairs[0][2].sum().backward()
            pairs[0][3].sum().backward()
            pairs = [(n, a, b.detach(), c64.detach())
                     for n, a, b, c64 in pairs]
            for (n, p), (_, q), (_, q64) in zip(m.named_parameters(),
                                                ref_m.named_parameters(),
                                                ref64.named_parameters()):
                if q.grad is None:
                    continue
                if p.grad is None:
                    raise AssertionError("no gradient for %s" % n)
                pairs.append((n + ".grad", p.grad, q.grad, q64.grad))
            worst = max(((same(a, b, c64)[1], n, same(a, b, c64)[0])
                         for n, a, b, c64 in pairs), key=lambda t: t[0])
            ok = all(same(a, b, c64)[0] for _, a, b, c64 in pairs)
            err = worst[0]
            notes_extra = [] if ok else ["worst: %s" % worst[1]]
        else:
            with torch.no_grad():
                out = _main_output(c(x))
                secs = time.time() - t0
                ref = _main_output(ref_m(x))
            err = rel_err(out, ref)
            ok = None
            notes_extra = []
    notes = sorted({str(r.message).split("\n")[0][:120] for r in w
                    if issubclass(r.category, kiln.KilnWarning)})
    return err, secs, notes + notes_extra, ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--size", type=int, default=96)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    a = ap.parse_args()
    names = a.only.split(",") if a.only else DEFAULT
    torch.set_num_threads(2)
    print("| model | %s | %s | first call s | kiln warnings |"
          % ("train step" if a.train else "inference",
             "error / eager's error vs float64" if a.train
             else "max rel err"))
    print("| --- | --- | --- | --- | --- |")
    failures = 0
    for name in names:
        kiln.reset()
        try:
            err, secs, notes, ok = check(name, a.backend, a.train, a.size)
            if ok is None:
                ok = err <= a.tolerance
            failures += not ok
            print("| %s | %s | %.1e | %.1f | %s |" % (
                name, "ok" if ok else "MISMATCH", err, secs,
                "; ".join(notes)), flush=True)
        except Exception as e:
            failures += 1
            print("| %s | FAIL | | | %s: %s |" % (
                name, type(e).__name__, str(e).split("\n")[0][:300]),
                flush=True)
            traceback.print_exc(file=sys.stderr)
    return failures


if __name__ == "__main__":
    sys.exit(main())
