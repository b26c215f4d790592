#!/usr/bin/python3
"""Builds the GPU check's corpus: every execution test case of
test/Execution/KT, compiled here for the GPU, with the interpreter's results.

    scripts/gpu/make_corpus.py [--out .gpu] [--jobs N] [--chip sm_90a]
    scripts/gpu/make_corpus.py --keep DIR --recompile-all   (after a codegen change)

1. Runs each test/Execution/KT suite (--dirs: more folders) with
   KILN_GPU_CORPUS set: every case
   `Suite.check` runs is saved (module, inputs, the interpreter's results,
   the check's fp64 reference; test/lib/kiln_testing.py).
2. Compiles each case into a CUDA package with `kiln-compile --backend=nvptx`
   (cubin for --chip; every 8th case as PTX, so the driver's JIT path runs
   too). A case that does not compile is listed with kiln-compile's first
   error line (the ops of docs/gpu.md's exception table fail here, cleanly).
3. Writes <out>/corpus.tar.xz (the cases, packages and index.json) for the
   GPU machine, where scripts/gpu/device_check.sh runs them through
   libkiln_rt (scripts/gpu/run_corpus.py) against the interpreter's results.

Needs the build (build/bin) and Debian's Python with NumPy and PyTorch.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_suites(corpus, jobs, dirs):
    # PYTHONSAFEPATH: a suite's folder must not shadow the standard library
    # (test/Execution/CPU/random.py), as under lit.
    env = dict(os.environ, KILN_GPU_CORPUS=corpus, KILN_CPU_SWEEP="0",
               PYTHONSAFEPATH="1",
               PYTHONPATH=os.path.join(ROOT, "test", "lib"),
               KILN_TOOLS_DIR=os.path.join(ROOT, "build", "bin"))
    suites = sorted(p for d in dirs for p in glob.glob(
        os.path.join(ROOT, "test", "Execution", d, "*.py")))

    def one(path):
        p = subprocess.run([sys.executable, path], env=env, capture_output=True,
                           text=True)
        last = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
        return os.path.basename(path), p.returncode, last

    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for name, rc, last in ex.map(one, suites):
            print("suite %-32s rc=%d %s" % (name, rc, last), flush=True)


def compile_case(args):
    d, chip, emit = args
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    case["dir"] = os.path.basename(d)
    case["emit"] = emit
    with open(os.path.join(d, "prog.mlir")) as f:
        if "kg.program" in f.read():
            # Captured programs of the CPU tests guard device "cpu".
            case["compiled"] = False
            case["error"] = "a kg.program (its guards are for the cpu)"
            return case
    cmd = [os.path.join(ROOT, "build", "bin", "kiln-compile"),
           os.path.join(d, "prog.mlir"), "--backend=nvptx", "--chip=" + chip,
           "--emit=" + emit, "-o", os.path.join(d, "pkg.so")]
    if case.get("entry"):
        cmd.append("--entry=" + case["entry"])
    p = subprocess.run(cmd, capture_output=True, text=True)
    case["dir"] = os.path.basename(d)
    case["emit"] = emit
    case["compiled"] = p.returncode == 0
    if p.returncode != 0:
        # The first diagnostic after kiln-compile's own line, without the
        # case's path.
        lines = [l.replace(d + "/", "") for l in p.stderr.splitlines()
                 if l.strip() and not l.rstrip().endswith("failed:")]
        case["error"] = (lines or ["exit %d" % p.returncode])[0][:300]
    return case


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, ".gpu"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--keep", help="keep the corpus folder here")
    ap.add_argument("--dirs", default="KT",
                    help="comma-separated folders of test/Execution whose "
                    "suites give the cases (default KT; e.g. KT,CPU)")
    ap.add_argument("--recompile-failed", action="store_true",
                    help="with --keep: compile again only the cases of the "
                    "kept corpus that did not compile (after a compiler fix)")
    ap.add_argument("--recompile-all", action="store_true",
                    help="with --keep: compile every case of the kept corpus "
                    "again (after a code generation change), without "
                    "rerunning the suites")
    ap.add_argument("--recompile-matching", metavar="REGEX",
                    help="with --keep: compile again the cases whose "
                    "prog.mlir matches REGEX (after a change to how those "
                    "ops compile, e.g. 'kt\\.(matmul|linear)\\b')")
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp(prefix="kiln-gpu-corpus-")
    corpus = os.path.join(tmp, "corpus")
    if a.recompile_failed or a.recompile_all or a.recompile_matching:
        with open(os.path.join(corpus, "index.json")) as f:
            old = {c["dir"]: c for c in json.load(f)["cases"]}
        pattern = re.compile(a.recompile_matching or "$^")

        def wanted(n, c):
            if a.recompile_all or (a.recompile_failed and not c["compiled"]):
                return True
            with open(os.path.join(corpus, n, "prog.mlir")) as f:
                return bool(pattern.search(f.read()))
        redo = [(os.path.join(corpus, n), a.chip, c["emit"])
                for n, c in sorted(old.items()) if wanted(n, c)]
        print("recompiling %d of %d cases" % (len(redo), len(old)), flush=True)
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            for c in ex.map(compile_case, redo):
                old[c["dir"]] = c
        cases = [old[n] for n in sorted(old)]
    else:
        shutil.rmtree(corpus, ignore_errors=True)
        os.makedirs(corpus)
        run_suites(corpus, a.jobs, a.dirs.split(","))
        dirs = sorted(glob.glob(os.path.join(corpus, "*")))
        work = [(d, a.chip, "isa" if i % 8 == 7 else "bin")
                for i, d in enumerate(dirs)]
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            cases = list(ex.map(compile_case, work))
    ok = sum(c["compiled"] for c in cases)
    print("%d cases, %d compiled for %s, %d did not compile" %
          (len(cases), ok, a.chip, len(cases) - ok))
    reasons = {}
    for c in cases:
        if not c["compiled"]:
            r = re.sub(r"^prog\.mlir:\d+:\d+: ", "", c["error"])
            r = r.split("error: ", 1)[-1]
            reasons.setdefault(r[:110], []).append(c["dir"])
    for r, ds in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print("  %4d x %s (e.g. %s)" % (len(ds), r, ds[0]))
    with open(os.path.join(corpus, "index.json"), "w") as f:
        json.dump({"chip": a.chip, "cases": cases}, f, indent=0)
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, "corpus.tar.xz")
    with tarfile.open(out, "w:xz") as t:
        t.add(corpus, arcname="corpus")
    print("wrote %s (%.1f MB)" % (out, os.path.getsize(out) / 1e6))
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
