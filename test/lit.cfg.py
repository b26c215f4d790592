# -*- Python -*-
# Lit configuration of Kiln's tests.

import os
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "KILN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "lib", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kiln_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["kiln-opt", "kiln-run", "kiln-reduce", "kiln-compile", "kiln-fuzz-gen"], [config.kiln_tools_dir])

# Execution tests are Python scripts that compare kiln-run's results with
# NumPy / PyTorch. They run with Debian's interpreter (the one that sees
# python3-numpy and python3-torch) and import test/lib/kiln_testing.py.
config.substitutions.append(("%python", config.python_executable))
config.environment["PYTHONPATH"] = os.path.join(config.test_source_root, "lib")
# Do not put the test's own folder on sys.path: a test named e.g. random.py
# would shadow the standard library module.
config.environment["PYTHONSAFEPATH"] = "1"
config.environment["KILN_TOOLS_DIR"] = config.kiln_tools_dir
config.environment["OMP_NUM_THREADS"] = "1"
# No test reads or writes the user's compiled-code disk cache (~/.cache/kiln,
# docs/codegen.md "Disk cache"): a test could otherwise pass on an entry an
# earlier run left. The disk cache's own tests name a directory under %t.
config.environment["KILN_CACHE_DIR"] = "off"
config.environment.pop("KILN_CACHE_MAX_MB", None)
config.environment.pop("KILN_CACHE_KILN_VERSION", None)


def _can_import(module):
    try:
        return subprocess.run([config.python_executable, "-c", "import " + module],
                              capture_output=True).returncode == 0
    except OSError:
        return False


if _can_import("numpy"):
    config.available_features.add("numpy")
if _can_import("torch"):
    config.available_features.add("torch")

# A host with AVX-512F: kiln-cpu's default f32 exp is then the vscalefps form
# (kiln-cpu-lower-vectors fast-exp=auto, FastExp.cpp).
try:
    with open("/proc/cpuinfo") as _f:
        if " avx512f" in _f.read():
            config.available_features.add("avx512f")
except OSError:
    pass

# oneDNN convolutions (conv=onednn): libkiln_onednn built (libdnnl-dev found).
if getattr(config, "kiln_onednn_lib", ""):
    config.available_features.add("onednn")

# ptxas (CUDA toolkit): kiln-nvptx's kernels are assembled by it in tests;
# without it those tests are UNSUPPORTED. PATH first, then $CUDA_HOME/bin.
import shutil
_ptxas = shutil.which("ptxas") or (
    os.path.join(os.environ["CUDA_HOME"], "bin", "ptxas")
    if os.environ.get("CUDA_HOME") and
    os.path.exists(os.path.join(os.environ["CUDA_HOME"], "bin", "ptxas"))
    else None)
if _ptxas:
    config.available_features.add("ptxas")
# The device build of the runtime's special functions (built with clang and
# the CUDA toolkit; kiln-nvptx links it for kt.special / kt.zeta).
if os.path.exists(os.path.join(config.kiln_obj_root, "lib",
                               "kiln_special_device.bc")):
    config.available_features.add("special-device")
    config.environment["PATH"] = os.path.dirname(_ptxas) + os.pathsep + \
        config.environment.get("PATH", os.environ.get("PATH", ""))
    for var in ["CUDA_HOME", "CUDA_PATH"]:
        if var in os.environ:
            config.environment[var] = os.environ[var]

