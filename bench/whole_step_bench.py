#!/usr/bin/python3
"""A whole training step compiled by kiln, with the optimizer's step inside
it, against the same code with the step outside and against eager PyTorch
(issue 12, opt28).

For each model (torchvision's resnet18 at 3x64x64, batch 8, train mode,
cross-entropy over 1000 classes; one nn.TransformerEncoderLayer, d_model
512, 8 heads, ffn 2048, dropout 0, batch 8 x 32 tokens, loss `out.pow(2).
mean()`: the parameter sets of bench/optimizer_bench.py) and each optimizer
(SGD momentum 0.9; Adam; for-loop, 1.13's CPU default), four copies of the
model, with the same initial weights and batches, are trained by:

* `eager`: `train(x, y)` (zero_grad, forward, loss, backward, opt.step())
  run by PyTorch (the baseline);
* `whole`: `kiln.compile(train, backend="cpu")`, the step inside the
  compiled function (since opt28 one graph after backward: the step's own
  program, kiln/_optim.py StepLift; before, every write was a graph break
  run eagerly);
* `outside`: `kiln.compile(fwd_bwd)` (zero_grad, forward, loss, backward)
  then an eager `opt.step()`;
* `outside+cstep`: `kiln.compile(fwd_bwd)` then `kiln.compile(opt.step)`
  (one program since opt26).

After the warm-up steps (captures and compiles) the parameters of each
compiled side are compared with eager's (max relative difference printed),
then the sides run in `--rounds` interleaved rounds of `--repeat` steps;
the best round per side is kept. Printed: ms per step, the ratio to eager,
the graph and break count of `train` (kiln.explain, after the timed steps)
and `uptime`'s load before and after each row.

`--ab OLD_PYTHON_DIR` runs each configuration in a subprocess per package
(old, then new; `git archive <commit> python | tar -x -C /tmp/old`), each
with its own eager baseline.

    /usr/bin/python3 bench/whole_step_bench.py [--threads 1] [--rounds 3]
        [--repeat 3] [--only resnet18|transformer] [--opt sgd|adam]
        [--ab OLD_PYTHON_DIR]
"""
import argparse
import ast
import copy
import os
import subprocess
import sys
import time
import warnings

# (see bench/optimizer_bench.py: libgomp's spinning workers on a shared
# 2-core machine)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

if "--pkg" in sys.argv:
    sys.path.insert(0, sys.argv[sys.argv.index("--pkg") + 1])

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import kiln  # noqa: E402

SIDES = ("eager", "whole", "outside", "outside+cstep")


def _model(name):
    torch.manual_seed(0)
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18(weights=None).train()
    return nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0,
                                      batch_first=True).train()


def _batches(name, n):
    g = torch.Generator().manual_seed(1)
    out = []
    for _ in range(n):
        if name == "resnet18":
            out.append((torch.randn(8, 3, 64, 64, generator=g),
                        torch.randint(0, 1000, (8,), generator=g)))
        else:
            out.append((torch.randn(8, 32, 512, generator=g), None))
    return out


def _loss(name, m, x, y):
    if name == "resnet18":
        return F.cross_entropy(m(x), y)
    return m(x).pow(2).mean()


