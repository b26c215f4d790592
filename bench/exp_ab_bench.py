#!/usr/bin/python3
"""A/B of Kiln builds or kiln-run options on the exp-heavy kernels (ex23).

Each config is NAME=BUILD_DIR[:extra kiln-run args]; every round runs every
case under every config, interleaved (case by case, config by config), with
`kiln-run --backend=cpu --repeat=R --cpu-threads=T`, and keeps the minimum
kernel time of the round. Printed per case: the minimum over rounds, each
round's minimum, "% of copy" (the copy kernel `kt.neg` of the same shape,
same config and round, reads and writes the tensor once: a kernel that only
reads, such as cross_entropy, runs at 200% at the same rate) and the ratio
to the first config. The machine's load (/proc/loadavg) is printed per
round.

    /usr/bin/python3 bench/exp_ab_bench.py \
        main=/work/main/build ex23=build "mlir-exp=build:--cpu-fast-exp=false" \
        [--threads 1] [--repeat 30] [--rounds 3] [--only softmax]
"""
import argparse
import os
import re
import subprocess
import tempfile

import numpy as np


def T(shape, e="f32"):
    return "tensor<%sx%s>" % ("x".join(map(str, shape)), e)


def unary(op, shape, extra=""):
    t = T(shape)
    return ("func.func @main(%%x: %s) -> %s {\n  %%0 = kt.%s %%x%s : (%s) -> %s\n"
            "  return %%0 : %s\n}\n") % (t, t, op, extra, t, t, t)


def cross_entropy(n, c):
    return ("func.func @main(%%x: %s, %%t: %s) -> tensor<f32> {\n"
            "  %%0 = kt.cross_entropy %%x, %%t : (%s, %s) -> tensor<f32>\n"
            "  return %%0 : tensor<f32>\n}\n") % (T((n, c)), T((n,), "i64"),
                                                  T((n, c)), T((n,), "i64"))


# name, mlir, input shapes (("classes", c) for targets), copy shape
CASES = [
    ("exp 4096x4096", unary("exp", (4096, 4096)), [(4096, 4096)], (4096, 4096)),
    ("exp 256x1024 (1 MiB, in L2)", unary("exp", (256, 1024)), [(256, 1024)], (256, 1024)),
    ("sigmoid 4096x4096", unary("sigmoid", (4096, 4096)), [(4096, 4096)], (4096, 4096)),
    ("softmax 4096x4096", unary("softmax", (4096, 4096), " {dim = -1}"), [(4096, 4096)],
     (4096, 4096)),
    ("log_softmax 4096x4096", unary("log_softmax", (4096, 4096), " {dim = -1}"),
     [(4096, 4096)], (4096, 4096)),
    ("cross_entropy 4096x4096", cross_entropy(4096, 4096), [(4096, 4096), ("classes", 4096)],
     (4096, 4096)),
    ("cross_entropy 4096x32000", cross_entropy(4096, 32000),
     [(4096, 32000), ("classes", 32000)], (4096, 32000)),
]


def run(build, extra, mlir_path, inputs, threads, repeat):
    args = [os.path.join(build, "bin", "kiln-run"), mlir_path, "--backend=cpu",
            "--repeat=%d" % repeat, "--cpu-threads=%d" % threads] + inputs + extra
    r = subprocess.run(args, capture_output=True, text=True,
                       env=dict(os.environ, KILN_CACHE_DIR="off"))
    if r.returncode:
        raise RuntimeError(r.stderr.strip()[-300:])
    m = re.search(r"kernel time: median ([0-9.]+) s, min ([0-9.]+) s", r.stdout)
    return float(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    configs = []
    for c in args.configs:
        name, spec = c.split("=", 1)
        build, _, extra = spec.partition(":")
        configs.append((name, build, extra.split()))
    rng = np.random.default_rng(0)
    cases = [c for c in CASES if args.only in c[0]]
    times = {}  # (case, config) -> [per-round min]
    copies = {}  # (shape, config) -> [per-round min]
    with tempfile.TemporaryDirectory(prefix="kiln-exp-ab-") as tmp:
        files = {}
        for name, mlir, shapes, copy_shape in cases:
            stem = os.path.join(tmp, re.sub(r"[^a-z0-9]+", "_", name))
            with open(stem + ".mlir", "w") as f:
                f.write(mlir)
            ins = []
            for i, s in enumerate(shapes):
                if s[0] == "classes":
                    x = rng.integers(0, s[1], shapes[0][0]).astype(np.int64)
                else:
                    x = rng.standard_normal(s).astype(np.float32)
                np.save("%s_in%d.npy" % (stem, i), x)
                ins.append("--input=%s_in%d.npy" % (stem, i))
            cstem = os.path.join(tmp, "copy_%dx%d" % copy_shape)
            if not os.path.exists(cstem + ".mlir"):
                with open(cstem + ".mlir", "w") as f:
                    f.write(unary("neg", copy_shape))
                np.save(cstem + "_in0.npy", rng.standard_normal(copy_shape).astype(np.float32))
            files[name] = (stem + ".mlir", ins, cstem)
        for r in range(args.rounds):
            print("round %d: load %s" % (r + 1, open("/proc/loadavg").read().split()[:3]),
                  flush=True)
            for name, _, _, copy_shape in cases:
                path, ins, cstem = files[name]
                for cname, build, extra in configs:
                    key = (copy_shape, cname)
                    if len(copies.get(key, [])) <= r:
                        copies.setdefault(key, []).append(
                            run(build, extra, cstem + ".mlir", ["--input=" + cstem + "_in0.npy"],
                                args.threads, args.repeat))
                    times.setdefault((name, cname), []).append(
                        run(build, extra, path, ins, args.threads, args.repeat))
            print("  done: load %s" % open("/proc/loadavg").read().split()[:3], flush=True)
    print("\n%d thread(s), min kernel time of %d calls per round, %d rounds interleaved\n" % (
        args.threads, args.repeat, args.rounds))
    print("| case | " + " | ".join("%s min ms (rounds) / %% of copy" % c[0] for c in configs) +
          " | " + " | ".join("%s / %s" % (c[0], configs[0][0]) for c in configs[1:]) + " |")
    print("|" + " --- |" * (1 + 2 * len(configs) - 1))
    for name, _, _, copy_shape in cases:
        cells, base = [], min(times[(name, configs[0][0])])
        for cname, _, _ in configs:
            t = times[(name, cname)]
            cp = min(copies[(copy_shape, cname)])
            cells.append("%.3g (%s) / %.0f%%" % (min(t) * 1e3, ", ".join("%.3g" % (x * 1e3) for x in t),
                                                  100 * cp / min(t)))
        ratios = ["%.2fx" % (base / min(times[(name, c[0])])) for c in configs[1:]]
        print("| %s | %s | %s |" % (name, " | ".join(cells), " | ".join(ratios)))
    print("\ncopy (kt.neg) min ms per config: " + "; ".join(
        "%s %s: %s" % (c[0], "x".join(map(str, s)), ", ".join(
            "%.3g" % (x * 1e3) for x in copies[(s, c[0])]))
        for s in sorted({cs[3] for cs in cases}) for c in configs))
    print("(ratio > 1: faster than %s)" % configs[0][0])


if __name__ == "__main__":
    main()
