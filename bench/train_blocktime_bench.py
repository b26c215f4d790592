#!/usr/bin/python3
"""A warm training step of one models_bench model (zero_grad, forward,
backward, SGD lr 1e-3 momentum 0.9, loss = mean of the output squared)
through kiln.compile(backend="cpu"), timed with libomp's blocktime of the
calling thread switched between rounds (kmp_set_blocktime; the policy
KILN_OMP_BLOCKTIME sets, docs/codegen.md "Buffers and threads"), in one
process on the same compiled code: best of --rounds rounds x --repeat
steps per blocktime, optionally eager's step in the same rounds, and the
process CPU seconds per step at the first blocktime. Used for train13's
figures (docs/codegen.md, round 4, and the blocktime table); run it with
main's and a branch's KILN_BUILD_DIR / PYTHONPATH alternately to compare
builds. Set the environment as models_bench's workers do (e.g.
heap-passive: MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1099511627776
OMP_WAIT_POLICY=passive). The machine is shared: the load is printed.

    /usr/bin/python3 bench/train_blocktime_bench.py mobilenet_v2
        [--blocktimes 0,2] [--eager] [--rounds 3] [--repeat 3]
"""
import argparse
import copy
import ctypes
import math
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "python"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=("resnet18", "resnet50", "mobilenet_v2",
                                      "transformer_layer", "gpt2_block"))
    ap.add_argument("--blocktimes", default="0",
                    help="comma-separated ms; 'keep' leaves Kiln's policy")
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch
    import kiln
    from models import gpt2_block, torchvision_model, transformer_layer
    torch.set_num_threads(args.threads)
    print("load %s" % open("/proc/loadavg").read().split()[:3], flush=True)
    if args.model == "transformer_layer":
        base, shape = transformer_layer(d_model=256, nhead=8,
                                        dim_feedforward=1024), (8, 512, 256)
    elif args.model == "gpt2_block":
        base, shape = gpt2_block(n_embd=256, n_head=8,
                                 block_size=512), (8, 512, 256)
    else:
        base, shape = torchvision_model(args.model), (8, 3, 224, 224)
    base.train()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))

    def stepper(model, fn):
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

        def step():
            opt.zero_grad(set_to_none=True)
            fn(x).float().pow(2).mean().backward()
            opt.step()
        return step

    mk = copy.deepcopy(base)
    s_kiln = stepper(mk, kiln.compile(mk, backend="cpu"))
    t = time.perf_counter()
    s_kiln()
    print("cold step %.1f s" % (time.perf_counter() - t), flush=True)
    omp = ctypes.CDLL([l.split()[-1] for l in open("/proc/self/maps")
                       if "/libomp" in l][0])
    fns = []
    if args.eager:
        me = copy.deepcopy(base)
        fns.append(("eager", stepper(me, me)))
    for bt in args.blocktimes.split(","):
        def f(bt=bt):
            if bt != "keep":
                omp.kmp_set_blocktime(int(bt))
            s_kiln()
        fns.append(("kiln bt=%s" % bt, f))
    best = {}
    for _ in range(args.rounds):
        for name, f in fns:
            f()
            t = time.perf_counter()
            for _ in range(args.repeat):
                f()
            best[name] = min(best.get(name, math.inf),
                             (time.perf_counter() - t) / args.repeat)
    f = fns[1 if args.eager else 0][1]
    ru = resource.getrusage(resource.RUSAGE_SELF)
    c0 = ru.ru_utime + ru.ru_stime
    for _ in range(args.repeat):
        f()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print("%s: %s; Kiln CPU s/step %.3f; load %s" % (
        args.model,
        ", ".join("%s %.1f ms" % (k, v * 1e3) for k, v in best.items()),
        (ru.ru_utime + ru.ru_stime - c0) / args.repeat,
        open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
