#!/usr/bin/env python3
"""Runs the GPU check's corpus (scripts/gpu/make_corpus.py) on a GPU through
libkiln_rt alone, and compares each result with the interpreter's.

    python3 scripts/gpu/run_corpus.py CORPUS_DIR --library libkiln_rt.so.0
        [--json OUT.json] [--workers N]

Runs on the GPU machine (Python 3.12, PyTorch 2.x with CUDA, no LLVM/MLIR):
each case's package is loaded with runtime/python/kiln_rt.py, its .npy
inputs become contiguous torch CUDA tensors, the results come back as CUDA
tensors by DLPack and are compared on the host by the CPU sweep's rule
(test/lib/cpu_sweep.py's same()). Cases run in worker
processes: a crash or a sticky CUDA error (illegal address, ...) ends a
worker, the case is reported, and a new worker goes on with the next case.
Exits 1 when any compiled case fails.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def close(actual, interp, reference, elem):
    """test/lib/cpu_sweep.py's same() (PyTorch's rule, as the CPU sweep
    compares the CPU backend): integers and booleans exactly; floats
    allclose to the interpreter at the dtype's tolerance, else an RMSE
    against the check's fp64 reference at most 3x the interpreter's plus
    tol / 10. Returns (ok, message); a pass by the RMSE rule says so."""
    import numpy as np
    import cpu_sweep
    ok, message = cpu_sweep.same(actual, interp, elem, reference)
    if ok and elem in cpu_sweep.FLOAT_ELEMS:
        rtol, atol = cpu_sweep.TOLERANCES[elem]
        g = np.asarray(actual, dtype=np.float64)
        w = np.asarray(interp, dtype=np.float64)
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            i = tuple(int(x) for x in np.argwhere(bad)[0])
            message = ("allclose failed but within the RMSE rule: %d of %d "
                       "elements, first at %s: gpu %r interpreter %r" % (
                           int(bad.sum()), bad.size, i, g[i], w[i]))
    return ok, message.replace("cpu ", "gpu ")


def worker(corpus, library, names):
    """Runs cases; one JSON line per case on stdout."""
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "..", "runtime", "python"))
    sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "lib"))
    import kiln_rt
    kiln_rt.load_library(library)
    for name in names:
        d = os.path.join(corpus, name)
        with open(os.path.join(d, "case.json")) as f:
            case = json.load(f)
        print(json.dumps({"start": name}), flush=True)
        out = {"dir": name}
        t0 = time.time()
        try:
            pkg = kiln_rt.Package(os.path.join(d, "pkg.so"))
            sig = pkg.signature(pkg.entries[0])
            ins = []
            for i in range(case["inputs"]):
                # np.array keeps rank 0 (ascontiguousarray makes it 1-d).
                x = np.array(np.load(os.path.join(d, "in%d.npy" % i)), order="C")
                t = torch.from_numpy(x)
                if sig["args"][i][1] == "bf16":  # bf16 values saved as f32
                    t = t.to(torch.bfloat16)
                ins.append(t.cuda())
            res = pkg.run(pkg.entries[0], *ins)
            torch.cuda.synchronize()
            msgs = []
            if len(res) != case["results"]:
                msgs.append("%d results, expected %d" % (len(res), case["results"]))
            for i, r in enumerate(res[:case["results"]]):
                if r.device.type != "cuda":
                    msgs.append("result %d is on %s" % (i, r.device))
                ref = np.load(os.path.join(d, "ref%d.npy" % i))
                exp_path = os.path.join(d, "exp%d.npy" % i)
                exp = np.load(exp_path) if os.path.exists(exp_path) else None
                elem = sig["results"][i][0]
                if r.dtype == torch.bfloat16:
                    r = r.float()
                ok, m = close(r.cpu().numpy(), ref, exp, elem)
                if not ok:
                    msgs.append("result %d: %s" % (i, m))
                elif m:
                    out.setdefault("notes", []).append("result %d: %s" % (i, m))
            out["ok"] = not msgs
            if msgs:
                out["message"] = "; ".join(msgs)
            del res, ins
            pkg.close()
        except Exception as e:  # a libkiln_rt error: reported, go on
            out["ok"] = False
            out["message"] = "%s: %s" % (type(e).__name__, e)
        out["seconds"] = round(time.time() - t0, 4)
        print(json.dumps(out), flush=True)
        if not out["ok"] and "CUDA error" in out.get("message", ""):
            sys.exit(3)  # the context may be unusable: a fresh process goes on


def run_chunk(corpus, library, names, results):
    """Runs `names` in workers until all have a result."""
    todo = list(names)
    while todo:
        p = subprocess.run([sys.executable, __file__, corpus, "--library",
                            library, "--worker", "--names"] + todo,
                           capture_output=True, text=True)
        started = None
        for line in p.stdout.splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if "start" in r:
                started = r["start"]
            else:
                results[r["dir"]] = r
                started = None
        if started:  # died inside a case
            results[started] = {"dir": started, "ok": False,
                                "message": "worker died (exit %d): %s" % (
                                    p.returncode, p.stderr.strip()[-300:])}
        todo = [n for n in todo if n not in results]
        if p.returncode not in (0, 3) and not started and todo:
            for n in todo:
                results[n] = {"dir": n, "ok": False,
                              "message": "worker failed before the case: " +
                              p.stderr.strip()[-300:]}
            todo = []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--library", required=True)
    ap.add_argument("--json")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--names", nargs="*", default=[])
    a = ap.parse_args()
    if a.worker:
        worker(a.corpus, a.library, a.names)
        return
    with open(os.path.join(a.corpus, "index.json")) as f:
        index = json.load(f)
    cases = [c for c in index["cases"] if c["compiled"]]
    skipped = [c for c in index["cases"] if not c["compiled"]]
    names = [c["dir"] for c in cases]
    chunks = [names[i::a.workers] for i in range(a.workers)]
    results = {}
    import threading
    t0 = time.time()
    threads = [threading.Thread(target=run_chunk,
                                args=(a.corpus, a.library, ch, results))
               for ch in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    by = {c["dir"]: c for c in cases}
    failed = [r for r in results.values() if not r["ok"]]
    rmse = [r for r in results.values() if r["ok"] and r.get("notes")]
    per_suite = {}
    for n, r in results.items():
        s = per_suite.setdefault(by[n]["suite"], [0, 0])
        s[0 if r["ok"] else 1] += 1
    for s, (p, f) in sorted(per_suite.items()):
        print("%-30s %4d passed %4d failed" % (s, p, f))
    for r in sorted(failed, key=lambda r: r["dir"]):
        c = by[r["dir"]]
        print("FAIL %s [%s, %s]: %s" % (r["dir"], c["label"][:80], c["emit"],
                                        r.get("message", "")[:400]))
    for r in sorted(rmse, key=lambda r: r["dir"]):
        print("RMSE %s [%s]: %s" % (r["dir"], by[r["dir"]]["label"][:80],
                                    r["notes"][0][:300]))
    print("gpu corpus: %d cases run on the GPU: %d passed (%d of them by the "
          "RMSE rule), %d failed; %d did not compile for the GPU (not run); "
          "%.1f s" % (len(results), len(results) - len(failed), len(rmse),
                      len(failed), len(skipped), wall))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"results": results, "not_compiled": skipped,
                       "wall_s": wall}, f)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
