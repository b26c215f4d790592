# RUN: %python %s
# REQUIRES: numpy
# The bad-input suite (issue 15, section 3; docs/debugging.md): generated
# cases for every tool (kiln-opt, kiln-run, kiln-reduce) and the C API, by
# class: malformed IR, ops that do not verify, wrong shapes / dtypes / counts
# of inputs at run time, truncated / oversized / mismatched / corrupted .npy
# files, unsupported options, null handles and bad arguments (C API), and
# resource exhaustion under `ulimit -v`. Each must end with a clear error
# naming where the problem is (a file:line:col, the file, the argument or
# the function) and a non-zero exit (an error status in the C API): never a
# signal, an LLVM fatal error or stack dump, or a hang; and an output file
# that existed before (kiln-opt -o, kiln-reduce -o, kiln-run --output-dir)
# must be left as it was. Every case runs in its own process; a failing case
# is named ("FAIL <tool> <class> <case>: why") and the test exits 1.

import ctypes
import os
import re
import resource
import subprocess
import sys
import tempfile

import numpy as np

TOOLS = os.environ.get("KILN_TOOLS_DIR", "")
KILN_OPT = os.path.join(TOOLS, "kiln-opt")
KILN_RUN = os.path.join(TOOLS, "kiln-run")
KILN_REDUCE = os.path.join(TOOLS, "kiln-reduce")
LIBRARY = os.path.join(os.path.dirname(TOOLS), "lib", "libKilnCAPI.so")
TIMEOUT = 60

tmp = tempfile.mkdtemp(prefix="kiln-bad-input-")
results = {"pass": 0, "fail": 0}


def path(name):
    return os.path.join(tmp, name)


def write(name, data):
    p = path(name)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return p


SENTINEL = b"an output file that existed before\n"
CRASH = re.compile(r"PLEASE submit a bug report|Stack dump|LLVM ERROR|"
                   r"Assertion .* failed|AddressSanitizer|runtime error:")


# Known open defects (docs/debugging.md, "Bad input"): reported, not counted.
KNOWN = {
    # OpenBLAS (loaded by compiles whose code calls it: block.mlir has
    # products) starts worker threads; under a low `ulimit -v` a worker's
    # blas_memory_alloc retries its failing mmap forever and kiln-run hangs
    # at exit in blas_thread_shutdown_ joining it.
    "kiln-run ulimit 400000 KB block (cpu)": "OpenBLAS worker hang",
}
seen_known = set()


def fail(name, why, out=""):
    if name in KNOWN:
        seen_known.add(name)
        print("KNOWN-FAIL %s: %s (%s)" % (name, why, KNOWN[name]))
        return
    results["fail"] += 1
    print("FAIL %s: %s" % (name, why))
    if out:
        print("  | " + "\n  | ".join(out.strip().splitlines()[-12:]))


def check_tool(name, argv, where, outputs=(), vmem_kb=None, ok_exit=False,
               timeout=None):
    """Runs argv; it must fail (exit 1, or 0 when ok_exit) with `where` (a
    regex) in its stderr, no crash, within TIMEOUT; files in `outputs`
    (pre-filled with SENTINEL) must be unchanged."""
    for o in outputs:
        with open(o, "wb") as f:
            f.write(SENTINEL)

    def limit():
        if vmem_kb:
            resource.setrlimit(resource.RLIMIT_AS,
                               (vmem_kb * 1024, vmem_kb * 1024))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout or TIMEOUT,
                           preexec_fn=limit, env=env)
    except subprocess.TimeoutExpired:
        return fail(name, "hangs (no exit in %d s)" % (timeout or TIMEOUT))
    err = p.stderr.decode(errors="replace")
    if p.returncode < 0:
        return fail(name, "killed by signal %d" % -p.returncode, err)
    if CRASH.search(err):
        return fail(name, "crash report on stderr", err)
    if p.returncode == 0 and not ok_exit:
        return fail(name, "exit code 0 for bad input", err)
    if p.returncode not in (0, 1):
        return fail(name, "exit code %d (expected 1)" % p.returncode, err)
    if p.returncode and not re.search(where, err):
        return fail(name, "the error does not say where (/%s/)" % where, err)
    for o in outputs:
        with open(o, "rb") as f:
            if f.read() != SENTINEL:
                return fail(name, "overwrote %s" % os.path.basename(o))
    results["pass"] += 1


