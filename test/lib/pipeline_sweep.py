"""Runs every test program of the repository through every named pipeline.

    python3 -m pipeline_sweep ROOT_DIR... [--pipeline=FLAG]... [--jobs=N] [-v]

Collects every `.mlir` file under the given directories. A file whose RUN
lines use `-split-input-file` is split at `// -----` into its chunks, like
kiln-opt does; `expected-*` annotations are dropped (they are for
-verify-diagnostics runs). A chunk is a program when `kiln-opt` parses and
verifies it: the inputs that the parser or a verifier rejects on purpose
are skipped, while a valid program that some pass rejects on purpose is
kept (a pipeline must reject it cleanly too).

Every program goes through every pipeline. To keep this cheap (kiln-opt's
start-up dominates), the programs of all files are concatenated into one
`-split-input-file` buffer, cut into --jobs parts run in parallel: one
kiln-opt process per part and pipeline. Diagnostics are mapped back to the
file and chunk by line. A part that crashes is rerun one chunk at a time
to name the chunk. Outcomes per chunk:

* ok: no error (the pass manager verifies the IR after every pass);
* diagnosed: errors that are all at a location of the program (a
  `file:line:col` or a named location) and about an op of the program (a
  kt/kg op, or an op written on that line): allowed, listed with -v (e.g.
  "failed to legalize operation 'kt.alloc_ref'" in kiln-cpu, a pass
  precondition);
* failure: a crash (a signal, "PLEASE submit a bug report", an exit code
  above 1, a time-out), an error without a location, an error naming an op
  that the program does not have there (a verifier failure of IR the
  pipeline built: "'tensor.expand_shape' op expected ...") or an upstream
  pass's internal failure ("op was not bufferized"), or a warning that a
  pattern set rewrote until its cap ("rewriting did not converge": correct
  IR, but seconds of compile time lost).

Exits 1 if there was a failure.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

KILN_OPT = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-opt")

# The named pipelines, and the passes that are whole phases of them (where
# they do not apply they must say so cleanly), as kiln-opt flags.
PIPELINES = [
    "-kiln-eager",
    "-kiln-aot-eager",
    "-kiln-functionalize",
    "-kiln-decompose",
    "-kiln-autodiff",
    "-kiln-fuse",
    "-kiln-cpu",
    "-kiln-cpu=fuse=false",
]

SEPARATOR = "// -----"
SPLIT = re.compile(r"^// -----\s*$", re.M)
EXPECTED = re.compile(r"//\s*expected-(error|warning|note|remark)\b.*$", re.M)
# "<file>:<line>:<col>: error: <message>"; a location without a file
# prints as "<unknown>:0: error: loc("name"): <message>".
DIAG = re.compile(r"^(.*?):(\d+):(\d+): error: (.*)$")
DIAG_ANY = re.compile(r"^(.*?):(\d+):(\d+): (?:error|warning): (.*)$")
NOT_CONVERGED = "rewriting did not converge"
NO_FILE = re.compile(r"^<unknown>:0: error: (.*)$")
NAMED = re.compile(r"^(loc\(.*?\)): (.*)$")
# The op an error is about: "'tensor.expand_shape' op ...".
OP_NAMED = re.compile(r"^'(([a-z_0-9]+)\.[a-z_0-9.]+)' op ")
# Messages of upstream passes failing on IR that Kiln built: never a clean
# diagnosis of the user's program.
INTERNAL = [
    "op was not bufferized",
    "failed to bufferize",
    "operand type mismatch",
]
CLEAN_DIALECTS = {"kt", "kg"}
TIMEOUT = 300


class Chunk:
    """One program: its `lines` (annotations dropped), from line
    `first_line` of `path`."""

    def __init__(self, path, first_line, lines):
        self.path, self.first_line, self.lines = path, first_line, lines
        self.text = "\n".join(lines)
        code = [i for i, l in enumerate(lines)
                if l.strip() and not l.lstrip().startswith("//")]
        self.label = "%s:%d" % (path, first_line + (code[0] if code else 0))


def chunks_of(path):
    text = EXPECTED.sub("// (annotation)", open(path).read())
    lines = text.splitlines()
    if not any("-split-input-file" in l for l in lines if "RUN:" in l):
        return [Chunk(path, 1, lines)]
    out, cur, first = [], [], 1
    for i, l in enumerate(lines, 1):
        if SPLIT.match(l):
            out.append(Chunk(path, first, cur))
            cur, first = [], i + 1
        else:
            cur.append(l)
    out.append(Chunk(path, first, cur))
    return out


class Buffer:
    """Chunks joined into one -split-input-file buffer; maps its lines back
    to the chunks."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.starts, self.lines = [], []
        for k, c in enumerate(chunks):
            if k:
                self.lines.append(SEPARATOR)
            self.starts.append(len(self.lines) + 1)
            self.lines += c.lines
        self.text = "\n".join(self.lines) + "\n"

    def chunk_at(self, line):
        for c, start in zip(reversed(self.chunks), reversed(self.starts)):
            if line >= start:
                return c
        return None

    def source(self, line):
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""


