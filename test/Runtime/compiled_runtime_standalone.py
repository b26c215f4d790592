# RUN: %python %s %S/../../runtime %S/Inputs/compiled_runtime_driver.cpp %t
#
# Kiln's compiled-code runtime (runtime/) builds with CMake and a C++ compiler
# alone: a fresh CMake tree, a PATH that holds only cmake, ninja and the
# compiler (no llvm-config), CMAKE_PREFIX_PATH emptied, no MLIR_DIR/LLVM_DIR.
# The runtime sources see no LLVM/MLIR include directory, so an #include of
# an LLVM or MLIR header fails the build: the test shows that too, on a copy
# of the sources with one such include added, then builds the real sources
# (with GCC, whose missing <omp-tools.h> takes the runtime's own OMPT
# declarations, and with clang) and runs a driver over the runtime. The same
# tree builds libkiln_rt.so (the package loader): it needs no LLVM/MLIR
# library, and a package from kiln-compile runs through it and the Python
# loader (runtime/python/kiln_rt.py) in a process without the compiler.
import os
import shutil
import subprocess
import sys

runtime, driver, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

# A PATH without llvm-config or any other LLVM tool.
bindir = os.path.join(work, "bin")
os.makedirs(bindir)
for tool in ["cmake", "ninja", "g++", "gcc", "clang++-22", "clang-22", "ld", "as", "ar", "ranlib"]:
    path = shutil.which(tool)
    if path:
        os.symlink(path, os.path.join(bindir, tool))
env = {k: v for k, v in os.environ.items()
       if not k.startswith(("LLVM", "MLIR", "CMAKE_", "CPATH", "CPLUS_INCLUDE",
                            "C_INCLUDE", "LIBRARY_PATH"))}
env["PATH"] = bindir
env["CMAKE_PREFIX_PATH"] = ""
assert shutil.which("llvm-config", path=bindir) is None


def build(src, tree, cxx, extra_target=None):
    configure = subprocess.run(
        ["cmake", "-G", "Ninja", "-S", src, "-B", tree,
         "-DCMAKE_CXX_COMPILER=" + cxx, "-DCMAKE_BUILD_TYPE=Release"],
        env=env, capture_output=True, text=True)
    if configure.returncode:
        return configure
    return subprocess.run(["cmake", "--build", tree], env=env,
                          capture_output=True, text=True)


failures = 0


def record(ok, what, detail=""):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        print(detail)
        failures += 1


# 1. An LLVM header in the runtime's sources breaks the standalone build.
poisoned = os.path.join(work, "poisoned")
shutil.copytree(runtime, poisoned)
src = os.path.join(poisoned, "lib", "CallContext.cpp")
with open(src) as f:
    text = f.read()
with open(src, "w") as f:
    f.write('#include "llvm/ADT/ArrayRef.h"\n' + text)
# (clang++-22 is installed by scripts/install-deps.sh; g++ may be absent.)
compilers = [c for c in ["clang++-22", "g++"] if shutil.which(c, path=bindir)]
assert compilers, "no C++ compiler (clang++-22 or g++)"
r = build(poisoned, os.path.join(work, "build-poisoned"), compilers[0])
record(r.returncode != 0 and "llvm/ADT/ArrayRef.h" in (r.stdout + r.stderr),
       "an LLVM include fails the standalone build", r.stdout + r.stderr)

# 2. The real sources build and the driver runs, with each compiler.
for cxx in compilers:
    tree = os.path.join(work, "build-" + cxx)
    r = build(runtime, tree, cxx)
    record(r.returncode == 0, "the runtime builds standalone with " + cxx,
           r.stdout + r.stderr)
    if r.returncode:
        continue
    exe = os.path.join(tree, "driver")
    r = subprocess.run(
        [cxx, "-std=c++17", "-O1", "-I", os.path.join(runtime, "include"),
         driver, os.path.join(tree, "libKilnCompiledRuntime.a"), "-lpthread",
         "-ldl", "-o", exe], env=env, capture_output=True, text=True)
    record(r.returncode == 0, "the driver links with " + cxx, r.stdout + r.stderr)
    if r.returncode:
        continue
    r = subprocess.run([exe], capture_output=True, text=True)
    record(r.returncode == 0 and "PASSED" in r.stdout,
           "the driver passes (" + cxx + ")", r.stdout + r.stderr)

    # libkiln_rt.so from the same tree: no LLVM/MLIR library among its
    # dependencies, and it runs a package.
    librt = os.path.join(tree, "libkiln_rt.so.0")
    record(os.path.exists(librt), "libkiln_rt.so.0 builds standalone (" + cxx + ")")
    if not os.path.exists(librt):
        continue
    r = subprocess.run(["readelf", "-d", librt], capture_output=True, text=True)
    needed = [l.split("[")[1].rstrip("]") for l in r.stdout.splitlines()
              if "(NEEDED)" in l]
    record(r.returncode == 0 and needed and
           not any("LLVM" in n or "MLIR" in n or "llvm" in n for n in needed),
           "libkiln_rt needs no LLVM/MLIR library (" + ", ".join(needed) + ")")
    tools = os.environ.get("KILN_TOOLS_DIR")
    if not tools:
        continue
    src = os.path.join(work, "pkg.mlir")
    with open(src, "w") as f:
        f.write("""
func.func @f(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = kt.mul %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = kt.sum %0 {dim = [1]} : (tensor<?x3xf32>) -> tensor<?xf32>
  %2 = kt.unsqueeze %1 {dim = 1} : (tensor<?xf32>) -> tensor<?x1xf32>
  %3 = kt.sub %0, %2 : (tensor<?x3xf32>, tensor<?x1xf32>) -> tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}
""")
    pkg = os.path.join(work, "pkg-" + cxx + ".so")
    r = subprocess.run([os.path.join(tools, "kiln-compile"), src, "-o", pkg],
                       capture_output=True, text=True)
    record(r.returncode == 0, "kiln-compile writes a package", r.stderr)
    if r.returncode:
        continue
    script = """
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import kiln_rt
p = kiln_rt.Package(sys.argv[2], library=sys.argv[3])
a = np.arange(12, dtype=np.float32).reshape(4, 3)
b = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
r, = p.run("f", a, b)
m = a * b
assert "kiln" not in sys.modules
print("MATCH" if np.allclose(r, m - m.sum(1, keepdims=True), atol=1e-5) else "MISMATCH", r)
"""
    r = subprocess.run([sys.executable, "-c", script,
                        os.path.join(runtime, "python"), pkg, librt],
                       capture_output=True, text=True)
    record(r.returncode == 0 and "MATCH" in r.stdout and "MISMATCH" not in r.stdout,
           "the standalone libkiln_rt runs the package (" + cxx + ")",
           r.stdout + r.stderr)

print("FAILED" if failures else "PASSED")
sys.exit(1 if failures else 0)