# --- Programs -------------------------------------------------------------

VALID = """func.func @f(%a: tensor<2x3xf32>, %b: tensor<?xi64>) -> (tensor<2x3xf32>, tensor<?xi64>) {
  %0 = kt.tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = kt.add %0, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = kt.neg %b : (tensor<?xi64>) -> tensor<?xi64>
  return %1, %2 : tensor<2x3xf32>, tensor<?xi64>
}
"""


def malformed(V):
    """(class, case, text): IR that does not parse."""
    n = len(V)
    for frac in (0.1, 0.35, 0.5, 0.8, 0.97):
        yield "malformed-ir", "truncated-at-%d%%" % int(frac * 100), V[:int(n * frac)]
    yield "malformed-ir", "missing-brace", V.rstrip().rstrip("}")
    yield "malformed-ir", "extra-brace", V + "}\n"
    yield "malformed-ir", "unknown-op", V.replace("kt.tanh", "kt.bogus")
    yield "malformed-ir", "unknown-dialect", V.replace("kt.tanh", "nodialect.tanh")
    yield "malformed-ir", "bad-type", V.replace("tensor<2x3xf32>", "tensor<2x3xq32>", 1)
    yield "malformed-ir", "undefined-value", V.replace("%0, %a", "%9, %a")
    yield "malformed-ir", "binary-garbage", bytes(range(256)) * 4
    yield "malformed-ir", "nul-byte", V[:40] + "\0" + V[40:]
    yield "malformed-ir", "invalid-utf8", V.replace("kt.tanh", "kt.\xff\xfetanh").encode("latin-1")
    yield "malformed-ir", "deep-nesting", "func.func @f() attributes {x = " + "[" * 400 + "]" * 399 + "} {\n  return\n}\n"
    yield "malformed-ir", "huge-dim", V.replace("2x3xf32", "99999999999999999999x3xf32")


def nonverifying(V):
    """(class, case, text): IR that parses but does not verify."""
    yield "invalid-op", "result-type", V.replace(
        "-> tensor<2x3xf32>\n  %1", "-> tensor<3x2xf32>\n  %1", 1)
    yield "invalid-op", "operand-dtypes", V.replace(
        "%1 = kt.add %0, %a : (tensor<2x3xf32>, tensor<2x3xf32>)",
        "%1 = kt.add %0, %b : (tensor<2x3xf32>, tensor<?xi64>)")
    yield "invalid-op", "attribute", V.replace(
        "%0 = kt.tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>",
        "%0 = kt.softmax %a {dim = 7} : (tensor<2x3xf32>) -> tensor<2x3xf32>")
    yield "invalid-op", "return-types", V.replace(
        "return %1, %2 : tensor<2x3xf32>, tensor<?xi64>", "return %1 : tensor<2x3xf32>")
    yield "invalid-op", "duplicate-symbol", V + V
    yield "invalid-op", "broadcast", V.replace(
        "%1 = kt.add %0, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
        "%x = kt.reshape %a {shape = [3, 2]} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
        "  %1 = kt.add %0, %x : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>")


def ir_cases(valid=VALID):
    yield from malformed(valid)
    yield from nonverifying(valid)


# The location a parse/verify error must carry: the file, a line and column.
def located(fname):
    return re.escape(os.path.basename(fname)) + r":\d+:\d+"


test_script = write("still-fails.sh", "#!/bin/sh\nexit 0\n")
os.chmod(test_script, 0o755)