def _opt(kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    return torch.optim.Adam(params, lr=1e-3)


def _side(side, name, kind, base):
    m = copy.deepcopy(base)
    o = _opt(kind, m.parameters())

    def fwd_bwd(x, y):
        o.zero_grad()
        loss = _loss(name, m, x, y)
        loss.backward()
        return loss

    def train(x, y):
        o.zero_grad()
        loss = _loss(name, m, x, y)
        loss.backward()
        o.step()
        return loss

    if side == "eager":
        step = train
    elif side == "whole":
        step = kiln.compile(train, backend="cpu")
    else:
        c = kiln.compile(fwd_bwd, backend="cpu")
        ostep = kiln.compile(o.step, backend="cpu") \
            if side == "outside+cstep" else o.step

        def step(x, y):
            loss = c(x, y)
            ostep()
            return loss
    return m, train, step


def _max_rel(a, b):
    worst = 0.0
    for p, q in zip(a.parameters(), b.parameters()):
        d = (p - q).abs().max().item()
        worst = max(worst, d / max(q.abs().max().item(), 1e-12))
    return worst


def bench(name, kind, rounds, repeat):
    base = _model(name)
    batches = _batches(name, 4)
    sides = {s: _side(s, name, kind, base) for s in SIDES}
    t_first = {}
    for k in range(3):   # warm-up: the first calls capture and compile
        x, y = batches[k % len(batches)]
        for s, (_, _, step) in sides.items():
            t = time.perf_counter()
            step(x, y)
            if k < 2:
                t_first[s] = t_first.get(s, 0.0) + time.perf_counter() - t
    diffs = {s: _max_rel(sides[s][0], sides["eager"][0]) for s in SIDES}
    best = {s: float("inf") for s in SIDES}
    for _ in range(rounds):
        for s, (_, _, step) in sides.items():
            t = time.perf_counter()
            for i in range(repeat):
                x, y = batches[i % len(batches)]
                step(x, y)
            best[s] = min(best[s], (time.perf_counter() - t) / repeat * 1e3)
    x, y = batches[0]
    ex = kiln.explain(sides["whole"][1])(x, y)
    return best, t_first, diffs, ex.graph_count, ex.graph_break_count


def _load():
    return os.getloadavg()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=["resnet18", "transformer"])
    ap.add_argument("--opt", choices=["sgd", "adam"])
    ap.add_argument("--ab", metavar="OLD_PYTHON_DIR")
    ap.add_argument("--pkg", help=argparse.SUPPRESS)
    ap.add_argument("--row", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ab:
        return ab(a)
    torch.set_num_threads(a.threads)
    warnings.simplefilter("ignore")
    if not a.row:
        print("load before: %.2f (threads %d, OMP_WAIT_POLICY=%s)" % (
            _load(), a.threads, os.environ["OMP_WAIT_POLICY"]))
        print("%-12s %-5s %8s %8s %8s %8s %7s %7s %7s %7s %6s %5s" % (
            "model", "opt", "eager", "whole", "outside", "out+cst",
            "wh/eag", "out/eag", "oc/eag", "graphs", "breaks", "load"))
    for name in ([a.only] if a.only else ["resnet18", "transformer"]):
        for kind in ([a.opt] if a.opt else ["sgd", "adam"]):
            best, first, diffs, graphs, breaks = bench(name, kind, a.rounds,
                                                       a.repeat)
            if a.row:
                print("ROW %r" % ((best, first, diffs, graphs, breaks),))
                continue
            _print(name, kind, "", best, graphs, breaks)
            print("   first two calls (s): %s; max rel. diff to eager: %s"
                  % (", ".join("%s %.1f" % kv for kv in first.items()),
                     ", ".join("%s %.1e" % kv for kv in diffs.items())),
                  flush=True)
    if not a.row:
        print("load after: %.2f" % _load())


def _print(name, kind, label, best, graphs, breaks):
    e = best["eager"]
    print("%-12s %-5s %-4s %8.1f %8.1f %8.1f %8.1f %7.2f %7.2f %7.2f %7d "
          "%6d %5.2f" % (
              name, kind, label, e, best["whole"], best["outside"],
              best["outside+cstep"], best["whole"] / e, best["outside"] / e,
              best["outside+cstep"] / e, graphs, breaks, _load()),
          flush=True)


def ab(a):
    new = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "python")
    print("A/B: old %s, new %s; load before: %.2f (threads %d)" % (
        a.ab, os.path.normpath(new), _load(), a.threads))
    print("%-12s %-5s %-4s %8s %8s %8s %8s %7s %7s %7s %7s %6s %5s" % (
        "model", "opt", "pkg", "eager", "whole", "outside", "out+cst",
        "wh/eag", "out/eag", "oc/eag", "graphs", "breaks", "load"))
    for name in ([a.only] if a.only else ["resnet18", "transformer"]):
        for kind in ([a.opt] if a.opt else ["sgd", "adam"]):
            for label, pkg in (("old", a.ab), ("new", new)):
                cmd = [sys.executable, os.path.abspath(__file__), "--pkg",
                       pkg, "--row", "--only", name, "--opt", kind,
                       "--threads", str(a.threads), "--rounds",
                       str(a.rounds), "--repeat", str(a.repeat)]
                out = subprocess.run(cmd, capture_output=True, text=True)
                rows = [ln for ln in out.stdout.splitlines()
                        if ln.startswith("ROW ")]
                if not rows:
                    print("%-12s %-5s %-4s failed: %s" % (
                        name, kind, label, out.stderr[-400:]))
                    continue
                best, first, diffs, graphs, breaks = ast.literal_eval(
                    rows[0][4:])
                _print(name, kind, label, best, graphs, breaks)
                print("   max rel. diff to eager: %s" % ", ".join(
                    "%s %.1e" % kv for kv in diffs.items()), flush=True)
    print("load after: %.2f" % _load())


if __name__ == "__main__":
    main()
