#!/usr/bin/python3
"""Kiln CPU cold-compile benchmark (issue 13, section 1): compile time against
program size.

Generates a chain of blocks `linear -> gelu -> layer_norm -> add` on 64x256
(4 kt ops per block; every block reads the same weight arguments, as a
repeated layer) for N kt ops, N in --sizes (default 100 200 400 1000), and
runs each through `kiln-run --backend=cpu --stats` in a fresh process (cold:
no kernel cache, an empty disk cache directory), then again in another
process on that directory (warm: the disk cache gives the compiled code;
docs/codegen.md "Disk cache"). Prints per N: the cold process's wall time,
the compile time that kiln-run reports (its phases), the per-op cost, the
warm process's wall time and its compile (load) time and, last, the ratio
of the cold per-op cost at the largest N to that at the smallest. With --passes, also
runs `kiln-opt -kiln-cpu --mlir-timing` on each program and prints the
passes that take the most time (the per-pass split).

    /usr/bin/python3 bench/compile_bench.py [--sizes 100 200 400 1000]
        [--passes] [--top 6] [--timeout 600] [--keep DIR] [--no-warm]

The machine is shared: compare growth ratios, not absolute seconds, and note
the load (printed first, from /proc/loadavg).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
KILN_RUN = os.path.join(BUILD, "bin", "kiln-run")
KILN_OPT = os.path.join(BUILD, "bin", "kiln-opt")

ROWS, D = 64, 256


def T(*shape):
    return "tensor<%sxf32>" % "x".join(map(str, shape))


def chain(nops):
    """A chain of nops // 4 blocks (nops rounded down to a multiple of 4)."""
    x, w, v = T(ROWS, D), T(D, D), T(D)
    lines = ["func.func @main(%%x: %s, %%w: %s, %%b: %s, %%g: %s, %%beta: %s) -> %s {"
             % (x, w, v, v, v, x)]
    # Weights arrive ~N(0, 1): scale like an initialized layer.
    lines.append("  %s = kt.constant {value = dense<0.0625> : tensor<f32>} : () -> tensor<f32>")
    lines.append("  %%ws = kt.mul %%w, %%s : (%s, tensor<f32>) -> %s" % (w, w))
    cur = "%x"
    for i in range(nops // 4):
        lines += [
            "  %%l%d = kt.linear %s, %%ws, %%b : (%s, %s, %s) -> %s" % (i, cur, x, w, v, x),
            "  %%a%d = kt.gelu %%l%d : (%s) -> %s" % (i, i, x, x),
            "  %%n%d = kt.layer_norm %%a%d weight %%g bias %%beta {normalized_shape = [%d]}"
            " : (%s, %s, %s) -> %s" % (i, i, D, x, v, v, x),
            "  %%r%d = kt.add %%n%d, %s : (%s, %s) -> %s" % (i, i, cur, x, x, x),
        ]
        cur = "%%r%d" % i
    lines.append("  return %s : %s" % (cur, x))
    lines.append("}")
    return "\n".join(lines) + "\n"


def run_kiln(path, timeout, cache_dir="off"):
    t0 = time.time()
    try:
        p = subprocess.run([KILN_RUN, path, "--entry=main", "--backend=cpu",
                            "--random-inputs", "--stats",
                            "--cache-dir=" + cache_dir],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(wall=None, error="timed out after %d s" % timeout)
    wall = time.time() - t0
    if p.returncode != 0:
        return dict(wall=wall, error=p.stderr.strip().splitlines()[-1:])
    res = dict(wall=wall, phases={}, stats=p.stdout)
    m = (re.search(r"compile phases: (.*)", p.stdout) or
         re.search(r"compile time: (.*)", p.stdout))
    if m:
        # "kiln-cpu 1.2 s, jit 0.3 s" or "phase 1.2 s, phase 0.1 s, ..."
        for name, sec in re.findall(r"([A-Za-z][\w -]*?) ([0-9.]+) s", m.group(1)):
            res["phases"][name.strip()] = float(sec)
    m = re.search(r"kernels: (.*)", p.stdout)
    if m:
        res["kernels"] = m.group(1).strip()
    m = re.search(r"compile time: kiln-cpu ([0-9.]+) s, jit ([0-9.]+) s", p.stdout)
    if m:
        res["compile"] = float(m.group(1)) + float(m.group(2))
    res["disk_hit"] = "code loaded from the disk cache" in p.stdout
    return res


def run_passes(path, timeout, top):
    try:
        p = subprocess.run([KILN_OPT, path, "-kiln-cpu", "--mlir-timing",
                            "-o", os.devnull], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timed out after %d s" % timeout
    rows = []
    for line in p.stderr.splitlines():
        # "  0.10 ( 12.8%)  [0.09 ( 11.0%)]  Name": the last column pair is
        # the wall time (user time comes first when threads ran).
        cols = re.findall(r"([0-9.]+) \(\s*([0-9.]+)%\)", line)
        name = re.sub(r"^(\s*[0-9.]+ \(\s*[0-9.]+%\))+\s*", "", line).strip()
        if cols and name and not name.startswith(("Total", "'", "Output", "Parser",
                                                  "Verifier", "Rest")):
            rows.append((float(cols[-1][0]), float(cols[-1][1]), name))
    total = re.search(r"Total Execution Time: ([0-9.]+)", p.stderr)
    rows.sort(reverse=True)
    # Pass managers nest: keep the leaves' names (a pass appears once per
    # nesting level it runs at; adaptors like 'func.func' pipelines are kept
    # too, they show where the time of nested passes goes).
    parts = ["%s %.0f%%" % (name, pct) for _, pct, name in rows[:top]]
    return "total %ss: %s" % (total.group(1) if total else "?", ", ".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400, 1000])
    ap.add_argument("--passes", action="store_true",
                    help="also kiln-opt -kiln-cpu --mlir-timing per size")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--keep", help="write the generated programs into DIR")
    ap.add_argument("--no-warm", action="store_true",
                    help="cold runs only (no disk cache)")
    args = ap.parse_args()
    with open("/proc/loadavg") as f:
        print("load average: %s" % " ".join(f.read().split()[:3]))
    tmp = args.keep or tempfile.mkdtemp(prefix="kiln-compile-bench-")
    os.makedirs(tmp, exist_ok=True)
    print("%6s %9s %10s %9s %9s %9s  %s" % ("ops", "wall s", "compile s", "ms/op",
                                          "warm s", "load s", "phases (s)"))
    per_op = {}
    for n in args.sizes:
        path = os.path.join(tmp, "chain%d.mlir" % n)
        with open(path, "w") as f:
            f.write(chain(n))
        cache = "off" if args.no_warm else os.path.join(tmp, "cache%d" % n)
        if not args.no_warm:
            shutil.rmtree(cache, ignore_errors=True)
        r = run_kiln(path, args.timeout, cache)
        warm = "-", "-"
        if not args.no_warm and not r.get("error"):
            w = run_kiln(path, args.timeout, cache)
            if w.get("error"):
                warm = "error", "-"
            elif not w["disk_hit"]:
                warm = "%.2f" % w["wall"], "no hit"
            else:
                warm = "%.2f" % w["wall"], "%.3f" % w["compile"]
        if r.get("error"):
            print("%6d %9s %10s %9s %9s %9s  %s" % (n, "%.2f" % r["wall"] if r["wall"] else "-",
                                                   "-", "-", "-", "-", r["error"]))
            continue
        compile_s = sum(r["phases"].values())
        per_op[n] = r["wall"] / n
        phases = ", ".join("%s %.2f" % kv for kv in r["phases"].items())
        if r.get("kernels"):
            phases += "; kernels: " + r["kernels"]
        print("%6d %9.2f %10.2f %9.2f %9s %9s  %s" % (n, r["wall"], compile_s,
                                                     1e3 * r["wall"] / n, warm[0],
                                                     warm[1], phases))
        sys.stdout.flush()
        if args.passes:
            print("       passes: " + run_passes(path, args.timeout, args.top))
            sys.stdout.flush()
    if len(per_op) >= 2:
        lo, hi = min(per_op), max(per_op)
        print("per-op cost at %d ops / at %d ops: %.2fx" % (hi, lo, per_op[hi] / per_op[lo]))
    with open("/proc/loadavg") as f:
        print("load average: %s" % " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