for cls, case, text in ir_cases():
    f = write("%s-%s.mlir" % (cls, case), text)
    out = path("out-" + case)
    outdir = path("outdir-" + case)
    os.makedirs(outdir, exist_ok=True)
    res0 = os.path.join(outdir, "result0.npy")
    check_tool("kiln-opt %s %s" % (cls, case), [KILN_OPT, f, "-o", out],
               located(f), outputs=[out])
    check_tool("kiln-opt %s %s (kiln-cpu)" % (cls, case),
               [KILN_OPT, f, "-kiln-cpu", "-o", out], located(f), outputs=[out])
    check_tool("kiln-run %s %s" % (cls, case),
               [KILN_RUN, f, "--entry=f", "--random-inputs", "--output-dir", outdir],
               located(f), outputs=[res0])
    check_tool("kiln-reduce %s %s" % (cls, case),
               [KILN_REDUCE, f, "--test=" + test_script, "-o", out],
               located(f), outputs=[out])

# --- Run time: inputs that do not match -----------------------------------

good = write("good.mlir", VALID)
np.save(path("a.npy"), np.ones((2, 3), np.float32))
np.save(path("b.npy"), np.arange(4, dtype=np.int64))
NPY_OK = [path("a.npy"), path("b.npy")]


def runtime_cases():
    """(case, inputs, where): calls of @f with the wrong inputs."""
    def save(name, arr):
        np.save(path(name), arr)
        return path(name)
    a, b = NPY_OK
    yield "wrong-shape", [save("a32.npy", np.ones((3, 2), np.float32)), b], r"a32\.npy|argument #?0|%a"
    yield "wrong-rank", [save("a1.npy", np.ones(6, np.float32)), b], r"a1\.npy|argument #?0|%a"
    yield "wrong-dtype", [save("a64.npy", np.ones((2, 3), np.float64)), b], r"a64\.npy|argument #?0|%a"
    yield "wrong-int-dtype", [a, save("b32.npy", np.ones(4, np.int32))], r"b32\.npy|argument #?1|%b"
    yield "bool-for-float", [save("abool.npy", np.ones((2, 3), bool)), b], r"abool\.npy|argument #?0|%a"
    yield "too-few", [a], r"input|argument"
    yield "too-many", [a, b, b], r"input|argument"
    yield "missing-file", [a, path("nonexistent.npy")], r"nonexistent\.npy"
    yield "directory", [a, tmp], re.escape(os.path.basename(tmp))
    yield "dev-null", [a, "/dev/null"], r"/dev/null"
    yield "scalar-for-tensor", [save("s.npy", np.float32(1)), b], r"s\.npy|argument #?0|%a"


for backend in ("interpreter", "cpu"):
    for case, inputs, where in runtime_cases():
        outdir = path("rt-%s-%s" % (backend, case))
        os.makedirs(outdir, exist_ok=True)
        argv = [KILN_RUN, good, "--entry=f", "--output-dir", outdir]
        argv += ["--input=" + i for i in inputs]
        if backend == "cpu":
            argv.append("--backend=cpu")
        check_tool("kiln-run runtime %s (%s)" % (case, backend), argv, where,
                   outputs=[os.path.join(outdir, "result0.npy")])

# --- .npy files -------------------------------------------------------------


def npy_bytes(arr, version=None):
    import io
    buf = io.BytesIO()
    if version:
        np.lib.format.write_array(buf, arr, version=version)
    else:
        np.save(buf, arr)
    return buf.getvalue()


