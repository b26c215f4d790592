#!/usr/bin/env python3
"""Runs PyTorch's OpInfo samples through Kiln (test/python/opinfo_sweep.py
says what is run and compared) and writes the results.

    KILN_BUILD_DIR=$PWD/build PYTHONPATH=python \\
      nice /usr/bin/python3 scripts/opinfo_sweep.py --backends eager,aten \\
      --results /tmp/opinfo-eager.tsv
    ... --backends cpu --results /tmp/opinfo-cpu.tsv
    /usr/bin/python3 scripts/opinfo_sweep.py --report \\
      /tmp/opinfo-eager.tsv /tmp/opinfo-cpu.tsv

--update --ops OPS reruns those ops into the committed results
(test/python/opinfo_results.tsv, what the doc and the expectations are
generated from) and regenerates both: run it after a fix.

A sweep appends one line per (op, dtype, sample, backend) to --results (a
sweep that is stopped and restarted with the same file goes on where it
stopped). --report reads result files and writes docs/opinfo.md (the
generated report) and test/python/opinfo_expected.txt (the expectations
test_opinfo.py checks).

Filters: --ops (comma-separated keys or prefixes), --dtypes, --max-samples
N (the first N samples of each (op, dtype)), --shard K/N (every Nth op),
--reference (reference_inputs instead of sample_inputs).
"""

import argparse
import collections
import os
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("KILN_CACHE_DIR", "off")

import opinfo_sweep as S  # noqa: E402

DOC = os.path.join(ROOT, "docs", "opinfo.md")
EXPECTED = os.path.join(ROOT, "test", "python", "opinfo_expected.txt")
RESULTS = os.path.join(ROOT, "test", "python", "opinfo_results.tsv")


def read_results(paths):
    """{(op, dtype, backend): {index: (status, msg)}}, {(op, dtype):
    nsamples}, meta lines."""
    res = collections.defaultdict(dict)
    counts = {}
    meta = []
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("#"):
                    meta.append(line[1:].strip())
                    continue
                parts = line.split("\t")
                if len(parts) < 6:
                    continue
                key, dt, be, n, i, st = parts[:6]
                msg = parts[6] if len(parts) > 6 else ""
                res[(key, dt, be)][int(i)] = (st, msg)
                counts[(key, dt)] = int(n)
    return res, counts, meta


def sweep(args):
    import torch
    torch.set_num_threads(1)
    db = S.op_db()
    backends = args.backends.split(",")
    dtypes = args.dtypes.split(",") if args.dtypes else S.DTYPE_NAMES
    done = set()
    if os.path.exists(args.results):
        res, _, _ = read_results([args.results])
        for (key, dt, be), r in res.items():
            for i in r:
                done.add((key, dt, be, i))
    out = open(args.results, "a", buffering=1)
    out.write("# sweep %s: backends %s, dtypes %s, max-samples %s, "
              "shard %s, ops %s, reference %s; load %s\n" % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  args.backends, ",".join(dtypes), args.max_samples,
                  args.shard, args.ops, args.reference,
                  os.getloadavg()[0]))
    ops = db
    if args.ops:
        wanted = args.ops.split(",")
        ops = [op for op in db if any(S.op_key(op) == w or
                                      S.op_key(op).startswith(w + ".")
                                      for w in wanted)]
    if args.shard:
        k, n = map(int, args.shard.split("/"))
        ops = [op for j, op in enumerate(ops) if j % n == k]
    S.preload()
    t0 = time.time()
    for j, op in enumerate(ops):
        key = S.op_key(op)
        items = []
        nsamples = {}
        for dt in S.op_dtypes(op):
            if dt not in dtypes:
                continue
            try:
                n = len(S.samples(op, dt, args.reference))
            except Exception as e:  # noqa: BLE001
                print("%s %s: samples raised %s" % (key, dt, e),
                      file=sys.stderr)
                continue
            nsamples[dt] = n
            idx = range(n if args.max_samples is None
                        else min(n, args.max_samples))
            for be in backends:
                items += [(dt, be, i) for i in idx
                          if (key, dt, be, i) not in done]
        if not items:
            continue
        if S.skip_reason(key):
            r = {it: ("skip", S.skip_reason(key)) for it in items}
        else:
            r = S.run_task([(key,) + it for it in items],
                           timeout=args.timeout, reference=args.reference)
            r = {it[1:]: v for it, v in r.items()}
        for it in items:
            dt, be, i = it
            st, msg = r[it]
            out.write("%s\t%s\t%s\t%d\t%d\t%s\t%s\n" % (
                key, dt, be, nsamples[dt], i, st, msg))
        print("[%d/%d] %s: %d runs (%.0f s)" % (
            j + 1, len(ops), key, len(items), time.time() - t0), flush=True)
    out.write("# done %s, %.0f s, load %s\n" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        time.time() - t0, os.getloadavg()[0]))


