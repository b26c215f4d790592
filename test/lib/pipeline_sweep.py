"""Runs every test program of the repository through every named pipeline.

    python3 -m pipeline_sweep ROOT_DIR... [--pipeline=P]... [--jobs=N] [-v]

Collects every `.mlir` file under the given directories. A file whose RUN
lines use `-split-input-file` is split at `// -----` into its chunks, like
kiln-opt does. A chunk is a program when `kiln-opt` parses and verifies it
(so the `-verify-diagnostics` inputs that the parser or a verifier rejects,
and files of `not kiln-opt` RUN lines that fail to parse, are skipped; a
valid program that some pass rejects on purpose is kept: a pipeline must
reject it cleanly too).

Each program is run through each pipeline (`kiln-opt -split-input-file
-PIPELINE`, one process per file and pipeline, files in parallel). Outcomes
per chunk:

* ok: exit 0 (the pass manager verifies the IR after every pass);
* diagnosed: exit 1 with errors that are all at a location in the program
  (`file:line:col` or a named location) and are not verifier failures of IR
  the pipeline built: allowed, listed with -v (e.g. "failed to legalize
  operation 'kt.alloc_ref'" in kiln-cpu, a pass precondition);
* failure: a crash (a signal, "PLEASE submit a bug report", an exit code
  above 1), an error at `loc(unknown)`, or a verifier failure of an op that
  the pipeline created (an error naming a non-kt/kg op, or an upstream
  pass's internal failure such as "op was not bufferized").

When a file's run crashes, its chunks are rerun one by one to name the
chunk. Exits 1 if any failure was found.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

KILN_OPT = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-opt")

# The named pipelines (and the passes that are one phase of them), as
# kiln-opt flags.
PIPELINES = [
    "-kiln-eager",
    "-kiln-aot-eager",
    "-kiln-functionalize",
    "-kiln-decompose",
    "-kiln-autodiff",
    "-kiln-fuse",
    "-kiln-cpu",
]

SPLIT = re.compile(r"^// -----\s*$", re.M)
EXPECTED = re.compile(r"//\s*expected-(error|warning|note|remark)\b.*$", re.M)
# "<file>:<line>:<col>: error: <message>"
DIAG = re.compile(r"^(.*?):(\d+):(\d+): error: (.*)$")
# An error kiln-opt prints with no source location.
UNKNOWN_LOC = re.compile(r"^(loc\(unknown\)|<unknown>|error): ")
# The op an error is about: "'tensor.expand_shape' op ...".
OP_NAMED = re.compile(r"^'([a-z_0-9]+)\.[a-z_0-9.]+' op ")
# Messages of upstream passes failing on IR that Kiln built: never a clean
# diagnosis of the user's program.
INTERNAL = [
    "op was not bufferized",
    "failed to bufferize",
    "operand type mismatch",
    "see current operation",
]
CLEAN_DIALECTS = {"kt", "kg"}


def run_opt(args, text=None, path=None, timeout=300):
    cmd = [KILN_OPT] + args + ([path] if path else ["-"])
    try:
        p = subprocess.run(cmd, input=text, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % timeout
    return p.returncode, p.stderr


def crashed(rc, err):
    return rc < 0 or rc > 1 or "PLEASE submit a bug report" in err or \
        "Stack dump" in err


def uses_split(text):
    return any("-split-input-file" in l for l in text.splitlines()
               if "RUN:" in l)


class Chunk:
    def __init__(self, path, index, first_line, text):
        self.path, self.index, self.first_line, self.text = \
            path, index, first_line, text
        self.last_line = first_line + text.count("\n")

    def label(self):
        return "%s:%d" % (self.path, self.first_line)


def chunks_of(path, text):
    if not uses_split(text):
        return [Chunk(path, 0, 1, EXPECTED.sub("// (annotation)", text))]
    out, line, pos = [], 1, 0
    for i, m in enumerate(list(SPLIT.finditer(text)) + [None]):
        end = m.start() if m else len(text)
        part = text[pos:end]
        # expected-* annotations are for -verify-diagnostics runs only.
        part = EXPECTED.sub("// (annotation)", part)
        out.append(Chunk(path, i, line, part))
        if m:
            line += text[pos:m.end()].count("\n")
            pos = m.end()
    return out


def padded(chunks, keep):
    """The file's text with the chunks not in `keep` blanked (same lines), so
    that diagnostics keep the original line numbers."""
    parts = []
    for c in chunks:
        parts.append(c.text if c.index in keep else "\n" * c.text.count("\n"))
    return "// -----".join(parts)


def chunk_at(chunks, line):
    for c in chunks:
        if c.first_line <= line <= c.last_line:
            return c
    return None


def diagnostics(err, name):
    """(line or None, message) for each error kiln-opt printed; line is the
    line in the program when the error's location is in file `name`."""
    out = []
    for l in err.splitlines():
        m = DIAG.match(l)
        if m:
            f = m.group(1)
            out.append((int(m.group(2)) if f == name else None, f,
                        m.group(4)))
        elif UNKNOWN_LOC.match(l) or " error: " in l and not m:
            out.append((None, "", l))
    return out