def npy_cases():
    """(case, bytes) for argument 0 (tensor<2x3xf32>)."""
    full = npy_bytes(np.ones((2, 3), np.float32))
    header_len = 10 + int.from_bytes(full[8:10], "little")
    for cut in (0, 3, 6, 8, 9, 20, header_len - 1, header_len, header_len + 5, len(full) - 1):
        yield "truncated-%d" % cut, full[:cut]
    yield "oversized", full + b"\0" * 8
    yield "oversized-header-len", full[:8] + (60000).to_bytes(2, "little") + full[10:]
    yield "bad-magic", b"\x93NUMPZ" + full[6:]
    yield "version-9", full[:6] + b"\x09\x00" + full[8:]
    yield "big-endian", full.replace(b"'<f4'", b"'>f4'")
    yield "object-dtype", full.replace(b"'<f4'", b"'|O' ")
    yield "unknown-dtype", full.replace(b"'<f4'", b"'<c8'")
    yield "fortran", full.replace(b"'fortran_order': False", b"'fortran_order': True ")
    yield "huge-shape", full.replace(b"(2, 3)", b"(2**62,3)")
    big = full.replace(b"(2, 3), ", b"(4294967296, 4294967296), ")
    yield "overflowing-shape", big
    yield "negative-shape", full.replace(b"(2, 3)", b"(-2, 3)")
    yield "no-shape", full.replace(b"'shape'", b"'shapx'")
    yield "garbage-header", full[:10] + b"{" * (header_len - 11) + b"\n" + full[header_len:]
    yield "non-ascii-header", full[:10] + full[10:header_len].replace(b"descr", b"d\xffscr") + full[header_len:]
    yield "mismatched-count", npy_bytes(np.ones((2, 2), np.float32))
    yield "v2-mismatched", npy_bytes(np.ones((5,), np.float32), version=(2, 0))


for case, data in npy_cases():
    f = write("npy-%s.npy" % case, data)
    outdir = path("npy-out-" + case)
    os.makedirs(outdir, exist_ok=True)
    check_tool("kiln-run npy %s" % case,
               [KILN_RUN, good, "--entry=f", "--input=" + f, "--input=" + NPY_OK[1],
                "--output-dir", outdir],
               re.escape(os.path.basename(f)),
               outputs=[os.path.join(outdir, "result0.npy")])

# --- Options ---------------------------------------------------------------

OPTION_CASES = [
    ("kiln-opt", [KILN_OPT, good, "--no-such-option"], r"no-such-option"),
    ("kiln-opt", [KILN_OPT, good, "--pass-pipeline=builtin.module(no-such-pass)"], r"no-such-pass"),
    ("kiln-opt", [KILN_OPT, good, "--pass-pipeline=builtin.module(kiln-cpu{no-such=1})"], r"no-such"),
    ("kiln-opt", [KILN_OPT, good, "-kiln-partition=policy=bogus"], r"bogus"),
    ("kiln-opt", [KILN_OPT, path("nonexistent.mlir")], r"nonexistent\.mlir"),
    ("kiln-opt", [KILN_OPT, tmp], re.escape(os.path.basename(tmp))),
    ("kiln-run", [KILN_RUN, good, "--entry=f", "--input=" + NPY_OK[0], "--input=" + NPY_OK[1], "--backend=gpu"], r"gpu|backend"),
    ("kiln-run", [KILN_RUN, good, "--entry=nope", "--input=" + NPY_OK[0], "--input=" + NPY_OK[1]], r"nope"),
    ("kiln-run", [KILN_RUN, good, "--entry=f", "--random-inputs", "--seed=-1"], r"seed"),
    ("kiln-run", [KILN_RUN, good, "--entry=f", "--random-inputs"], r"argument #1 of @f"),
    ("kiln-run", [KILN_RUN, good, "--entry=f", "--input=" + NPY_OK[0], "--input=" + NPY_OK[1], "--pipeline=no-such-pass"], r"--pipeline applies to kg.program"),
    ("kiln-run", [KILN_RUN, good, "--entry=f", "--input=" + NPY_OK[0], "--input=" + NPY_OK[1], "--frozen"], r"--frozen applies to kg.program"),
    ("kiln-run", [KILN_RUN, good, "--entry=f", "--input=" + NPY_OK[0], "--input=" + NPY_OK[1], "--mark-dynamic=0:0"], r"--mark-dynamic applies to kg.program"),
    ("kiln-run", [KILN_RUN, good, "--entry=f", "--input=" + NPY_OK[0], "--input=" + NPY_OK[1], "--cache-size-limit=2"], r"--cache-size-limit applies to kg.program"),
    ("kiln-run", [KILN_RUN, path("nonexistent.mlir"), "--entry=f", "--random-inputs"], r"nonexistent\.mlir"),
    ("kiln-run", [KILN_RUN, good, "--entry=f", "--input=" + NPY_OK[0], "--input=" + NPY_OK[1], "--output-dir", "/dev/null/x"], r"/dev/null/x"),
    ("kiln-reduce", [KILN_REDUCE, good, "--test=" + path("no-such-test")], r"no-such-test"),
    ("kiln-reduce", [KILN_REDUCE, good, "--test=" + test_script, "--timeout=-1"], r"timeout"),
    ("kiln-reduce", [KILN_REDUCE, good, "--test=" + test_script, "--entry=nope"], r"nope"),
    ("kiln-reduce", [KILN_REDUCE, path("nonexistent.mlir"), "--test=" + test_script], r"nonexistent\.mlir"),
]
for k, (tool, argv, where) in enumerate(OPTION_CASES):
    out = path("opt-out-%d" % k)
    if tool != "kiln-run":
        argv = argv + ["-o", out]
    check_tool("%s option %d (%s)" % (tool, k, " ".join(argv[2:3] or argv[1:2])),
               argv, where, outputs=[out] if tool != "kiln-run" else [])

