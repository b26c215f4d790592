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
(kiln.explain on the compiled side's optimizer, after its timed steps),
and `uptime`'s load before and after.

Since opt26 the step after the first (which creates the state) is one
program (kiln/_optim.py; docs/python.md, "Compiled optimizer steps");
before, every in-place write to a parameter or a state tensor was a graph
break run eagerly.

`--ab OLD_PYTHON_DIR` compares two kiln packages (e.g. main's `python/`,
unpacked with `git archive main python | tar -x -C /tmp/main`) with this
checkout's: each configuration runs in a subprocess per package, old and
new alternating, `--ab-runs` times; each subprocess measures the eager
for-loop too, so each kiln figure has its own same-process baseline, and
the table prints both packages' kiln/loop ratios (and the load).
`--ab-lib OLD_LIBRARY` gives the old side its own libKilnCAPI.so
(`KILN_LIBRARY`), for a change of the C++ side too. `--lr-decay` multiplies
every side's lr by 0.999 after each step (what an lr scheduler does; since
opt27 `lr` is read per call, before it was a key value: a recompile per
step, then eager past cache_size_limit).

    /usr/bin/python3 bench/optimizer_bench.py [--threads 1] [--rounds 3]
        [--repeat 5] [--only resnet18|transformer] [--opt sgd|adam]
        [--lr-decay]
        [--ab OLD_PYTHON_DIR [--ab-lib OLD_LIBRARY] [--ab-runs 1]]
"""
import argparse
import ast
import os
import subprocess
import sys
import time
import warnings

# GNU OpenMP's workers spin between parallel regions: with eager PyTorch's
# and Kiln's thread pools in one process on a shared 2-core machine, each
# side's spinning slowed the other's steps 5-50x (bench/models_bench.py's
# "passive" environment). Set before torch and Kiln load libgomp.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

if "--pkg" in sys.argv:
    # (an --ab subprocess: the kiln package to measure)
    sys.path.insert(0, sys.argv[sys.argv.index("--pkg") + 1])

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

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


def _decaying(o, step):
    """`step`, then lr *= 0.999 (what an lr scheduler does every step)."""
    def stepped():
        step()
        for group in o.param_groups:
            group["lr"] *= 0.999
    return stepped


def bench(name, opt, rounds, repeat, decay=False):
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
        if side == "kiln":
            compiled = step
        if decay:
            step = _decaying(o, step)
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
    ex = kiln.explain(compiled._kiln.user_fn)()
    return best, first, ex.graph_count, ex.graph_break_count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", choices=["resnet18", "transformer"])
    ap.add_argument("--opt", choices=["sgd", "adam"])
    ap.add_argument("--ab", metavar="OLD_PYTHON_DIR")
    ap.add_argument("--ab-runs", type=int, default=1)
    ap.add_argument("--ab-lib", metavar="OLD_LIBRARY",
                    help="the old side's libKilnCAPI.so (KILN_LIBRARY)")
    ap.add_argument("--lr-decay", action="store_true",
                    help="lr *= 0.999 after every step (as an lr scheduler)")
    ap.add_argument("--pkg", help=argparse.SUPPRESS)
    ap.add_argument("--row", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ab:
        return ab(a)
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
                                                a.repeat, a.lr_decay)
            if a.row:
                print("ROW %r" % ((best["loop"], best["foreach"],
                                   best["kiln"], first, graphs, breaks),))
                continue
            print("%-12s %-5s %9.2f %9.2f %9.2f %8.2f %8.2f %9.1f %7d" % (
                name, opt, best["loop"], best["foreach"], best["kiln"],
                best["foreach"] / best["loop"], best["kiln"] / best["loop"],
                first, breaks), flush=True)
    print("load after: %.2f" % _load())


def ab(a):
    """Old and new kiln packages, alternating subprocesses (see the module
    docstring)."""
    new = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "python")
    print("A/B: old %s (library %s), new %s; load before: %.2f (threads "
          "%d)" % (a.ab, a.ab_lib or "the same", os.path.normpath(new),
                   _load(), a.threads))
    print("%-12s %-5s %-4s %9s %9s %9s %9s %7s %6s %6s" % (
        "params", "opt", "pkg", "loop ms", "foreach", "kiln ms",
        "kiln/loop", "1st s", "breaks", "load"))
    for name in ([a.only] if a.only else ["resnet18", "transformer"]):
        for opt in ([a.opt] if a.opt else ["sgd", "adam"]):
            for _ in range(a.ab_runs):
                for label, pkg in (("old", a.ab), ("new", new)):
                    cmd = [sys.executable, os.path.abspath(__file__),
                           "--pkg", pkg, "--row", "--only", name, "--opt",
                           opt, "--threads", str(a.threads), "--rounds",
                           str(a.rounds), "--repeat", str(a.repeat)] + \
                        (["--lr-decay"] if a.lr_decay else [])
                    env = dict(os.environ)
                    if label == "old" and a.ab_lib:
                        env["KILN_LIBRARY"] = a.ab_lib
                    out = subprocess.run(cmd, capture_output=True,
                                         text=True, env=env)
                    rows = [ln for ln in out.stdout.splitlines()
                            if ln.startswith("ROW ")]
                    if not rows:
                        print("%-12s %-5s %-4s failed: %s" % (
                            name, opt, label, out.stderr[-300:]))
                        continue
                    loop, fe, kl, first, _, breaks = ast.literal_eval(
                        rows[0][4:])
                    print("%-12s %-5s %-4s %9.2f %9.2f %9.2f %9.2f %7.1f "
                          "%6d %6.2f" % (name, opt, label, loop, fe, kl,
                                         kl / loop, first, breaks, _load()),
                          flush=True)
    print("load after: %.2f" % _load())


if __name__ == "__main__":
    main()