def run_opt(args, text, outputs=None):
    """(exit code, stderr) of kiln-opt on `text`; with a list `outputs`,
    appends what it printed to it: the outputs of the chunks it compiled
    (on stdout: an `-o` file is deleted when any chunk fails, and with it
    the others' output, so a batch holding one refused program gave none;
    parity.py assembled no sm_90a PTX until 2026-11-30)."""
    try:
        p = subprocess.run([KILN_OPT, "-split-input-file", "-o",
                            "-" if outputs is not None else os.devnull]
                           + args + ["-"], input=text, capture_output=True,
                           text=True, errors="replace", timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % TIMEOUT
    if outputs is not None:
        outputs.append(p.stdout)
    return p.returncode, p.stderr


def crashed(rc, err):
    return (rc < 0 or rc > 1 or "PLEASE submit a bug report" in err
            or "Stack dump" in err)


class Diag:
    """One error: `line` in the buffer (None without one), `named` (a
    location without a file, e.g. loc("model.layer0")), `message`."""

    def __init__(self, line, named, message):
        self.line, self.named, self.message = line, named, message


def diagnostics(err):
    out = []
    for l in err.splitlines():
        u = NO_FILE.match(l)
        m = DIAG.match(l)
        if u:
            n = NAMED.match(u.group(1))
            out.append(Diag(None, n.group(1), n.group(2)) if n
                       else Diag(None, None, u.group(1)))
        elif m and m.group(1) == "<stdin>":
            out.append(Diag(int(m.group(2)), None, m.group(4)))
        elif m:
            # A location of another file (an importer's `loc("model.py":3:9)`
            # in the program): found by its file name, as a named location.
            out.append(Diag(None, 'loc("%s":%s:%s)' % m.group(1, 2, 3),
                            m.group(4)))
        elif " error: " in l or l.startswith("error: "):
            out.append(Diag(None, None, l))
    return out


def classify(d, source):
    """None for a clean diagnosis of the program, else why it is a failure.
    `source` is the text the error's location points at (the line, or for a
    named location the whole program): an error naming an op of another
    dialect than kt/kg is clean only if that op is written there."""
    if d.line is None and d.named is None:
        return "error without a location: " + d.message
    if any(s in d.message for s in INTERNAL):
        return "internal error: " + d.message
    m = OP_NAMED.match(d.message)
    if m and m.group(2) not in CLEAN_DIALECTS and m.group(1) not in source:
        return "verifier failure of IR the pipeline built: " + d.message
    return None


def parts(chunks, n):
    """`chunks` cut into at most n runs of about equal text size."""
    total = sum(len(c.text) for c in chunks) or 1
    out, cur, size = [], [], 0
    for c in chunks:
        cur.append(c)
        size += len(c.text)
        if size >= total / n and len(out) < n - 1:
            out.append(cur)
            cur, size = [], 0
    if cur:
        out.append(cur)
    return out


def run_part(args, chunks, outputs=None):
    """[(chunk, rc, [Diag], buffer)] for `chunks` run by one process, or
    one by one when it crashes."""
    buf = Buffer(chunks)
    rc, err = run_opt(args, buf.text, outputs)
    if not crashed(rc, err):
        return [(None, rc, err, buf)]
    if len(chunks) == 1:
        return [(chunks[0], rc, err, buf)]
    out = []
    for c in chunks:
        out += run_part(args, [c], outputs)
    return out


def sweep(chunks, args, jobs, outputs=None):
    """{chunk: [(kind, detail)]}: kind "failure" or "diagnosed". With a
    list `outputs`, appends the text each kiln-opt process printed (the
    chunks that it compiled, one after the other) to it."""
    found = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        def run(part):
            mine = [] if outputs is not None else None
            return run_part(args, part, mine), mine
        done = list(ex.map(run, parts(chunks, jobs)))
    runs = [r for rs, _ in done for r in rs]
    if outputs is not None:
        outputs += [text for _, mine in done for text in mine]
    for chunk, rc, err, buf in runs:
        if chunk is not None and crashed(rc, err):
            first = [l for l in err.splitlines() if l.strip()][:2]
            found.setdefault(chunk, []).append(
                ("failure", "crash (exit %d): %s" % (rc, " | ".join(first))))
            continue
        for l in err.splitlines():
            # A pattern set that rewrote until its cap (kiln/Support/
            # BoundedRewrite.h): correct IR, but seconds of compile time lost.
            m = DIAG_ANY.match(l)
            if NOT_CONVERGED in l:
                c = (buf.chunk_at(int(m.group(2))) if m and m.group(1) == "<stdin>"
                     else chunk) or buf.chunks[0]
                found.setdefault(c, []).append(("failure", l.strip()))
        diags = diagnostics(err)
        for d in diags:
            c = buf.chunk_at(d.line) if d.line else (chunk or None)
            if c is None and d.named:
                # A named location: the chunk whose text has the name.
                name = d.named[len('loc("'):].split('"')[0]
                c = next((x for x in buf.chunks if name in x.text), None)
            source = buf.source(d.line) if d.line else (c.text if c else "")
            why = classify(d, source)
            key = c or buf.chunks[0]
            found.setdefault(key, []).append(
                ("failure", why) if why else ("diagnosed", d.message))
        if rc != 0 and not diags:
            found.setdefault(chunk or buf.chunks[0], []).append(
                ("failure", "exit %d without an error: %s" % (rc, err.strip()[:300])))
    return found


def invalid_chunks(chunks, jobs):
    """The chunks kiln-opt does not parse and verify. A part with an error
    that no line ties to a chunk is checked one chunk at a time."""
    def check(part):
        buf = Buffer(part)
        rc, err = run_opt([], buf.text)
        if rc == 0:
            return set()
        diags = diagnostics(err)
        if crashed(rc, err) or not diags or any(d.line is None for d in diags):
            return {c for c in part if run_opt([], Buffer([c]).text)[0] != 0}
        return {buf.chunk_at(d.line) for d in diags}

    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        return set().union(*ex.map(check, parts(chunks, jobs)))


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
    base = os.path.dirname(os.path.abspath(a.roots[0]))
    chunks = [c for f in files for c in chunks_of(f)]
    # Programs: the chunks that parse and verify.
    invalid = invalid_chunks(chunks, a.jobs)
    programs = [c for c in chunks if c not in invalid]
    failures, diagnosed = [], []
    for pipe in pipelines:
        found = sweep(programs, [pipe], a.jobs)
        for c in programs:
            for kind, detail in found.get(c, []):
                (failures if kind == "failure" else diagnosed).append(
                    (pipe, os.path.relpath(os.path.abspath(c.label), base),
                     detail))
    for r in failures:
        print("FAIL %s %s: %s" % r)
    if a.verbose:
        for r in diagnosed:
            print("diagnosed %s %s: %s" % r)
    print("pipeline sweep: %d files, %d programs (%d chunks skipped: not "
          "valid IR), %d pipelines: %d failures, %d diagnosed errors" % (
              len(files), len(programs), len(invalid), len(pipelines),
              len(failures), len(diagnosed)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