# --- Resource exhaustion: ulimit -v ---------------------------------------
# Between the address space the tools need to start (~350 MB: libMLIR,
# libLLVM) and what a compile needs. A run that succeeds is fine; one that
# fails must fail cleanly.
BIG = write("big.mlir", """func.func @f() -> tensor<1000000000xf32> {
  %0 = kt.full {size = [1000000000], value = 1.0, dtype = f32} : () -> tensor<1000000000xf32>
  return %0 : tensor<1000000000xf32>
}
""")
BLOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "block.mlir")
# An ASan or TSan build (lit sets KILN_SANITIZE) cannot start under these
# limits: its shadow memory alone reserves terabytes of address space (TSan:
# "Program is run with limited virtual address space, which wouldn't work
# with ThreadSanitizer", then SIGSEGV).
SHADOW = any(s in os.environ.get("KILN_SANITIZE", "")
             for s in ("address", "thread"))
if SHADOW:
    print("SKIP ulimit cases: ASan/TSan build (no start under ulimit -v)")
for kb in () if SHADOW else (380000, 400000, 1000000):
    out = path("ulimit-out-%d" % kb)
    check_tool("kiln-run ulimit %d KB big tensor (interpreter)" % kb,
               [KILN_RUN, BIG, "--entry=f", "--print=false"], r"big\.mlir:2:\d+|cannot allocate|pthread_create failed", vmem_kb=kb, timeout=30)
    check_tool("kiln-run ulimit %d KB big tensor (cpu)" % kb,
               [KILN_RUN, BIG, "--entry=f", "--print=false", "--backend=cpu"], r"big\.mlir:2:\d+: cannot allocate 4000000064 bytes \(3\.7 GiB\) for tensor<1000000000xf32>|pthread_create failed", vmem_kb=kb, timeout=30)
    check_tool("kiln-run ulimit %d KB block (cpu)" % kb,
               [KILN_RUN, BLOCK, "--entry=block", "--random-inputs", "--print=false", "--backend=cpu"],
               r"error", vmem_kb=kb, ok_exit=True, timeout=30)
    check_tool("kiln-opt ulimit %d KB block -kiln-cpu" % kb,
               [KILN_OPT, BLOCK, "-kiln-cpu", "-o", out], r"error", vmem_kb=kb, ok_exit=True, timeout=30)

# --- The C API --------------------------------------------------------------
# Each case runs in a child process (a crash is a signal there, named here)
# and prints the status message; it must be an error naming the function
# (and, for module text, <buffer>:line:col).

