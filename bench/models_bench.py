#!/usr/bin/python3
"""Real PyTorch models through the kiln package against eager PyTorch
(issue 12, section 4).

Inference, for each model: two worker processes of this script, one with
eager PyTorch at its default OpenMP wait policy (GNU OpenMP spins between
parallel regions) and one with `OMP_WAIT_POLICY=passive` (on this 2-core
machine eager convnets are much faster passive); the policy is read at
process start, hence processes. Each worker, with the same thread count on
both sides (torch.set_num_threads and Kiln's OpenMP threads), compiles
`kiln.compile(model, backend="cpu")` (the first call: capture + import +
Kiln compile + one run) and runs `--rounds` interleaved rounds of
`--repeat` timed calls of eager and of Kiln; the best round of each side
is kept (eager's timings on a shared machine vary by 2x from run to run).
The table prints eager under both policies, and the ratio is against the
better one (eager at its best) and Kiln's best over both workers. Outputs
are compared with eager by the `same()` rule of test/python/models.py
before anything is timed; a model that does not match is reported, not
timed. "cold compile" is the first worker's first call with
`KILN_CACHE_DIR` a fresh empty directory made for this run (removed at
the end); the second worker shares it, so its compile is a disk-cache hit
(printed as "disk-cache hit s").

    /usr/bin/python3 bench/models_bench.py [--threads 2] [--batch 8]
        [--image 224] [--seq 512] [--only NAME] [--rounds 3] [--repeat 5]
        [--train on|off|only] [--eager-policy both|default|passive]
        [--conv auto|im2col|direct|onednn]   (inference only)

A training step (`--train`, on by default) is zero_grad, forward in train
mode, loss = mean(out**2), backward and an SGD step; eager and Kiln each
step their own copy of the model, and the parameters and buffers after
one step are compared (the same() rule) before timing.

Run it on an idle machine (`uptime` load < 1) and record the load: the
script prints it before and after. Needs the kiln package (PYTHONPATH=python
or installed) and the C library (build/lib, or KILN_LIBRARY).
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--train", choices=("on", "off", "only"), default="on",
                    help="also time a training step (forward, backward, "
                    "SGD); 'only': skip inference")
    ap.add_argument("--conv", default="",
                    help="Kiln's convolution implementation (kiln-cpu{conv=...}: "
                         "auto, im2col, direct, onednn); default: the pipeline's")
    ap.add_argument("--eager-policy", choices=("both", "default", "passive"),
                    default="both",
                    help="eager's OpenMP wait policies to time (inference): "
                    "each in its own worker process")
    ap.add_argument("--worker", default="",
                    help=argparse.SUPPRESS)  # internal: one model, JSON out
    args = ap.parse_args()

    # Kiln's compiled code uses OpenMP; set before the library loads.
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    # A cold compile is cold: a fresh, empty disk cache for this run (its
    # workers share it), unless the caller chose one.
    tmp_cache = None
    if not args.worker and "KILN_CACHE_DIR" not in os.environ:
        tmp_cache = tempfile.mkdtemp(prefix="kiln-models-bench-cache-")
        os.environ["KILN_CACHE_DIR"] = tmp_cache
    try:
        run(args)
    finally:
        if tmp_cache:
            shutil.rmtree(tmp_cache, ignore_errors=True)


def run(args):
    import torch
    import kiln
    from models import (fp64_reference, gpt2_block, same,
                        torchvision_model, transformer_layer)
    torch.set_num_threads(args.threads)

    b, s, d = args.batch, args.image, args.d_model
    models = [
        ("resnet18", lambda: torchvision_model("resnet18"), (b, 3, s, s)),
        ("resnet50", lambda: torchvision_model("resnet50"), (b, 3, s, s)),
        ("mobilenet_v2", lambda: torchvision_model("mobilenet_v2"),
         (b, 3, s, s)),
        ("transformer_layer",
         lambda: transformer_layer(d_model=d, nhead=8, dim_feedforward=4 * d),
         (b, args.seq, d)),
        ("gpt2_block",
         lambda: gpt2_block(n_embd=d, n_head=8, block_size=args.seq),
         (b, args.seq, d)),
    ]

    if args.worker:
        worker(args, models, torch, kiln, fp64_reference, same)
        return
    if args.train != "only":
        inference(args, models)
    if args.train != "off":
        training(args, models, torch, kiln)
    print("load after: %s" % loadavg())


def worker(args, models, torch, kiln, fp64_reference, same):
    """One model (--worker NAME) under this process's OpenMP policy: prints
    one line `RESULT {json}` (cold and warm compile s, best eager and Kiln
    ms) or `RESULT {"error": ...}`."""
    def result(**kw):
        print("RESULT " + json.dumps(kw), flush=True)

    for name, make, shape in models:
        if name != args.worker:
            continue
        model = make()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            expected = model(x)
            kiln.reset()
            opt = kiln.compile(model, backend="cpu", options=(
                {"pipeline": "kiln-aot-eager,kiln-cpu{conv=%s}" % args.conv}
                if args.conv else None))
            t0 = time.perf_counter()
            try:
                out = opt(x)
            except Exception as e:  # report, go on with the next model
                return result(error="failed: %s" %
                              str(e).splitlines()[0][:200])
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            opt(x)
            warm = time.perf_counter() - t0
            ok, how = same(out, expected, fp64_reference(model, x))
            if not ok:
                return result(error="mismatch: %s" % how, cold=cold)

            def best(fn):
                fn(x)
                t = time.perf_counter()
                for _ in range(args.repeat):
                    fn(x)
                return (time.perf_counter() - t) / args.repeat

            te, tk = math.inf, math.inf
            for _ in range(args.rounds):
                te = min(te, best(model))
                tk = min(tk, best(opt))
        return result(cold=cold, warm=warm, eager_ms=te * 1e3,
                      kiln_ms=tk * 1e3)
    result(error="no model %s" % args.worker)


def run_worker(args, name, policy):
    """This script as a worker for model `name`, eager's OpenMP wait policy
    `policy` ("default": as the environment has it, minus any
    OMP_WAIT_POLICY; "passive")."""
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy == "passive":
        env["OMP_WAIT_POLICY"] = "passive"
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name,
           "--threads", str(args.threads), "--batch", str(args.batch),
           "--image", str(args.image), "--seq", str(args.seq),
           "--d-model", str(args.d_model), "--rounds", str(args.rounds),
           "--repeat", str(args.repeat), "--train", "off"]
    if args.conv:
        cmd += ["--conv", args.conv]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": "worker exit %d: %s" % (p.returncode, tail[:200])}


def inference(args, models):
    import torch
    print("load before: %s; threads %d; torch %s; KILN_CACHE_DIR %s" % (
        loadavg(), args.threads, torch.__version__,
        os.environ.get("KILN_CACHE_DIR")))
    policies = (["default", "passive"] if args.eager_policy == "both"
                else [args.eager_policy])
    print("| model | input | cold compile s | disk-cache hit s | warm call s "
          "| eager ms (default) | eager ms (passive) | kiln ms "
          "| eager-best/kiln |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ratios = []
    for name, _, shape in models:
        if args.only and args.only not in name:
            continue
        row = "| %s | %s |" % (name, "x".join(map(str, shape)))
        res = {pol: run_worker(args, name, pol) for pol in policies}
        errors = ["%s: %s" % (pol, r["error"]) for pol, r in res.items()
                  if "error" in r]
        if errors:
            print(row + " %s |" % "; ".join(errors), flush=True)
            continue
        first = res[policies[0]]
        hit = res[policies[1]]["cold"] if len(policies) > 1 else math.nan
        eager = {pol: res[pol]["eager_ms"] for pol in policies}
        te = min(eager.values())
        tk = min(r["kiln_ms"] for r in res.values())
        ratios.append(te / tk)
        fmt = lambda pol: ("%.2f" % eager[pol]) if pol in eager else "-"
        print(row + " %.2f | %.2f | %.3f | %s | %s | %.2f | %.2fx |" % (
            first["cold"], hit, first["warm"], fmt("default"),
            fmt("passive"), tk, te / tk), flush=True)
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print("geomean eager-best/kiln (inference): %.2fx over %d models" % (
            geo, len(ratios)))
    print("eager-best/kiln > 1 means Kiln is faster than eager at its better "
          "OpenMP wait policy. Cold compile: the first call (capture, import, "
          "Kiln compile, one run) with an empty disk cache; disk-cache hit: "
          "the same in the second worker process; warm call: the second "
          "call (in-process cache hit, one run). Kiln ms: the best over "
          "both workers.")


def training(args, models, torch, kiln):
    """A training step per model: zero_grad, forward (train mode: BatchNorm
    batch statistics), loss = mean of the output squared, backward, SGD
    (lr 1e-3, momentum 0.9). Eager and Kiln each own a deep copy of the
    model with the same values; one step of each is checked first
    (parameters and buffers by allclose, else the same() rule against an
    fp64 copy's step), then interleaved rounds of `--repeat` steps, best
    round of each side."""
    import copy
    from models import same, rmse  # noqa: F401
    print("load before (training): %s; threads %d" % (loadavg(),
                                                       args.threads))
    print("| model | input | cold step s | eager step ms | kiln step ms "
          "| eager/kiln |")
    print("| --- | --- | --- | --- | --- | --- |")
    ratios = []
    for name, make, shape in models:
        if args.only and args.only not in name:
            continue
        base = make().train()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        row = "| %s | %s |" % (name, "x".join(map(str, shape)))

        def stepper(model, fn):
            opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

            def step():
                opt.zero_grad(set_to_none=True)
                loss = fn(x).float().pow(2).mean()
                loss.backward()
                opt.step()
                return loss
            return step

        m_eager, m_kiln = copy.deepcopy(base), copy.deepcopy(base)
        m_ref = copy.deepcopy(base).double()
        kiln.reset()
        compiled = kiln.compile(m_kiln, backend="cpu")
        s_eager = stepper(m_eager, m_eager)
        s_kiln = stepper(m_kiln, compiled)
        xd = x.double()
        opt_ref = torch.optim.SGD(m_ref.parameters(), lr=1e-3, momentum=0.9)
        loss_ref = m_ref(xd).pow(2).mean()
        loss_ref.backward()
        opt_ref.step()
        t0 = time.perf_counter()
        try:
            s_kiln()
        except Exception as e:
            print(row + " failed: %s |" % str(e).splitlines()[0][:200])
            continue
        cold = time.perf_counter() - t0
        s_eager()
        bad = []
        ref_state = m_ref.state_dict()
        for (k, a), (_, e) in zip(m_kiln.state_dict().items(),
                                  m_eager.state_dict().items()):
            if not a.is_floating_point():
                if not torch.equal(a, e):
                    bad.append(k)
                continue
            ok, how = same(a, e, ref_state[k])
            if not ok:
                bad.append("%s (%s)" % (k, how))
        if bad:
            print(row + " %.2f | | | mismatch after a step: %s |" % (
                cold, "; ".join(bad[:3])))
            continue

        def best(step):
            step()
            t = time.perf_counter()
            for _ in range(args.repeat):
                step()
            return (time.perf_counter() - t) / args.repeat

        te, tk = math.inf, math.inf
        for _ in range(args.rounds):
            te = min(te, best(s_eager))
            tk = min(tk, best(s_kiln))
        ratios.append(te / tk)
        print(row + " %.2f | %.2f | %.2f | %.2fx |" % (
            cold, te * 1e3, tk * 1e3, te / tk), flush=True)
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print("geomean eager/kiln (training step): %.2fx over %d models" % (
            geo, len(ratios)))


if __name__ == "__main__":
    main()
