# RUN: %python %s
# REQUIRES: numpy
# The compiled-code disk cache of the CPU backend (docs/codegen.md, "Disk
# cache"), across kiln-run processes, every run checked against NumPy:
# * a hit gives the same (right) results as the compile that stored it: an
#   OpenBLAS matmul, OpenMP threads, a non-splat global constant, a
#   gather whose indices are checked at run time, and the run-time error
#   of that check (its message from the stored templates, at this file's
#   location: the same function at another line is another entry);
# * a truncated entry, one with a flipped payload byte, one with a flipped
#   header byte and one of another key are never loaded: logged as corrupt
#   under KILN_LOGS=codegen, compiled again (right results) and rewritten
#   (the next run hits); a link to /dev/zero or a directory in its place is
#   not read;
# * a change of Kiln's version or of a compile option is another key (miss);
# * four processes started together on an empty directory all succeed with
#   the right results and leave one valid entry and no temporary file;
# * KILN_CACHE_MAX_MB evicts the least recently used entries (a hit
#   refreshes an entry);
# * an unwritable directory: one warning, right results, exit 0;
# * an entry of the objects of several codegen threads (KILN_CPU_CODEGEN_
#   THREADS=3) is loaded by a one-thread process; truncated, it is not.
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

KILN_RUN = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-run")

rng = np.random.default_rng(13)
x = rng.standard_normal((64, 128)).astype(np.float32)
w = (rng.standard_normal((128, 96)) / 8).astype(np.float32)
good_idx = np.array([3, 0, 63, 7, 3], np.int64)
bad_idx = np.array([3, 0, 64, 7, 3], np.int64)
bias = np.linspace(-1, 1, 96).astype(np.float32)


def program(pad_lines=0, scale=1.0):
    """The test program; `pad_lines` blank lines move it (its locations) and
    `scale` changes one constant (another function)."""
    T = "tensor<64x96xf32>"
    consts = ", ".join("%.9e" % (v * scale) for v in bias)
    return "\n" * pad_lines + """func.func @main(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>, %i: tensor<5xi64>) -> ({T}, tensor<5x96xf32>) {{
  %m = kt.matmul %x, %w : (tensor<64x128xf32>, tensor<128x96xf32>) -> {T}
  %c = kt.constant {{value = dense<[{consts}]> : tensor<96xf32>}} : () -> tensor<96xf32>
  %a = kt.add %m, %c : ({T}, tensor<96xf32>) -> {T}
  %t = kt.tanh %a : ({T}) -> {T}
  %s = kt.index_select %t, %i {{dim = 0 : i64}} : ({T}, tensor<5xi64>) -> tensor<5x96xf32>
  return %t, %s : {T}, tensor<5x96xf32>
}}
""".format(T=T, consts=consts)


def reference(idx, scale=1.0):
    t = np.tanh(x.astype(np.float64) @ w.astype(np.float64) +
                (bias.astype(np.float64) * scale))
    return [t, t[idx]]