CAPI_PRELUDE = r"""
import ctypes, sys
from ctypes import c_void_p, c_size_t, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, POINTER, Structure
L = ctypes.CDLL(%r)
class SR(Structure): _fields_ = [("data", c_void_p), ("length", c_size_t)]
class H(Structure): _fields_ = [("ptr", c_void_p)]
class Dev(Structure): _fields_ = [("device_type", c_int32), ("device_id", c_int32)]
class DT(Structure): _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]
class DL(Structure): _fields_ = [("data", c_void_p), ("device", Dev), ("ndim", c_int32), ("dtype", DT), ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]
for n in ["kilnSessionLoadModule", "kilnSessionSetOption", "kilnSessionCall", "kilnSessionTransformModule", "kilnSessionLoadModuleFile", "kilnSessionGetStats", "kilnSessionMarkDynamic", "kilnSessionGetEntryIR"]:
    getattr(L, n).restype = H
L.kilnSessionCreate.restype = H
L.kilnStatusGetMessage.restype = SR
L.kilnStatusGetMessage.argtypes = [H]
keep = []
def s(x):
    if x is None: return SR(None, 5)
    b = ctypes.create_string_buffer(x.encode() if isinstance(x, str) else x)
    keep.append(b)
    return SR(ctypes.cast(b, c_void_p), len(x))
def report(st):
    if not st.ptr:
        print("STATUS ok"); return
    m = L.kilnStatusGetMessage(st)
    print("STATUS " + ctypes.string_at(m.data, m.length).decode(errors="replace"))
def tensor(arr, code, bits, shape=None, data=True):
    shape = arr.shape if shape is None else shape
    sh = (c_int64 * max(len(shape), 1))(*shape)
    keep.extend([arr, sh])
    return DL(arr.ctypes.data if data else None, Dev(1, 0), len(shape), DT(code, bits, 1), sh, None, 0)
import numpy as np
PROG = '''kg.program @p(%%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %%y = kg.graph @p_g0(%%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%%x: tensor<2x3xf32>):
    %%t = kt.tanh %%x : (tensor<2x3xf32>) -> tensor<2x3xf32>
    kg.yield %%t : tensor<2x3xf32>
  }
  kg.return %%y : tensor<2x3xf32>
}
'''
""" % LIBRARY


CAPI_CASES = []


def check_capi(name, body, where):
    CAPI_CASES.append((name, body, where))