def report(paths, check=False):
    db = S.op_db()
    res, counts, meta = read_results(paths)
    keys_order = [S.op_key(op) for op in db]
    backends = [b for b in S.BACKENDS if any(k[2] == b for k in res)]
    # Expectations.
    lines = []
    for key in keys_order:
        for dt in S.DTYPE_NAMES:
            for be in backends:
                r = res.get((key, dt, be))
                if not r:
                    continue
                lines.append(S.format_line(key, dt, be, r))
    expected_text = (
        "# generated by scripts/opinfo_sweep.py --report, do not "
        "edit.\n# <op> <dtype> <backend> <worst status> <samples> "
        "[<sample>:<status>,... for samples not passing]\n" +
        "\n".join(lines) + "\n")
    # Totals.
    tot = {b: collections.Counter() for b in backends}
    for (key, dt, be), r in res.items():
        for st, _ in r.values():
            tot[be][st] += 1
    ran_ops = sorted({k[0] for k in res}, key=keys_order.index)
    ops_pass = {b: 0 for b in backends}
    ops_some = {b: 0 for b in backends}
    per_op = {}
    for key in ran_ops:
        row = {}
        for be in backends:
            c = collections.Counter()
            reasons = collections.Counter()
            for dt in S.DTYPE_NAMES:
                for i, (st, msg) in res.get((key, dt, be), {}).items():
                    c[st] += 1
                    if st != "pass" and st != "skip":
                        reasons[(st, msg)] += 1
                    elif st == "skip":
                        reasons[(st, msg)] += 1
            row[be] = (c, reasons)
            ran = c["pass"] + c["mismatch"] + c["unsupported"] + \
                c["error"] + c["crash"]
            if ran and c["pass"] == ran:
                ops_pass[be] += 1
            if c["pass"]:
                ops_some[be] += 1
        per_op[key] = row
    out = []
    w = out.append
    w("<!-- generated by scripts/opinfo_sweep.py --report, do not edit -->")
    w("# PyTorch's OpInfo samples through Kiln")
    w("")
    w("Generated, do not edit: `scripts/opinfo_sweep.py` runs every OpInfo "
      "of PyTorch 1.13's `op_db` (its CPU dtypes among f32, f64, f16, bf16, "
      "int64, int32, int16, int8, uint8, bool; its `sample_inputs`) through "
      "Kiln and writes this page and `test/python/opinfo_expected.txt` "
      "(`test/python/test_opinfo.py` checks them; "
      "`test/python/opinfo_sweep.py` says what is compared). Backends: "
      "`eager` = `kiln.compile(fn, backend=\"eager\", fullgraph=True)` "
      "(the interpreter), `cpu` = the same with `backend=\"cpu\"`, `aten` = "
      "`make_fx(fn)` then `kiln.backend(gm, ..., backend=\"eager\")`. "
      "Compared with eager PyTorch by `torch.testing.assert_close` "
      "(default per-dtype tolerances, shapes and dtypes exact).")
    w("")
    w("Statuses: **pass**; **mismatch** (shape, dtype or values differ: a "
      "defect); **unsupported** (`kiln.Unsupported` or a KilnError refusal, "
      "its first line recorded); **error** (another exception: a defect); "
      "**crash** (the child process died or timed out: a defect); **skip** "
      "(not comparable: random ops, uninitialized memory, samples eager "
      "PyTorch itself rejects).")
    w("")
    w("Four notes turn a difference into a pass (counted under Totals): "
      "**ties** (sort/argsort/msort/topk/kthvalue/mode/median/"
      "nanmedian without `stable=True`: an index that names another "
      "element equal to the one PyTorch's index names; which tie an index "
      "picks is not in these ops' contract); **f32** (an f16/bf16 "
      "result that differs from eager's but equals PyTorch's own "
      "computation of the sample in float32 rounded once to the dtype: "
      "Kiln accumulates f16/bf16 products and reductions in f32, issue "
      "16, where PyTorch 1.13's CPU kernels for bmm/baddbmm/addbmm "
      "accumulate in the low dtype); **f64** (for the special "
      "functions only, test/python/opinfo_sweep.py's F64_OPS: a result "
      "that equals PyTorch's own computation of the sample in float64 "
      "rounded to the dtype: kt.special and kt.zeta compute in double, "
      "where PyTorch 1.13's float32 kernels lose digits near poles and in "
      "tails, e.g. polygamma at negative integers, erfcx(-9.3)); "
      "**order** (unique with `sorted=False`: the same values, counts and "
      "`values[inverse]` once both sides are sorted; PyTorch leaves that "
      "order to the kernel, 1.13's CPU one iterates a hash set, Kiln's "
      "values are sorted, docs/python.md). No tolerance is loosened.")
    w("")
    w("Run it (results append to a file; a stopped sweep resumes; "
      "`--shard K/N` splits the op list, `--ops`, `--dtypes`, "
      "`--max-samples`, `--reference` for `reference_inputs`):")
    w("")
    w("```sh")
    w("KILN_BUILD_DIR=$PWD/build PYTHONPATH=python nice /usr/bin/python3 "
      "scripts/opinfo_sweep.py --shard 0/2 --max-samples 1 "
      "--results /tmp/opinfo-0.tsv   # and --shard 1/2")
    w("/usr/bin/python3 scripts/opinfo_sweep.py --report /tmp/opinfo-0.tsv "
      "/tmp/opinfo-1.tsv   # this page and the expectations")
    w("/usr/bin/python3 scripts/opinfo_sweep.py --update --ops cross,diff"
      "   # after a fix: rerun ops into test/python/opinfo_results.tsv")
    w("KILN_BUILD_DIR=$PWD/build PYTHONPATH=python nice /usr/bin/python3 "
      "scripts/opinfo_sweep.py --recheck --results /tmp/recheck.tsv   # "
      "the re-audit: every deviation of the expectations swept again")
    w("```")
    w("")
    w("## Totals")
    w("")
    w("Runs recorded:")
    w("")
    for m in meta:
        w("* " + m)
    w("")
    w("OpInfos in op_db: %d; with a supported dtype in the set: %d; "
      "swept: %d." % (len(db), sum(1 for op in db if S.op_dtypes(op)),
                      len(ran_ops)))
    w("")
    w("| backend | samples | pass | mismatch | unsupported | error | crash "
      "| skip | OpInfos all pass | OpInfos with a pass |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
      "---: |")
    notes = {b: collections.Counter() for b in backends}
    for (key, dt, be), r in res.items():
        for st, msg in r.values():
            if st == "pass" and msg.startswith(S.F32_NOTE):
                notes[be]["f32"] += 1
            elif st == "pass" and msg.startswith(S.TIE_NOTE):
                notes[be]["ties"] += 1
            elif st == "pass" and msg.startswith(S.F64_NOTE):
                notes[be]["f64"] += 1
            elif st == "pass" and msg.startswith(S.ORDER_NOTE):
                notes[be]["order"] += 1
    for be in backends:
        t = tot[be]
        w("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |" % (
            be, sum(t.values()), t["pass"], t["mismatch"],
            t["unsupported"], t["error"], t["crash"], t["skip"],
            ops_pass[be], ops_some[be]))
    w("")
    w("Passes with a note: %s." % "; ".join(
        "%s %d f32, %d f64, %d ties, %d order" % (
            be, notes[be]["f32"], notes[be]["f64"], notes[be]["ties"],
            notes[be]["order"]) for be in backends))
    w("")
    w("## Remaining deviations")
    w("")
    w("Every OpInfo that does not pass on some backend, by the reason it "
      "is kept (test/python/opinfo_sweep.py's DEVIATION_REASONS; "
      "test_opinfo.py fails on a deviation without one). Wrong answers "
      "are fixed, not kept: a mismatch below says why it is not one.")
    w("")
    devs = collections.defaultdict(list)
    for key in ran_ops:
        bad = collections.Counter()
        for be in backends:
            c, _ = per_op[key][be]
            for st in S.DEFECTS + ("unsupported",):
                if c[st]:
                    bad[(be, st)] += c[st]
        if not bad:
            continue
        why = S.deviation_reason(key)
        devs[why[0] if why else None].append((key, bad))
    for name, reason, _ in S.DEVIATION_REASONS + ((None, "**no reason "
                                                   "recorded**", ()),):
        if not devs.get(name):
            continue
        w("* **%s** (%d OpInfos): %s" % (name or "unexplained",
                                          len(devs[name]), reason))
        w("")
        w("  " + "; ".join("`%s` (%s)" % (key, ", ".join(
            "%s %d %s" % (be, n, st) for (be, st), n in sorted(
                bad.items(), key=lambda x: backends.index(x[0][0]))))
            for key, bad in devs[name]))
        w("")
    w("## Per OpInfo")
    w("")
    w("Counts are pass/mismatch/unsupported/error/crash/skip over the "
      "dtypes and samples swept; then each distinct non-passing outcome "
      "with its sample count (the first line of the message).")
    w("")
    for key in ran_ops:
        row = per_op[key]
        w("### `%s`" % key)
        w("")
        dts = sorted({k[1] for k in res if k[0] == key},
                     key=S.DTYPE_NAMES.index)
        w("dtypes: %s" % ", ".join(dts))
        w("")
        for be in backends:
            c, reasons = row[be]
            if not sum(c.values()):
                continue
            w("* %s: %d/%d/%d/%d/%d/%d" % (
                be, c["pass"], c["mismatch"], c["unsupported"], c["error"],
                c["crash"], c["skip"]))
            for (st, msg), n in reasons.most_common(6):
                w("  * %s x%d: %s" % (st, n, msg.replace("|", "\\|")
                                      .replace("`", "'")[:240]))
            if len(reasons) > 6:
                w("  * ... %d more distinct outcomes" % (len(reasons) - 6))
        w("")
    doc_text = "\n".join(out) + "\n"
    if check:
        stale = []
        for path, text in ((DOC, doc_text), (EXPECTED, expected_text)):
            with open(path) as f:
                if f.read() != text:
                    stale.append(os.path.relpath(path, ROOT))
        if stale:
            sys.exit("%s out of date: run scripts/opinfo_sweep.py --report "
                     "%s" % (" and ".join(stale),
                             os.path.relpath(RESULTS, ROOT)))
        print("docs/opinfo.md and test/python/opinfo_expected.txt are up "
              "to date")
        return
    for path, text in ((DOC, doc_text), (EXPECTED, expected_text)):
        with open(path, "w") as f:
            f.write(text)
    print("wrote %s and %s" % (DOC, EXPECTED))
    for be in backends:
        print(be, dict(tot[be]))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backends", default="eager,aten,cpu")
    p.add_argument("--dtypes")
    p.add_argument("--ops")
    p.add_argument("--max-samples", type=int)
    p.add_argument("--shard")
    p.add_argument("--reference", action="store_true")
    p.add_argument("--timeout", type=float, default=90.0)
    p.add_argument("--results", default="opinfo-results.tsv")
    p.add_argument("--report", nargs="+", metavar="RESULTS")
    p.add_argument("--check", action="store_true",
                   help="with --report: fail if the generated files differ")
    p.add_argument("--recheck", action="store_true",
                   help="rerun every (op, dtype, backend) that %s lists "
                   "as not passing (all its listed samples; --ops to "
                   "narrow) into --results: the re-audit of the "
                   "deviations" % os.path.relpath(EXPECTED, ROOT))
    p.add_argument("--update", action="store_true",
                   help="rerun --ops (their listed dtypes and samples) "
                   "into the committed results (%s) and regenerate the "
                   "report and the expectations from it" % os.path.relpath(
                       RESULTS, ROOT))
    args = p.parse_args()
    if args.recheck:
        recheck(args)
    elif args.update:
        update(args)
    elif args.report:
        report(args.report, args.check)
    else:
        sweep(args)


