#!/usr/bin/python3
"""An optimizer step compiled by kiln against eager PyTorch (issue 12,
section 2, opt25).

For each parameter set (resnet18's 62 tensors, 11.7 M values; one
nn.TransformerEncoderLayer, d_model 512, 8 heads, ffn 2048: 16 tensors,
3.2 M values) and each optimizer (SGD momentum 0.9; Adam), three copies of
the parameters with the same random gradients are stepped by:

* eager `opt.step()` with `foreach=False` (the for-loop: the baseline),
* eager `opt.step()` with `foreach=True` (torch._foreach_* kernels),
* `kiln.compile(opt.step, backend="cpu")` (for-loop optimizer).

After the warm-up steps (the compiled step's first calls capture and
compile) the three parameter copies are compared (they took the same
steps), then the sides run in `--rounds` interleaved rounds of `--repeat`
steps each; the best round per side is kept. Printed: ms per step, the
ratio to the for-loop, the compiled step's graph and break count
(kiln.explain), and `uptime`'s load before and after.

The compiled step today: every in-place write to a parameter or a state
tensor is a graph break run eagerly (docs/python.md, "In-place writes to
tensors reached through Python objects"), and the step's Python is traced
again on every call, so it is expected to be slower than eager. This
script is the baseline for compiling the step into one program.

    /usr/bin/python3 bench/optimizer_bench.py [--threads 1] [--rounds 3]
        [--repeat 5] [--only resnet18|transformer] [--opt sgd|adam]
"""
import argparse
import os
import time
import warnings

# GNU OpenMP's workers spin between parallel regions: with eager PyTorch's
# and Kiln's thread pools in one process on a shared 2-core machine, each
# side's spinning slowed the other's steps 5-50x (bench/models_bench.py's
# "passive" environment). Set before torch and Kiln load libgomp.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import torch.nn as nn

import kiln  # noqa: E402


def _params(name):
    torch.manual_seed(0)
    if name == "resnet18":
        import torchvision
        m = torchvision.models.resnet18(weights=None)
    else:
        m = nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
    return [p.detach().clone().requires_grad_(True) for p in m.parameters()]


def _make(opt, params, foreach):
    if opt == "sgd":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9,
                               foreach=foreach)
    return torch.optim.Adam(params, lr=1e-3, foreach=foreach)


def _load():
    return os.getloadavg()[0]


def bench(name, opt, rounds, repeat):
    base = _params(name)
    grads = [torch.randn_like(p) for p in base]
    sides = {}
    for side in ("loop", "foreach", "kiln"):
        ps = [p.detach().clone().requires_grad_(True) for p in base]
        for p, g in zip(ps, grads):
            p.grad = g.clone()
        o = _make(opt, ps, side == "foreach")
        step = kiln.compile(o.step, backend="cpu") if side == "kiln" \
            else o.step
        sides[side] = (ps, step)
    t0 = time.perf_counter()
    sides["kiln"][1]()
    first = time.perf_counter() - t0
    for side in ("loop", "foreach"):
        sides[side][1]()
    for _ in range(2):
        for _, step in sides.values():
            step()
    for side in ("foreach", "kiln"):
        for a, b in zip(sides["loop"][0], sides[side][0]):
            torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5)
    best = {s: float("inf") for s in sides}
    for _ in range(rounds):
        for side, (_, step) in sides.items():
            t = time.perf_counter()
            for _ in range(repeat):
                step()
            best[side] = min(best[side],
                             (time.perf_counter() - t) / repeat * 1e3)
    ps, _ = sides["kiln"]
    o = _make(opt, ps, False)
    ex = kiln.explain(o.step)()
    return best, first, ex.graph_count, ex.graph_break_count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", choices=["resnet18", "transformer"])
    ap.add_argument("--opt", choices=["sgd", "adam"])
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    warnings.simplefilter("ignore")
    print("load before: %.2f (threads %d, OMP_WAIT_POLICY=%s)" % (
        _load(), a.threads, os.environ["OMP_WAIT_POLICY"]))
    print("%-12s %-5s %9s %9s %9s %8s %8s %9s %7s" % (
        "params", "opt", "loop ms", "foreach", "kiln ms", "fe/loop",
        "kiln/loop", "1st call s", "breaks"))
    for name in ([a.only] if a.only else ["resnet18", "transformer"]):
        for opt in ([a.opt] if a.opt else ["sgd", "adam"]):
            best, first, graphs, breaks = bench(name, opt, a.rounds,
                                                a.repeat)
            print("%-12s %-5s %9.2f %9.2f %9.2f %8.2f %8.2f %9.1f %7d" % (
                name, opt, best["loop"], best["foreach"], best["kiln"],
                best["foreach"] / best["loop"], best["kiln"] / best["loop"],
                first, breaks), flush=True)
    print("load after: %.2f" % _load())


if __name__ == "__main__":
    main()
