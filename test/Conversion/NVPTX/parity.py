# RUN: %python %s
# REQUIRES: ptxas
# Every valid program of test/ and examples/ (the chunks the pipeline sweep
# runs) through kiln-cpu and kiln-nvptx:
#  * parity: a program that kiln-cpu compiles must compile for the GPU too,
#    unless it has an op that docs/gpu.md lists as not lowered for the GPU
#    (its table "Ops without a GPU lowering", each with its reason): the
#    test fails naming the program and its ops otherwise, and also when a
#    listed op no longer needs its exception (the table must shrink with the
#    code);
#  * every kernel of those programs is valid PTX: kiln-nvptx for sm_80
#    (+ptx80) and sm_90a (+ptx80), each distinct PTX module assembled by
#    ptxas -arch=<chip>. To save ptxas's start-up (~2/3 of its time per
#    module), the modules are assembled ASSEMBLE_BATCH at a time by one
#    ptxas call, each module's own symbols (kernels, functions, globals)
#    prefixed with m<k>_ so that they do not clash; a batch that ptxas
#    rejects is rerun one module at a time to name the module.

import hashlib
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import pipeline_sweep as ps  # noqa: E402
from extract_ptx import unescape  # noqa: E402
from tool_server import tool_run  # noqa: E402

JOBS = 2
ASSEMBLE_BATCH = 100
failed = 0

# A symbol a PTX module defines at its scope: .entry/.func names and
# .global/.const/.shared variables.
PTX_SYMBOL = re.compile(
    r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.(?:entry|func)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
    r"|^\s*(?:\.(?:visible|weak)\s+)?\.(?:global|const|shared)\s[^;=\[]*?"
    r"([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\]\s*)*(?:=|;)", re.M)


def fail(msg):
    global failed
    failed += 1
    print("FAIL " + msg)


def prefixed_symbols(text, prefix):
    """The PTX module `text` with each symbol it defines renamed
    prefix + name (every use too)."""
    names = {a or b for a, b in PTX_SYMBOL.findall(text)}
    if not names:
        return text
    use = re.compile(r"(?<![\w$.%%])(%s)(?![\w$])" % "|".join(
        sorted(map(re.escape, names), key=len, reverse=True)))
    return use.sub(lambda m: prefix + m.group(1), text)


def ptxas(chip, paths):
    return subprocess.run(["ptxas", "-arch=" + chip] + paths + ["-o", os.devnull],
                          capture_output=True, text=True)


def assemble(chip, modules, tmp):
    """Assembles each PTX text of `modules` with ptxas -arch=chip, many per
    call (symbols prefixed); fails naming each module that ptxas rejects
    when assembled alone."""
    for start in range(0, len(modules), ASSEMBLE_BATCH):
        batch = modules[start:start + ASSEMBLE_BATCH]
        paths = []
        for k, text in enumerate(batch, start):
            path = os.path.join(tmp, "%s-%d.ptx" % (chip, k))
            with open(path, "w") as f:
                f.write(prefixed_symbols(text, "m%d_" % k))
            paths.append(path)
        if ptxas(chip, paths).returncode == 0:
            continue
        # One at a time, unchanged, to name the module(s).
        named = False
        for k, text in enumerate(batch, start):
            path = os.path.join(tmp, "%s-%d-alone.ptx" % (chip, k))
            with open(path, "w") as f:
                f.write(text)
            p = ptxas(chip, [path])
            if p.returncode != 0:
                named = True
                fail("ptxas -arch=%s rejects a module:\n%s" % (chip, p.stderr[:800]))
        if not named:
            fail("ptxas -arch=%s rejects modules %d-%d assembled together "
                 "(each alone passes):\n%s" % (chip, start, start + len(batch) - 1,
                                                 ptxas(chip, paths).stderr[:800]))