def recheck(args):
    """--recheck: the deviations of the expectations swept again, each
    (op, dtype, backend) with as many samples as listed; results appended
    to --results (a stopped recheck resumes)."""
    import torch
    torch.set_num_threads(1)
    exp = S.parse_expectations(EXPECTED)
    wanted = args.ops.split(",") if args.ops else None
    done = set()
    if os.path.exists(args.results):
        res, _, _ = read_results([args.results])
        for (key, dt, be), r in res.items():
            done.update((key, dt, be, i) for i in r)
    todo = collections.defaultdict(list)
    for (key, dt, be), (st, n, _fails) in exp.items():
        if st in ("pass", "skip"):
            continue
        if wanted and not any(key == w or key.startswith(w + ".")
                              for w in wanted):
            continue
        todo[key] += [(key, dt, be, i) for i in range(n)
                      if (key, dt, be, i) not in done]
    out = open(args.results, "a", buffering=1)
    out.write("# recheck %s: the deviations of %s, ops %s; load %s\n" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        os.path.relpath(EXPECTED, ROOT), args.ops, os.getloadavg()[0]))
    S.preload()
    t0 = time.time()
    keys = [S.op_key(op) for op in S.op_db()]
    for j, key in enumerate(sorted(todo, key=keys.index)):
        items = todo[key]
        r = S.run_task(items, timeout=args.timeout)
        for it in items:
            key_, dt, be, i = it
            st, msg = r[it]
            out.write("%s\t%s\t%s\t%d\t%d\t%s\t%s\n" % (
                key, dt, be, exp[(key, dt, be)][1], i, st, msg))
        print("[%d/%d] %s: %d runs (%.0f s)" % (
            j + 1, len(todo), key, len(items), time.time() - t0),
            flush=True)
    out.write("# done %s, %.0f s, load %s\n" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        time.time() - t0, os.getloadavg()[0]))


def update(args):
    """--update: the ops' lines of the committed results are dropped and
    swept again (dtypes and sample counts as listed), then --report."""
    if not args.ops:
        sys.exit("--update needs --ops")
    wanted = args.ops.split(",")
    keep, runs = [], collections.defaultdict(set)
    with open(RESULTS) as f:
        for line in f:
            key = line.split("\t", 1)[0]
            if not line.startswith("#") and any(
                    key == w or key.startswith(w + ".") for w in wanted):
                parts = line.split("\t")
                runs[(key, parts[1])].add(int(parts[4]))
                continue
            keep.append(line)
    with open(RESULTS, "w") as f:
        f.writelines(keep)
    if not args.dtypes:
        args.dtypes = ",".join(sorted({dt for _, dt in runs},
                                      key=S.DTYPE_NAMES.index)) or None
    if args.max_samples is None:
        args.max_samples = max((max(v) + 1 for v in runs.values()),
                               default=1)
    args.results = RESULTS
    sweep(args)
    report([RESULTS])


if __name__ == "__main__":
    main()