tmp = tempfile.mkdtemp(prefix="kiln-disk-cache-test-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def save(name, a):
    path = os.path.join(tmp, name)
    np.save(path, a)
    return path


X, W = save("x.npy", x), save("w.npy", w)
GOOD, BAD = save("good.npy", good_idx), save("bad.npy", bad_idx)
MAIN = write("main.mlir", program())
run_no = [0]


def start(path, cache, idx=GOOD, extra=(), env=None):
    run_no[0] += 1
    out = os.path.join(tmp, "out%d" % run_no[0])
    e = dict(os.environ)
    e["KILN_LOGS"] = "codegen"
    e.pop("KILN_CACHE_MAX_MB", None)
    if cache is None:
        e["KILN_CACHE_DIR"] = "off"
    else:
        e["KILN_CACHE_DIR"] = cache
    e.update(env or {})
    args = [KILN_RUN, path, "--backend=cpu", "--matmul=openblas",
            "--cpu-threads=2", "--stats", "--input=" + X, "--input=" + W,
            "--input=" + idx, "--output-dir=" + out] + list(extra)
    return subprocess.Popen(args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=e), out


def finish(started):
    p, out = started
    try:
        # A run that never ends (e.g. reading an endless entry) fails.
        stdout, stderr = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
        stderr += "\n(killed after 300 s)"
    results = []
    i = 0
    while os.path.exists(os.path.join(out, "result%d.npy" % i)):
        results.append(np.load(os.path.join(out, "result%d.npy" % i)))
        i += 1
    m = re.search(r"disk cache: (\d+) hits, (\d+) misses, (\d+) corrupt, "
                  r"(\d+) stores, (\d+) evictions", stdout)
    disk = dict(zip(["hits", "misses", "corrupt", "stores", "evictions"],
                    map(int, m.groups()))) if m else {}
    return dict(rc=p.returncode, stdout=stdout, stderr=stderr,
                results=results, disk=disk)


def run(path, cache, **kw):
    return finish(start(path, cache, **kw))


def right(r, label, idx=good_idx, scale=1.0):
    check(r["rc"] == 0, "%s: exit %d: %s" % (label, r["rc"], r["stderr"][-2000:]))
    want = reference(idx, scale)
    check(len(r["results"]) == 2, "%s: %d results" % (label, len(r["results"])))
    for k, (got, exp) in enumerate(zip(r["results"], want)):
        ok = got.shape == exp.shape and np.allclose(got, exp, rtol=1e-5, atol=1e-5)
        check(ok, "%s: result %d differs from NumPy" % (label, k))


def disk(r, label, **want):
    for k, v in want.items():
        check(r["disk"].get(k) == v, "%s: disk %s = %s, expected %s (%s)"
              % (label, k, r["disk"].get(k), v, r["stdout"][-600:]))


def entries(cache):
    if not os.path.isdir(cache):
        return []
    return sorted(f for f in os.listdir(cache) if f.endswith(".kcode"))


# --- hit -----------------------------------------------------------------
C1 = os.path.join(tmp, "c1")
cold = run(MAIN, C1)
right(cold, "cold")
disk(cold, "cold", hits=0, misses=1, stores=1, corrupt=0)
check(len(entries(C1)) == 1, "cold: one entry, got %s" % entries(C1))
warm = run(MAIN, C1)
right(warm, "warm")
disk(warm, "warm", hits=1, misses=0, stores=0)
check("code loaded from the disk cache" in warm["stdout"], "warm: not loaded")
check("compiled @main for the cpu" not in warm["stderr"], "warm: compiled")
# The run-time check of cached code, with the stored message.
err = run(MAIN, C1, idx=BAD)
check(err["rc"] != 0, "bad index from the cache: exit 0")
check("disk cache hit" in err["stderr"], "bad index: no disk hit")
check(re.search(r"main\.mlir:6:8: index 64 is out of range for dim 0 "
                r"with size 64", err["stderr"]) is not None,
      "bad index: message: " + err["stderr"][-800:])
# The same function 3 lines lower: another entry, whose message names its
# own line.
MOVED = write("moved.mlir", program(pad_lines=3))
err2 = run(MOVED, C1, idx=BAD)
check(err2["rc"] != 0, "moved, bad index: exit 0")
check("disk cache miss" in err2["stderr"], "moved: no disk miss")
check(re.search(r"moved\.mlir:9:8: index 64 is out of range", err2["stderr"])
      is not None, "moved, bad index: message: " + err2["stderr"][-800:])
err3 = run(MOVED, C1, idx=BAD)
check("disk cache hit" in err3["stderr"], "moved again: no disk hit")
check(re.search(r"moved\.mlir:9:8: index 64 is out of range", err3["stderr"])
      is not None, "moved again: message: " + err3["stderr"][-800:])

# --- corrupt entries -----------------------------------------------------
C2 = os.path.join(tmp, "c2")
right(run(MAIN, C2), "c2 cold")
(entry,) = entries(C2)
entry_path = os.path.join(C2, entry)
with open(entry_path, "rb") as f:
    pristine = f.read()
other_key = "0" * 64 + ".kcode"


def corrupt_with(label, data):
    with open(entry_path, "wb") as f:
        f.write(data)
    r = run(MAIN, C2)
    right(r, label)
    disk(r, label, hits=0, corrupt=1, misses=1, stores=1)
    check("corrupt entry" in r["stderr"], "%s: not logged: %s" % (label, r["stderr"][-800:]))
    check("compiled @main for the cpu" in r["stderr"], "%s: not compiled" % label)
    with open(entry_path, "rb") as f:
        check(f.read() == pristine, "%s: entry not rewritten as compiled" % label)
    again = run(MAIN, C2)
    right(again, label + ", next run")
    disk(again, label + ", next run", hits=1, corrupt=0)


corrupt_with("truncated", pristine[:len(pristine) // 2])
corrupt_with("truncated header", pristine[:20])
corrupt_with("empty", b"")
mid = 120 + (len(pristine) - 120) // 2  # the header is 120 bytes
corrupt_with("flipped payload byte",
             pristine[:mid] + bytes([pristine[mid] ^ 0x40]) + pristine[mid + 1:])
corrupt_with("flipped last byte", pristine[:-1] + bytes([pristine[-1] ^ 1]))
corrupt_with("flipped key byte",
             pristine[:20] + bytes([pristine[20] ^ 1]) + pristine[21:])
corrupt_with("bad magic", b"X" + pristine[1:])
corrupt_with("appended bytes", pristine + b"\0\0\0\0")
# Another key's valid entry under this key's name.
moved_entry = [e for e in entries(C1) if e != entry][0]
with open(os.path.join(C1, moved_entry), "rb") as f:
    corrupt_with("another key's entry", f.read())

# Not a regular file: a link to a device is never read (it would not end),
# and is replaced by the new entry.
os.remove(entry_path)
os.symlink("/dev/zero", entry_path)
r = run(MAIN, C2)
right(r, "link to /dev/zero")
disk(r, "link to /dev/zero", hits=0, corrupt=1, misses=1, stores=1)
check("not a regular file" in r["stderr"], "link: " + r["stderr"][-800:])
check(not os.path.islink(entry_path), "link: not replaced")
r = run(MAIN, C2)
disk(r, "after the link", hits=1, corrupt=0)
# A directory in the entry's place: not read, compiled, and the store that
# cannot replace it warns once.
os.remove(entry_path)
os.mkdir(entry_path)
r = run(MAIN, C2)
right(r, "directory entry")
disk(r, "directory entry", hits=0, corrupt=1, misses=1, stores=0)
check(r["stderr"].count("kiln: warning: the compiled-code cache in") == 1,
      "directory entry: one warning expected: " + r["stderr"][-800:])
os.rmdir(entry_path)

# --- key changes ---------------------------------------------------------
C3 = os.path.join(tmp, "c3")
right(run(MAIN, C3), "c3 cold")
r = run(MAIN, C3, env={"KILN_CACHE_KILN_VERSION": "99.0.0-test"})
right(r, "other Kiln version")
disk(r, "other Kiln version", hits=0, misses=1, stores=1)
r = run(MAIN, C3, extra=["--cpu-threads=1"])
right(r, "other thread count")
disk(r, "other thread count", hits=0, misses=1, stores=1)
r = run(MAIN, C3, extra=["--matmul=generated"])
right(r, "other matmul")
disk(r, "other matmul", hits=0, misses=1, stores=1)
SCALED = write("scaled.mlir", program(scale=0.5))
r = run(SCALED, C3)
right(r, "other constant", scale=0.5)
disk(r, "other constant", hits=0, misses=1, stores=1)
check(len(entries(C3)) == 5, "c3: 5 entries, got %d" % len(entries(C3)))
for label, kw in [("same version", {}),
                  ("same other version",
                   {"env": {"KILN_CACHE_KILN_VERSION": "99.0.0-test"}}),
                  ("same thread count", {"extra": ["--cpu-threads=1"]})]:
    r = run(MAIN, C3, **kw)
    right(r, label)
    disk(r, label, hits=1, misses=0)

# --- concurrent writers --------------------------------------------------
C4 = os.path.join(tmp, "c4")
procs = [start(MAIN, C4) for _ in range(4)]
for k, p in enumerate(procs):
    r = finish(p)
    right(r, "concurrent %d" % k)
    check(r["disk"].get("corrupt") == 0, "concurrent %d: corrupt" % k)
    check("warning" not in r["stderr"], "concurrent %d: %s" % (k, r["stderr"][-800:]))
names = os.listdir(C4)
check(len(names) == 1 and names[0].endswith(".kcode"),
      "concurrent: files %s" % names)
r = run(MAIN, C4)
right(r, "after concurrent")
disk(r, "after concurrent", hits=1, corrupt=0)

# --- eviction ------------------------------------------------------------
C5 = os.path.join(tmp, "c5")
progs = [write("p%d.mlir" % k, program(scale=1.0 + k)) for k in range(3)]
sizes = []
for k in range(2):
    right(run(progs[k], C5), "evict p%d" % k, scale=1.0 + k)
    time.sleep(0.05)
sizes = [os.path.getsize(os.path.join(C5, e)) for e in entries(C5)]
# Room for two entries, not three.
cap_mb = "%.9f" % ((sum(sizes) + max(sizes) // 2) / 1048576.0)
r = run(progs[0], C5, env={"KILN_CACHE_MAX_MB": cap_mb})  # p0 most recent
disk(r, "evict: p0 again", hits=1)
time.sleep(0.05)
r = run(progs[2], C5, env={"KILN_CACHE_MAX_MB": cap_mb})
right(r, "evict p2", scale=3.0)
disk(r, "evict p2", misses=1, stores=1, evictions=1)
check(len(entries(C5)) == 2, "evict: %d entries left" % len(entries(C5)))
r = run(progs[0], C5, env={"KILN_CACHE_MAX_MB": cap_mb})
disk(r, "evict: p0 kept (recently used)", hits=1)
r = run(progs[1], C5, env={"KILN_CACHE_MAX_MB": cap_mb})
right(r, "evict: p1 compiled again", scale=2.0)
disk(r, "evict: p1 was evicted", hits=0, misses=1)
# A cap of 0 stores nothing and, at the next store, keeps nothing.
r = run(write("p3.mlir", program(scale=4.0)), C5, env={"KILN_CACHE_MAX_MB": "0"})
right(r, "cap 0", scale=4.0)
disk(r, "cap 0", misses=1, stores=0, evictions=2)
check(entries(C5) == [], "cap 0: entries left: %s" % entries(C5))

# --- machine code on several threads (ParallelCodegen.h) -----------------
# An entry of several objects (one per thread) is stored, loaded by a process
# that would compile on one thread, and never loaded once truncated inside
# its second object.
C6 = os.path.join(tmp, "c6")
r = run(MAIN, C6, env={"KILN_CPU_CODEGEN_THREADS": "3"})
right(r, "3 codegen threads, cold")
disk(r, "3 codegen threads, cold", hits=0, misses=1, stores=1)
check("machine code on 3 threads" in r["stderr"],
      "3 codegen threads: not compiled on 3 threads: " + r["stderr"][-800:])
r = run(MAIN, C6, env={"KILN_CPU_CODEGEN_THREADS": "1"})
right(r, "3-object entry loaded")
disk(r, "3-object entry loaded", hits=1, misses=0)
(multi,) = entries(C6)
with open(os.path.join(C6, multi), "rb") as f:
    data = f.read()
with open(os.path.join(C6, multi), "wb") as f:
    f.write(data[:len(data) - 100])
r = run(MAIN, C6, env={"KILN_CPU_CODEGEN_THREADS": "1"})
right(r, "truncated 3-object entry")
disk(r, "truncated 3-object entry", hits=0, corrupt=1, misses=1, stores=1)

# --- off and unwritable --------------------------------------------------
r = run(MAIN, None)
right(r, "off")
disk(r, "off", hits=0, misses=0, stores=0)
blocker = write("a-file", "not a directory")
r = run(MAIN, os.path.join(blocker, "cache"))
right(r, "unwritable")
check(r["stderr"].count("kiln: warning: the compiled-code cache in") == 1,
      "unwritable: one warning expected: " + r["stderr"][-800:])

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")