# The child loads libKilnCAPI.so into Python: in a sanitizer build that needs
# the sanitizer runtime preloaded (lit sets KILN_SANITIZER_PRELOAD), without
# leak checks (CPython leaks by design at exit).
CAPI_ENV = dict(os.environ, OMP_NUM_THREADS="1")
if os.environ.get("KILN_SANITIZER_PRELOAD"):
    CAPI_ENV["LD_PRELOAD"] = os.environ["KILN_SANITIZER_PRELOAD"]
    CAPI_ENV["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"


def run_capi_cases():
    """Runs the C API cases in one child process, each after a `CASE <k>`
    line and in a fresh session; a child that dies (a signal) or stops
    answering names the case it was in, and the rest run in a new child."""
    pending = list(range(len(CAPI_CASES)))
    while pending:
        code = CAPI_PRELUDE
        for k in pending:
            name, body, where = CAPI_CASES[k]
            code += "print('CASE %d', flush=True)\nS = L.kilnSessionCreate()\n" % k
            code += body + "\nsys.stdout.flush()\n"
        try:
            p = subprocess.run([sys.executable, "-c", code], capture_output=True,
                               timeout=TIMEOUT * 2, env=CAPI_ENV)
            out, rc = p.stdout.decode(errors="replace"), p.returncode
            err = p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace")
            err, rc = "hangs", None
        statuses = {}
        current = None
        for line in out.splitlines():
            if line.startswith("CASE "):
                current = int(line[5:])
                statuses[current] = []
            elif line.startswith("STATUS ") and current is not None:
                statuses[current].append(line[7:])
        done = [k for k in pending if k in statuses]
        died = None
        if rc != 0 or CRASH.search(err):
            died = done[-1] if done else pending[0]
        if died is not None and died not in done:
            # It died before its first case (e.g. the library did not
            # load): that case fails, it is not skipped.
            fail(CAPI_CASES[died][0], "the process died before the case (exit %s)" % rc, err)
        for k in done:
            name, body, where = CAPI_CASES[k]
            if k == died:
                fail(name, "hangs" if rc is None else
                     "the process died (exit %s)" % rc, err)
                continue
            st = statuses[k]
            if not st or st[-1] == "ok":
                fail(name, "no error status")
            elif not re.search(where, st[-1]):
                fail(name, "the error does not say where (/%s/): %s" % (where, st[-1]))
            else:
                results["pass"] += 1
        pending = pending[pending.index(died) + 1:] if died is not None else []


if os.path.exists(LIBRARY):
    prog = """kg.program @p(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = kg.graph @p_g0(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: tensor<2x3xf32>):
    %t = kt.tanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
    kg.yield %t : tensor<2x3xf32>
  }
  kg.return %y : tensor<2x3xf32>
}
"""
    # Malformed and non-verifying module text, through LoadModule and
    # TransformModule (the same generators, on a kg.program).
    texts = list(ir_cases(prog))
    for cls, case, text in texts:
        if isinstance(text, str):
            text = text.encode()
        if text == prog.encode():
            continue
        check_capi("C API load %s %s" % (cls, case),
                   "report(L.kilnSessionLoadModule(S, s(%r), s('m.mlir')))" % text,
                   r"^kilnSessionLoadModule: m\.mlir:\d+:\d+")
        check_capi("C API transform %s %s" % (cls, case),
                   "report(L.kilnSessionTransformModule(S, s(%r), s('kiln-decompose'), ctypes.byref(SR())))" % text,
                   r"^kilnSessionTransformModule: .*:\d+:\d+")
    # Null handles and bad arguments.
    NULL_CASES = [
        ("load null session", "report(L.kilnSessionLoadModule(H(None), s(PROG), s('m')))", r"kilnSessionLoadModule: the session is null"),
        ("load NULL text", "report(L.kilnSessionLoadModule(S, s(None), s('m')))", r"kilnSessionLoadModule: text"),
        ("load dir", "report(L.kilnSessionLoadModuleFile(S, s('/')))", r"kilnSessionLoadModuleFile: .*'/'"),
        ("option key", "report(L.kilnSessionSetOption(S, s('mode'), s('x')))", r"kilnSessionSetOption: .*mode"),
        ("option value", "report(L.kilnSessionSetOption(S, s('backend'), s('gpu')))", r"kilnSessionSetOption: .*gpu"),
        ("option pipeline", "report(L.kilnSessionSetOption(S, s('pipeline'), s('no-such-pass')))", r"kilnSessionSetOption: .*no-such-pass"),
        ("transform pipeline", "report(L.kilnSessionTransformModule(S, s(PROG), s('no-such-pass'), ctypes.byref(SR())))", r"kilnSessionTransformModule: .*no-such-pass"),
        ("stats unknown", "report(L.kilnSessionLoadModule(S, s(PROG), s('m')))\nreport(L.kilnSessionGetStats(S, s('nope'), ctypes.byref((c_uint64*9)())))", r"kilnSessionGetStats: .*nope"),
        ("mark out of range", "report(L.kilnSessionLoadModule(S, s(PROG), s('m')))\nreport(L.kilnSessionMarkDynamic(S, s('p'), c_size_t(7), c_size_t(0)))", r"kilnSessionMarkDynamic: .*7"),
        # Dangling and made-up handles (fz27, docs/c-api.md "Handles"):
        # never dereferenced, an error naming the function.
        ("load destroyed session", "D = L.kilnSessionCreate()\nL.kilnSessionDestroy(D)\nreport(L.kilnSessionLoadModule(D, s(PROG), s('m')))", r"kilnSessionLoadModule: the session is not a live handle"),
        ("call destroyed session", "D = L.kilnSessionCreate()\nreport(L.kilnSessionLoadModule(D, s(PROG), s('m')))\nL.kilnSessionDestroy(D)\nL.kilnSessionDestroy(D)\nreport(L.kilnSessionCall(D, s('p'), None, c_size_t(0), None, ctypes.byref(H())))", r"kilnSessionCall: the session is not a live handle"),
        ("load garbage session", "report(L.kilnSessionLoadModule(H(0x7f0000001234), s(PROG), s('m')))", r"kilnSessionLoadModule: the session is not a live handle"),
        ("append destroyed list", "L.kilnTensorListCreate.restype = H\nL.kilnTensorListAppend.restype = H\nT = L.kilnTensorListCreate()\nL.kilnTensorListDestroy(T)\nreport(L.kilnTensorListAppend(T, ctypes.byref(tensor(np.ones((2, 3), np.float32), 2, 32))))", r"kilnTensorListAppend: the list is not a live handle"),
        ("entry ir out of range", "report(L.kilnSessionLoadModule(S, s(PROG), s('m')))\nreport(L.kilnSessionGetEntryIR(S, s('p'), c_size_t(2**63), ctypes.byref(SR())))", r"kilnSessionGetEntryIR"),
    ]
    for case, body, where in NULL_CASES:
        check_capi("C API %s" % case, body, where)
    # Calls with inputs that do not match.
    # (Another shape or dtype is not an error for a kg.program: its guards
    # fail and it recompiles, as TorchDynamo does.)
    CALLS = [
        ("bad dtype code", "np.ones((2, 3), np.float32), 9, 32", r"argument 0|dtype"),
        ("bad bits", "np.ones((2, 3), np.float32), 2, 8", r"argument 0|dtype|bits"),
        ("negative dim", "np.ones((2, 3), np.float32), 2, 32, (-2, 3)", r"argument 0"),
        ("huge dims", "np.ones((2, 3), np.float32), 2, 32, (2**40, 2**40)", r"argument 0"),
        ("NULL data", "np.ones((2, 3), np.float32), 2, 32, None, False", r"argument 0"),
    ]
    for backend in ("eager", "cpu"):
        for case, args, where in CALLS:
            body = ("report(L.kilnSessionLoadModule(S, s(PROG), s('m')))\n"
                    "report(L.kilnSessionSetOption(S, s('backend'), s(%r)))\n"
                    "t = tensor(%s)\n"
                    "r = H()\n"
                    "report(L.kilnSessionCall(S, s('p'), ctypes.byref(t), c_size_t(1), None, ctypes.byref(r)))\n"
                    % (backend, args))
            check_capi("C API call %s (%s)" % (case, backend), body,
                       r"^kilnSessionCall: .*(%s)" % where)
        check_capi("C API call too many args (%s)" % backend,
                   "report(L.kilnSessionLoadModule(S, s(PROG), s('m')))\n"
                   "report(L.kilnSessionSetOption(S, s('backend'), s(%r)))\n"
                   "t = (DL * 2)(tensor(np.ones((2, 3), np.float32), 2, 32), tensor(np.ones((2, 3), np.float32), 2, 32))\n"
                   "r = H()\n"
                   "report(L.kilnSessionCall(S, s('p'), t, c_size_t(2), None, ctypes.byref(r)))\n" % backend,
                   r"^kilnSessionCall: .*@p")
    run_capi_cases()
else:
    fail("C API", "no %s" % LIBRARY)

for name in sorted(set(KNOWN) - seen_known):
    if SHADOW and "ulimit" in name:
        continue  # (not run)
    # (Whether the defect shows depends on the machine: a note, not a failure.)
    print("NOTE %s: passed here (known defect: %s)" % (name, KNOWN[name]))
print("%d passed, %d failed, %d known failures" %
      (results["pass"], results["fail"], len(seen_known)))
sys.exit(1 if results["fail"] else 0)
