#!/usr/bin/python3
"""Real PyTorch models through the kiln package against eager PyTorch
(issue 12, section 4).

For each model, in one process and with the same thread count on both
sides (torch.set_num_threads and Kiln's OpenMP threads): cold compile time
of `kiln.compile(model, backend="cpu")` (the first call, capture + import +
Kiln compile + one run), then `--rounds` interleaved rounds of `--repeat`
timed calls of eager and of Kiln; the best round of each side is reported
(eager's timings on a shared machine vary by 2x from run to run). Outputs
are compared with eager by the `same()` rule of test/python/models.py
before anything is timed; a model that does not match is reported, not
timed.

    /usr/bin/python3 bench/models_bench.py [--threads 2] [--batch 8]
        [--image 224] [--seq 512] [--only NAME] [--rounds 3] [--repeat 5]
        [--conv auto|im2col|direct|onednn]

Run it on an idle machine (`uptime` load < 1) and record the load: the
script prints it before and after. Needs the kiln package (PYTHONPATH=python
or installed) and the C library (build/lib, or KILN_LIBRARY).
"""
import argparse
import math
import os
import sys
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
    ap.add_argument("--conv", default="",
                    help="Kiln's convolution implementation (kiln-cpu{conv=...}: "
                         "auto, im2col, direct, onednn); default: the pipeline's")
    args = ap.parse_args()

    # Kiln's compiled code uses OpenMP; set before the library loads.
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
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

    print("load before: %s; threads %d; torch %s" % (
        loadavg(), args.threads, torch.__version__))
    print("| model | input | cold compile s | warm (cached) call s | eager ms "
          "| kiln ms | eager/kiln |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    ratios = []
    for name, make, shape in models:
        if args.only and args.only not in name:
            continue
        model = make()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        row = "| %s | %s |" % (name, "x".join(map(str, shape)))
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
                print(row + " failed: %s |" % str(e).splitlines()[0][:200])
                continue
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            opt(x)
            warm = time.perf_counter() - t0
            ok, how = same(out, expected, fp64_reference(model, x))
            if not ok:
                print(row + " %.2f | | | | mismatch: %s |" % (cold, how))
                continue

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
        ratios.append(te / tk)
        print(row + " %.2f | %.3f | %.2f | %.2f | %.2fx |" % (
            cold, warm, te * 1e3, tk * 1e3, te / tk), flush=True)
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print("geomean eager/kiln (inference): %.2fx over %d models" % (
            geo, len(ratios)))
    print("load after: %s" % loadavg())
    print("eager/kiln > 1 means Kiln is faster. Cold compile: the first "
          "call (capture, import, Kiln compile, one run); warm call: the "
          "second call (cache hit, one run).")


if __name__ == "__main__":
    main()