def classify(diag):
    """None for a clean diagnosis, else why it is a failure."""
    line, f, msg = diag
    if line is None and (not f or f.startswith("loc(unknown)")):
        return "error without a location: " + msg
    if any(s in msg for s in INTERNAL):
        return "internal error: " + msg
    m = OP_NAMED.match(msg)
    if m and m.group(1) not in CLEAN_DIALECTS:
        return "verifier failure of generated IR: " + msg
    return None


def valid_chunks(path, text, chunks):
    """The indices of the chunks that parse and verify."""
    if len(chunks) == 1:
        rc, _ = run_opt([], text=text)
        return {0} if rc == 0 else set()
    rc, err = run_opt(["-split-input-file"], text=text)
    bad, unmapped = set(), False
    if rc != 0:
        for line, f, _ in diagnostics(err, "<stdin>"):
            c = chunk_at(chunks, line) if line else None
            if c is None:
                unmapped = True
            else:
                bad.add(c.index)
    if unmapped or crashed(rc, err):
        bad = set()
        for c in chunks:
            if run_opt([], text=c.text)[0] != 0:
                bad.add(c.index)
    return {c.index for c in chunks} - bad


def sweep_file(path, pipelines):
    """[(pipeline, chunk label, outcome, detail)] for one file."""
    with open(path) as f:
        text = f.read()
    chunks = chunks_of(path, text)
    keep = valid_chunks(path, text, chunks)
    if not keep:
        return [], 0
    body = padded(chunks, keep)
    results = []
    for pipe in pipelines:
        args = ["-split-input-file", pipe, "-o", os.devnull]
        rc, err = run_opt(args, text=body)
        if rc == 0:
            continue
        if crashed(rc, err):
            # Name the chunk(s): rerun them one by one.
            for c in chunks:
                if c.index not in keep:
                    continue
                crc, cerr = run_opt([pipe, "-o", os.devnull],
                                    text="\n" * (c.first_line - 1) + c.text)
                if crashed(crc, cerr):
                    first = [l for l in cerr.splitlines() if l.strip()][:3]
                    results.append((pipe, c.label(), "failure",
                                    "crash (exit %d): %s" %
                                    (crc, " | ".join(first))))
                elif crc != 0:
                    results += judge(pipe, chunks, cerr)
            continue
        results += judge(pipe, chunks, err)
    return results, len(keep)


def judge(pipe, chunks, err):
    out = []
    for d in diagnostics(err, "<stdin>"):
        c = chunk_at(chunks, d[0]) if d[0] else None
        label = c.label() if c else chunks[0].path
        why = classify(d)
        if why:
            out.append((pipe, label, "failure", why))
        else:
            out.append((pipe, label, "diagnosed", d[2]))
    if not out:
        out.append((pipe, chunks[0].path, "failure",
                    "exit 1 without an error: " + err.strip()[:200]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--pipeline", action="append", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    pipelines = a.pipeline or PIPELINES
    files = []
    for root in a.roots:
        for d, _, names in os.walk(root):
            files += [os.path.join(d, n) for n in names if n.endswith(".mlir")]
    files.sort()
    failures, diagnosed, programs = [], [], 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for path, (res, n) in zip(files, ex.map(
                lambda p: sweep_file(p, pipelines), files)):
            programs += n
            for r in res:
                (failures if r[2] == "failure" else diagnosed).append(r)
    rel = lambda p: os.path.relpath(p)
    for pipe, label, _, why in failures:
        print("FAIL %s %s: %s" % (pipe, rel(label), why))
    if a.verbose:
        for pipe, label, _, msg in diagnosed:
            print("diagnosed %s %s: %s" % (pipe, rel(label), msg))
    print("pipeline sweep: %d files, %d programs, %d pipelines: %d failures, "
          "%d diagnosed errors" % (len(files), programs, len(pipelines),
                                   len(failures), len(diagnosed)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
