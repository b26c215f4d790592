#!/usr/bin/python3
"""Real PyTorch models through the kiln package against eager PyTorch
(issue 12, section 4).

Every model runs in worker processes of this script, one per environment
(`--envs`, default `default,passive,heap-passive`): each worker, with the
same thread count on both sides (torch.set_num_threads and Kiln's OpenMP
threads), compiles `kiln.compile(model, backend="cpu")` and times eager
and Kiln in `--rounds` interleaved rounds of `--repeat` calls; the best
round of each side is kept. The table prints eager in every environment,
Kiln's best, and the ratio against eager's best environment.

Why environments: eager PyTorch's speed on this machine depends on the
process, not only on the load. GNU OpenMP spins between parallel regions
(`passive` makes its workers sleep; eager convnets are much faster so on 2
cores), and glibc malloc serves big tensors with fresh mmaps and unmaps
them when freed, so every step page-faults its activations in again
(~100k faults per transformer training step; a fault costs several
microseconds in this VM). The eager transformer layer's training step
measured 1200 ms in a fresh process and 215 ms late in a long one (the
heap grown by earlier models); `heap` (MALLOC_MMAP_MAX_=0, no trimming)
removes the faults: 204 ms. Kiln's compiled code allocates from its own
buffer pool (no faults in steady state), so only eager at its best is a
fair baseline. Faults per call/step are printed per environment.

Inference: outputs are compared with eager by the `same()` rule of
test/python/models.py before anything is timed; a model that does not
match is reported, not timed. "cold compile" is the first worker's first
call with `KILN_CACHE_DIR` a fresh empty directory made for this run
(removed at the end); later workers share it, so their compile is a
disk-cache hit (printed as "disk-cache hit s").

    /usr/bin/python3 bench/models_bench.py [--threads 2] [--batch 8]
        [--image 224] [--seq 512] [--only NAME] [--rounds 3] [--repeat 5]
        [--train on|off|only] [--envs default,passive,heap,heap-passive]
        [--conv auto|im2col|direct|onednn]   (inference only)
        [--freezing on|off]   (inference: options={"freezing": True})

A training step (`--train`, on by default) is zero_grad, forward in train
mode, loss = mean(out**2), backward and an SGD step; eager and Kiln each
step their own copy of the model, and the parameters and buffers after
one step are compared (the same() rule) before timing.

Two training-only models end in `F.cross_entropy` inside the compiled
module (the loss is part of the graph): `lm_head_ce` (hidden states
batch x seq x d-model -> Linear to `--vocab` classes -> cross_entropy over
the batch x seq rows) and `classifier_ce` (an MLP on 784 features, 10
classes, batch 256). Their steps time a third side, interleaved with the
other two in the same worker: Kiln before ce20, the same model computing
`nll_loss(log_softmax(z))` (what the frontend emitted for cross_entropy
until then) with the `cpu` backend's earlier pipeline
`kiln-aot-eager{fold-conv-bn=true},kiln-cpu` (both ops decomposed); the
column "before/kiln" is its time over Kiln's.

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
    ap.add_argument("--vocab", type=int, default=8192,
                    help="lm_head_ce's class count")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--train", choices=("on", "off", "only"), default="on",
                    help="also time a training step (forward, backward, "
                    "SGD); 'only': skip inference")
    ap.add_argument("--conv", default="",
                    help="Kiln's convolution implementation (kiln-cpu{conv=...}: "
                         "auto, im2col, direct, onednn); default: the pipeline's")
    ap.add_argument("--freezing", choices=("on", "off"), default="off",
                    help="inference: kiln.compile(options={'freezing': "
                         "True}) (PyTorch's freezing: parameters constant; "
                         "BatchNorm folded and weights packed once)")
    ap.add_argument("--envs", default="default,passive,heap-passive",
                    help="comma-separated worker environments (each model "
                    "runs eager and Kiln in one worker process per "
                    "environment): %s" % "; ".join(
                        "%s: %s" % (k, v[1]) for k, v in ENVS.items()))
    ap.add_argument("--eager-policy", choices=("both", "default", "passive"),
                    default="",
                    help="old spelling: both = --envs default,passive")
    ap.add_argument("--mode", choices=("infer", "train"), default="infer",
                    help=argparse.SUPPRESS)  # internal: the worker's job
    ap.add_argument("--worker", default="",
                    help=argparse.SUPPRESS)  # internal: one model, JSON out
    args = ap.parse_args()
    if args.eager_policy:
        args.envs = ("default,passive" if args.eager_policy == "both"
                     else args.eager_policy)
    args.envs = [e for e in args.envs.split(",") if e]
    for e in args.envs:
        if e not in ENVS:
            ap.error("unknown environment %r (known: %s)" % (
                e, ", ".join(ENVS)))

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


# The cpu backend's pipeline before ce20 (cross_entropy decomposed), for
# the loss models' "before" side.
BEFORE_CE20 = "kiln-aot-eager{fold-conv-bn=true},kiln-cpu"


def loss_head(body, split=False):
    """A module computing `cross_entropy(body(x) as rows, t)`; `split`:
    `nll_loss(log_softmax(...))`, what Kiln's frontend emitted for
    cross_entropy before ce20."""
    import torch.nn as nn
    import torch.nn.functional as F

    class LossHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = body
            self.split = split

        def forward(self, x, t):
            z = self.body(x)
            z = z.reshape(-1, z.shape[-1])
            t = t.reshape(-1)
            if self.split:
                return F.nll_loss(F.log_softmax(z, 1), t)
            return F.cross_entropy(z, t)
    return LossHead()


def run(args):
    import torch
    import torch.nn as nn
    import kiln
    from models import (fp64_reference, gpt2_block, same,
                        torchvision_model, transformer_layer)
    torch.set_num_threads(args.threads)

    def seeded(make):
        def f():
            torch.manual_seed(0)
            return make()
        return f

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
        # Training only (name, make, input shape, classes): the loss in
        # the compiled module.
        ("lm_head_ce", seeded(lambda: loss_head(nn.Linear(d, args.vocab))),
         (b, args.seq, d), args.vocab),
        ("classifier_ce", seeded(lambda: loss_head(nn.Sequential(
            nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)))),
         (256, 784), 10),
    ]

    if args.worker:
        (worker if args.mode == "infer" else train_worker)(
            args, models, torch, kiln, fp64_reference, same)
        return
    if args.train != "only":
        inference(args, [m for m in models if len(m) == 3])
    if args.train != "off":
        training(args, models)
    print("load after: %s" % loadavg())


def result(**kw):
    print("RESULT " + json.dumps(kw), flush=True)


def interleaved(args, fns):
    """`--rounds` rounds, each timing `--repeat` calls of every fn in turn
    (after one untimed call); the best round of each, in seconds."""
    best = [math.inf] * len(fns)
    for _ in range(args.rounds):
        for i, fn in enumerate(fns):
            fn()
            t = time.perf_counter()
            for _ in range(args.repeat):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t) / args.repeat)
    return best


def worker(args, models, torch, kiln, fp64_reference, same):
    """Inference of one model (--worker NAME) in this process's environment:
    prints one line `RESULT {json}` (cold and warm compile s, best eager and
    Kiln ms) or `RESULT {"error": ...}`."""
    for name, make, shape, *_ in models:
        if name != args.worker:
            continue
        model = make()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            expected = model(x)
            kiln.reset()
            options = {}
            if args.conv:
                options["pipeline"] = "kiln-aot-eager,kiln-cpu{conv=%s}" % \
                    args.conv
            if args.freezing == "on":
                options["freezing"] = True
            opt = kiln.compile(model, backend="cpu", options=options)
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
            te, tk = interleaved(args, [lambda: model(x), lambda: opt(x)])
        return result(cold=cold, warm=warm, eager_ms=te * 1e3,
                      kiln_ms=tk * 1e3,
                      eager_faults=faults_per_call(lambda: model(x)),
                      kiln_faults=faults_per_call(lambda: opt(x)))
    result(error="no model %s" % args.worker)


def faults_per_call(fn, n=2):
    """Minor page faults of this process per call of fn (after one)."""
    import resource
    fn()
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(n):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / n


def train_worker(args, models, torch, kiln, fp64_reference, same):
    """A training step of one model (--worker NAME --mode train) in this
    process's environment: zero_grad, forward (train mode: BatchNorm batch
    statistics), loss = mean of the output squared, backward, SGD (lr 1e-3,
    momentum 0.9). Eager and Kiln each own a deep copy of the model with
    the same values; one step of each is checked first (parameters and
    buffers by allclose, else the same() rule against an fp64 copy's step),
    then interleaved rounds. Prints `RESULT {json}`: cold step s, best
    eager and Kiln ms, and each side's page faults per step. A model with
    a class count (the loss models) is called as model(x, t), its output
    the loss, and also times Kiln before ce20 (before_ms)."""
    import copy
    for name, make, shape, *classes in models:
        if name != args.worker:
            continue
        base = make().train()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        if classes:
            t = torch.randint(0, classes[0], shape[:-1],
                              generator=torch.Generator().manual_seed(2))

            def loss_of(fn, xx):
                return fn(xx, t)
        else:
            def loss_of(fn, xx):
                return fn(xx).float().pow(2).mean()

        def stepper(model, fn):
            opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

            def step():
                opt.zero_grad(set_to_none=True)
                loss = loss_of(fn, x)
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
        opt_ref = torch.optim.SGD(m_ref.parameters(), lr=1e-3, momentum=0.9)
        loss_ref = loss_of(m_ref, x.double())
        loss_ref.backward()
        opt_ref.step()
        sides = [(m_kiln, s_kiln)]
        if classes:
            m_before = copy.deepcopy(base)
            m_before.split = True
            s_before = stepper(m_before, kiln.compile(
                m_before, backend="cpu", options={"pipeline": BEFORE_CE20}))
            sides.append((m_before, s_before))
        t0 = time.perf_counter()
        try:
            s_kiln()
        except Exception as e:
            return result(error="failed: %s" % str(e).splitlines()[0][:200])
        cold = time.perf_counter() - t0
        s_eager()
        bad = []
        ref_state = m_ref.state_dict()
        if classes:
            s_before()
        for m, _ in sides:
            for (k, a), (_, e) in zip(m.state_dict().items(),
                                      m_eager.state_dict().items()):
                if not a.is_floating_point():
                    if not torch.equal(a, e):
                        bad.append(k)
                    continue
                ok, how = same(a, e, ref_state[k])
                if not ok:
                    bad.append("%s (%s)" % (k, how))
        if bad:
            return result(error="mismatch after a step: %s" %
                          "; ".join(bad[:3]), cold=cold)

        times = interleaved(args, [s_eager] + [s for _, s in sides])
        extra = {"before_ms": times[2] * 1e3} if classes else {}
        return result(cold=cold, eager_ms=times[0] * 1e3,
                      kiln_ms=times[1] * 1e3,
                      eager_faults=faults_per_call(s_eager),
                      kiln_faults=faults_per_call(s_kiln), **extra)
    result(error="no model %s" % args.worker)


# Worker environments: name -> (variables set, meaning). Each starts from
# the caller's environment minus OMP_WAIT_POLICY and the MALLOC_* tunables.
ENVS = {
    "default": ({}, "as installed (GNU OpenMP spins between parallel "
                "regions; glibc malloc maps and unmaps big blocks)"),
    "passive": ({"OMP_WAIT_POLICY": "passive"}, "OMP_WAIT_POLICY=passive"),
    "heap": ({"MALLOC_MMAP_MAX_": "0",
              "MALLOC_TRIM_THRESHOLD_": str(1 << 40)},
             "glibc malloc keeps freed memory (MALLOC_MMAP_MAX_=0, no trim): "
             "no page faults for eager's reused tensors"),
    "heap-passive": ({"MALLOC_MMAP_MAX_": "0",
                      "MALLOC_TRIM_THRESHOLD_": str(1 << 40),
                      "OMP_WAIT_POLICY": "passive"}, "heap and passive"),
}


def run_worker(args, name, envname, mode="infer"):
    """This script as a worker for model `name` in environment `envname`
    (ENVS); returns its RESULT as a dict."""
    env = dict(os.environ)
    for k in list(env):
        if k == "OMP_WAIT_POLICY" or (k.startswith("MALLOC_")
                                      and k.endswith("_")):
            del env[k]
    env.update(ENVS[envname][0])
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name,
           "--mode", mode,
           "--threads", str(args.threads), "--batch", str(args.batch),
           "--image", str(args.image), "--seq", str(args.seq),
           "--d-model", str(args.d_model), "--vocab", str(args.vocab),
           "--rounds", str(args.rounds),
           "--repeat", str(args.repeat), "--train", "off"]
    if args.conv:
        cmd += ["--conv", args.conv]
    cmd += ["--freezing", args.freezing]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": "worker exit %d: %s" % (p.returncode, tail[:200])}


def table(args, models, mode, title, cols, cells):
    """Runs every model's workers (one per environment) and prints a row
    per model: `cells(first, results)` gives the model-specific columns,
    then eager's ms per environment, Kiln's best, and the ratio against
    eager's best environment. Returns the ratios."""
    envs = args.envs
    print("| model | input | %s | %s | kiln ms (best) | eager-best/kiln |"
          % (" | ".join(cols), " | ".join("eager ms (%s)" % e for e in envs)))
    print("|" + " --- |" * (len(cols) + len(envs) + 4))
    ratios = []
    for name, _, shape, *_ in models:
        if args.only and args.only not in name:
            continue
        row = "| %s | %s |" % (name, "x".join(map(str, shape)))
        res = {e: run_worker(args, name, e, mode) for e in envs}
        errors = ["%s: %s" % (e, r["error"]) for e, r in res.items()
                  if "error" in r]
        if errors:
            print(row + " %s |" % "; ".join(errors), flush=True)
            continue
        te = min(r["eager_ms"] for r in res.values())
        tk = min(r["kiln_ms"] for r in res.values())
        ratios.append(te / tk)
        print(row + " %s | %s | %.2f | %.2fx |" % (
            " | ".join(cells(res[envs[0]], res)),
            " | ".join("%.2f" % res[e]["eager_ms"] for e in envs),
            tk, te / tk), flush=True)
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print("geomean eager-best/kiln (%s): %.2fx over %d models" % (
            title, geo, len(ratios)))
    return ratios


def inference(args, models):
    import torch
    print("load before: %s; threads %d; torch %s; KILN_CACHE_DIR %s; "
          "freezing %s" % (loadavg(), args.threads, torch.__version__,
                           os.environ.get("KILN_CACHE_DIR"), args.freezing))
    envs = args.envs

    def cells(first, res):
        hit = res[envs[1]]["cold"] if len(envs) > 1 else math.nan
        return ["%.2f" % first["cold"], "%.2f" % hit, "%.3f" % first["warm"],
                " / ".join("%d" % res[e]["eager_faults"] for e in envs),
                " / ".join("%d" % res[e]["kiln_faults"] for e in envs)]
    table(args, models, "infer", "inference",
          ["cold compile s", "disk-cache hit s", "warm call s",
           "eager faults/call", "kiln faults/call"], cells)
    print("eager-best/kiln > 1 means Kiln is faster than eager in its best "
          "worker environment. Cold compile: the first call (capture, "
          "import, Kiln compile, one run) with an empty disk cache; "
          "disk-cache hit: the same in the second worker process; warm "
          "call: the second call (in-process cache hit, one run). Kiln ms: "
          "the best over the workers.")


def training(args, models):
    print("load before (training): %s; threads %d" % (loadavg(),
                                                       args.threads))
    envs = args.envs

    def cells(first, res):
        before = "-"
        if "before_ms" in first:
            tb = min(r["before_ms"] for r in res.values())
            tk = min(r["kiln_ms"] for r in res.values())
            before = "%.2f (%.2fx)" % (tb, tb / tk)
        return ["%.2f" % first["cold"],
                " / ".join("%d" % res[e]["eager_faults"] for e in envs),
                " / ".join("%d" % res[e]["kiln_faults"] for e in envs),
                before]
    table(args, models, "train", "training step",
          ["cold step s", "eager faults/step", "kiln faults/step",
           "kiln before ce20 ms (before/kiln)"], cells)
    print("Training step: eager and Kiln in the same worker per "
          "environment; cold step: the first Kiln step with an empty disk "
          "cache; faults: minor page faults per step, per environment; "
          "kiln before ce20: the loss models with nll_loss(log_softmax) "
          "and the earlier pipeline, interleaved in the same worker.")


if __name__ == "__main__":
    main()