# Sanitizer builds (KILN_SANITIZE, docs/debugging.md): the tools and C API
# test programs are instrumented; Python tests that load libKilnCAPI.so into
# /usr/bin/python3 (not instrumented) cannot run. Sanitizer options from the
# environment reach the tests.
sanitize = getattr(config, "kiln_sanitize", "")
if sanitize:
    config.available_features.add("sanitizer")
    for s in sanitize.split(","):
        config.available_features.add("sanitize-" + s)
    for var in ["ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS",
                "ASAN_SYMBOLIZER_PATH", "LLVM_SYMBOLIZER_PATH"]:
        if var in os.environ:
            config.environment[var] = os.environ[var]
    # Defaults (scripts/sanitize.sh): impossible allocations fail with Kiln's
    # error instead of an ASan abort; leaks are findings; a finding aborts
    # (a signal): with the sanitizers' default exit code 1 it would read as
    # an ordinary error, which `not` and the sweeps that expect errors
    # accept.
    config.environment.setdefault(
        "ASAN_OPTIONS", "allocator_may_return_null=1:detect_leaks=1:abort_on_error=1")
    config.environment.setdefault("UBSAN_OPTIONS",
                                  "print_stacktrace=1:abort_on_error=1")
    # TSan: the same for impossible allocations (errors.c's 256 TiB tensor:
    # TSan's allocator aborts past 1 TiB otherwise), and a report ends the
    # process with a signal at the first finding.
    config.environment.setdefault(
        "TSAN_OPTIONS", "allocator_may_return_null=1:halt_on_error=1:"
        "abort_on_error=1:second_deadlock_stack=1")
    # The checked-in suppressions (never Kiln's own code): leaks inside the
    # uninstrumented libraries (test/lsan.supp), libomp/MLIR synchronization
    # TSan cannot see (test/CAPI/tsan.supp).
    def _add_option(var, option):
        old = config.environment.get(var, "")
        config.environment[var] = old + (":" if old else "") + option
    _add_option("LSAN_OPTIONS", "suppressions=" +
                os.path.join(config.test_source_root, "lsan.supp"))
    if "thread" in sanitize:
        _add_option("TSAN_OPTIONS", "suppressions=" +
                    os.path.join(config.test_source_root, "CAPI", "tsan.supp"))
    config.environment["KILN_SANITIZE"] = sanitize
    # %no_leak_check: a program whose leaks are by design (a test says why).
    config.substitutions.append(("%no_leak_check", "env ASAN_OPTIONS=" +
                                 config.environment["ASAN_OPTIONS"] +
                                 ":detect_leaks=0"))
    # %python_dlopen: Python that loads Kiln's instrumented shared libraries
    # (ctypes) into its own process: /usr/bin/python3 is not instrumented, so
    # the sanitizer runtime is preloaded, without leak checks (CPython leaks
    # by design at exit). KILN_SANITIZER_PRELOAD names that runtime for
    # scripts that start such a Python themselves (bad_input.py). (Inserted
    # first: lit would otherwise replace its %python prefix.)
    rt = "tsan" if "thread" in sanitize else "asan"
    preload = subprocess.run(
        [config.c_compiler, "-print-file-name=libclang_rt.%s-x86_64.so" % rt],
        capture_output=True, text=True).stdout.strip()
    config.environment["KILN_SANITIZER_PRELOAD"] = preload
    config.substitutions.insert(0, ("%python_dlopen", "env LD_PRELOAD=%s ASAN_OPTIONS=%s:detect_leaks=0 %s" % (
        preload, config.environment["ASAN_OPTIONS"], config.python_executable)))
else:
    config.substitutions.append(("%no_leak_check", ""))
    config.substitutions.insert(0, ("%python_dlopen", config.python_executable))

# The fuzz build (KILN_FUZZ=ON, docs/debugging.md "Fuzzing"): test/Fuzz runs
# each libFuzzer harness once over its seed corpus (UNSUPPORTED elsewhere).
# A normal build with KILN_FUZZ_HARNESSES=ON (the default with clang) has the
# harnesses too, uninstrumented libraries: test/Fuzz/smoke.test.
_on = ("ON", "1", "TRUE", "YES", "True", "On")
if getattr(config, "kiln_fuzz", "") in _on or \
        getattr(config, "kiln_fuzz_harnesses", "") in _on:
    config.available_features.add("kiln-fuzz-harnesses")
    config.substitutions.append(("%fuzz_bin", config.kiln_tools_dir))
    config.substitutions.append(("%fuzz_corpus", os.path.join(config.kiln_src_root, "fuzz", "corpus")))
if getattr(config, "kiln_fuzz", "") in _on:
    config.available_features.add("kiln-fuzz")
    config.substitutions.append(("%fuzz_build_dir", config.kiln_obj_root))
    for var in ["ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"]:
        if var in os.environ:
            config.environment[var] = os.environ[var]

# A usable CUDA driver (the GPU machine): GPU code runs for real. Without it
# (CI), the tests that need it are UNSUPPORTED and the no-driver paths are
# checked instead.
import ctypes
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