def listed_exceptions():
    """{op: reason} from docs/gpu.md's table of ops without a GPU lowering."""
    text = open(os.path.join(ROOT, "docs", "gpu.md")).read()
    section = text.split("## Ops without a GPU lowering", 1)
    if len(section) < 2:
        sys.exit("docs/gpu.md has no '## Ops without a GPU lowering' section")
    out = {}
    for line in section[1].split("\n## ")[0].splitlines():
        m = re.match(r"\|\s*`((?:kt|tensor)\.[a-z_0-9]+)`\s*\|\s*(.+?)\s*\|", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def kt_ops(chunk):
    """The kt ops (and tensor.extract) of a program; attributes (#kt.x)
    and types (!kt.x) are not ops."""
    return set(re.findall(r"(?<![#!\w.])((?:kt|tensor)\.[a-z_0-9]+)\b",
                          chunk.text)) & (set(re.findall(
                              r"(?<![#!\w.])(kt\.[a-z_0-9]+)\b", chunk.text)) |
                                          {"tensor.extract"})


files = []
for root in (os.path.join(ROOT, "test"), os.path.join(ROOT, "examples")):
    for d, _, names in os.walk(root):
        files += [os.path.join(d, n) for n in names if n.endswith(".mlir")]
# (This folder's own inputs are memref-level unit tests, not programs.)
files = sorted(f for f in files if os.path.dirname(f) != HERE)
chunks = [c for f in files for c in ps.chunks_of(f)]
invalid = ps.invalid_chunks(chunks, JOBS)
programs = [c for c in chunks if c not in invalid]
cpu = ps.sweep(programs, ["-kiln-cpu"], JOBS)
# kiln-nvptx's default chip and features (docs/gpu.md), spelled out: its
# output gives the sm_90a PTX below (no second sm_90a compile).
SWEEP_CHIP = "sm_90a"
gpu_outputs = []
gpu = ps.sweep(programs, ["-kiln-nvptx=chip=%s features=+ptx80" % SWEEP_CHIP],
               JOBS, gpu_outputs)
exceptions = listed_exceptions()
used = set()
both = []
for c in programs:
    for kind, detail in gpu.get(c, []):
        if kind == "failure":
            fail("kiln-nvptx %s: %s" % (os.path.relpath(c.label, ROOT), detail))
    if c in cpu:
        continue
    if c not in gpu:
        both.append(c)
        continue
    listed = kt_ops(c) & set(exceptions)
    if listed:
        used |= listed
        continue
    fail("%s compiles for the CPU, not for the GPU (ops: %s): %s" % (
        os.path.relpath(c.label, ROOT), ", ".join(sorted(kt_ops(c))),
        gpu[c][0][1]))
for op in sorted(set(exceptions) - used):
    fail("docs/gpu.md lists %s as not lowered for the GPU, but no program "
         "needs the exception any more" % op)

# PTX of every program that compiles for both, for two chips: sm_90a from
# the sweep above (every program that compiles for the GPU, a superset of
# those that compile for both), sm_80 compiled here.
ptx = {}


def add_ptx(chip, mlir):
    for m in re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"', mlir):
        text = unescape(m.group(1))
        ptx.setdefault((chip, hashlib.sha1(text.encode()).hexdigest()), text)


for mlir in gpu_outputs:
    add_ptx(SWEEP_CHIP, mlir)
with tempfile.TemporaryDirectory() as tmp:
    for chip in ("sm_80",):
        for i, part in enumerate(ps.parts(both, JOBS)):
            buf = ps.Buffer(part)
            out = os.path.join(tmp, "%s.%d.mlir" % (chip, i))
            p = tool_run(
                [ps.KILN_OPT, "-", "-split-input-file",
                 "-kiln-nvptx=chip=%s features=+ptx80" % chip, "-o", out],
                input=buf.text, capture_output=True, text=True)
            if p.returncode != 0:
                fail("kiln-nvptx chip=%s: %s" % (chip, p.stderr[-500:]))
                continue
            add_ptx(chip, open(out).read())
    kernels = {chip: 0 for chip in ("sm_80", "sm_90a")}
    for chip in kernels:
        modules = [text for (c, h), text in sorted(ptx.items()) if c == chip]
        kernels[chip] = sum(text.count(".entry ") for text in modules)
        assemble(chip, modules, tmp)

print("parity: %d programs, %d compile for both, %d exceptions used; ptx: "
      "%d distinct modules (%s)" % (
          len(programs), len(both), len(used), len(ptx),
          ", ".join("%s %d kernels" % kv for kv in sorted(kernels.items()))))
print("parity.py: %d failed" % failed)
sys.exit(1 if failed else 0)
