"""Run Kiln packages from Python, over libkiln_rt alone.

A package is the shared object `kiln-compile` writes (docs/packages.md). This
module needs only libkiln_rt.so (runtime/, no LLVM or MLIR) and ctypes: not
the compiler, not the `kiln` package. Tensors cross by DLPack without copies:
torch tensors (torch.utils.dlpack, PyTorch 1.13 and 2.x) and NumPy arrays.

    import kiln_rt
    pkg = kiln_rt.Package("model.so")          # or Package(path, library=...)
    print(pkg.entries, pkg.signature("forward"))
    y, = pkg.run("forward", x, w)              # or pkg["forward"](x, w)

Results are torch tensors when any argument is a torch tensor, else NumPy
arrays; they own their memory (freed by libkiln_rt when Python drops them).
CUDA packages (kiln-compile --backend=nvptx) take and return torch CUDA
tensors (device 0, contiguous); libkiln_rt must have been built with CUDA.
Errors (a bad package, a guard that fails, a run-time error of the compiled
code) raise KilnRtError with libkiln_rt's message.

libkiln_rt.so is found at `library`, else $KILN_RT_LIBRARY, else next to this
file, else by the dynamic linker's search (libkiln_rt.so.0).
"""

import ctypes
import json
import os
from ctypes import (POINTER, Structure, c_char_p, c_int, c_int32, c_int64,
                    c_uint8, c_uint16, c_uint64, c_void_p, CFUNCTYPE)

__all__ = ["Package", "KilnRtError", "load_library", "cuda_memory_stats",
           "cuda_empty_cache"]

kDLCPU = 1
kDLCUDA = 2
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6


class KilnRtError(RuntimeError):
    """A failure reported by libkiln_rt (its message)."""


class DLDevice(Structure):
    _fields_ = [("device_type", c_int), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
    ("deleter", CFUNCTYPE(None, POINTER(DLManagedTensor)))]


class TensorSpec(Structure):
    _fields_ = [("name", c_char_p), ("dtype", DLDataType), ("ndim", c_int32),
                ("shape", POINTER(c_int64)), ("dim_names", POINTER(c_char_p))]


_lib = None


def load_library(path=None):
    """Loads libkiln_rt.so (once per process) and declares its functions."""
    global _lib
    if _lib is not None:
        return _lib
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [path, os.environ.get("KILN_RT_LIBRARY"),
                  os.path.join(here, "libkiln_rt.so.0"), "libkiln_rt.so.0"]
    errors = []
    for c in candidates:
        if not c:
            continue
        try:
            L = ctypes.CDLL(c)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise KilnRtError("cannot load libkiln_rt: " + "; ".join(errors))
    L.kiln_rt_api_version.restype = c_int
    L.kiln_rt_last_error.restype = c_char_p
    L.kiln_rt_package_load.restype = c_void_p
    L.kiln_rt_package_load.argtypes = [c_char_p]
    L.kiln_rt_package_free.argtypes = [c_void_p]
    L.kiln_rt_package_manifest.restype = c_char_p
    L.kiln_rt_package_manifest.argtypes = [c_void_p]
    L.kiln_rt_package_num_entries.argtypes = [c_void_p]
    L.kiln_rt_entry_name.restype = c_char_p
    L.kiln_rt_entry_name.argtypes = [c_void_p, c_int]
    L.kiln_rt_package_find_entry.argtypes = [c_void_p, c_char_p]
    for f in (L.kiln_rt_entry_num_args, L.kiln_rt_entry_num_results):
        f.argtypes = [c_void_p, c_int]
    for f in (L.kiln_rt_entry_arg, L.kiln_rt_entry_result):
        f.argtypes = [c_void_p, c_int, c_int, POINTER(TensorSpec)]
    L.kiln_rt_check_args.argtypes = [c_void_p, c_int, POINTER(POINTER(DLTensor)), c_int]
    L.kiln_rt_run.argtypes = [c_void_p, c_int, POINTER(POINTER(DLTensor)), c_int,
                              POINTER(POINTER(DLManagedTensor)), c_int]
    major = L.kiln_rt_api_version() // 1000
    if major != 0:
        raise KilnRtError("libkiln_rt API version %d.x; this loader speaks 0.x"
                          % major)
    _lib = L
    return L


def _error():
    return KilnRtError(_lib.kiln_rt_last_error().decode("utf-8", "replace"))


# --- Python's capsule functions, declared on a handle of our own.
_py = ctypes.PyDLL(None)
_capsule_new = _py.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, c_char_p, c_void_p]
_capsule_get = _py.PyCapsule_GetPointer
_capsule_get.restype = c_void_p
_capsule_get.argtypes = [ctypes.py_object, c_char_p]
_capsule_is_valid = ctypes.PyDLL(None).PyCapsule_IsValid
_capsule_is_valid.restype = c_int
_capsule_is_valid.argtypes = [c_void_p, c_char_p]
_capsule_get_raw = ctypes.PyDLL(None).PyCapsule_GetPointer
_capsule_get_raw.restype = c_void_p
_capsule_get_raw.argtypes = [c_void_p, c_char_p]


@CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule):
    # A capsule no consumer took (a consumer renames it "used_dltensor" and
    # calls the deleter itself): free the tensor here.
    if _capsule_is_valid(capsule, b"dltensor"):
        p = _capsule_get_raw(capsule, b"dltensor")
        m = DLManagedTensor.from_address(p)
        if m.deleter:
            m.deleter(ctypes.cast(p, POINTER(DLManagedTensor)))


_DESTRUCTOR = ctypes.cast(_capsule_destructor, c_void_p)

_NUMPY_DTYPES = {(kDLFloat, 32): "float32", (kDLFloat, 64): "float64",
                 (kDLFloat, 16): "float16", (kDLInt, 64): "int64",
                 (kDLInt, 32): "int32", (kDLInt, 16): "int16",
                 (kDLInt, 8): "int8", (kDLUInt, 8): "uint8",
                 (kDLBool, 8): "bool"}


def _is_torch(x):
    return type(x).__module__.startswith("torch")


def _torch_arg(t, keep):
    """The DLTensor of a torch tensor (no copy). Booleans go as uint8 and are
    relabelled kDLBool (PyTorch 1.13's DLPack has no bool)."""
    import torch
    import torch.utils.dlpack
    t = t.detach()
    is_bool = t.dtype == torch.bool
    if is_bool:
        t = t.view(torch.uint8)
    capsule = torch.utils.dlpack.to_dlpack(t)
    keep.append(capsule)
    dl = DLManagedTensor.from_address(_capsule_get(capsule, b"dltensor")).dl_tensor
    if is_bool:
        dl.dtype.code = kDLBool
    return dl


def _numpy_arg(a, keep):
    """A DLTensor over a NumPy array's memory (no copy)."""
    import numpy as np
    a = np.asarray(a)
    keep.append(a)
    kinds = {"f": kDLFloat, "i": kDLInt, "u": kDLUInt, "b": kDLBool}
    if a.dtype.kind not in kinds:
        raise KilnRtError("NumPy dtype %s has no DLPack form" % a.dtype)
    shape = (c_int64 * max(a.ndim, 1))(*a.shape)
    strides = (c_int64 * max(a.ndim, 1))(*[s // a.itemsize for s in a.strides])
    if any(s % a.itemsize for s in a.strides):
        raise KilnRtError("a NumPy array with strides that are not a multiple "
                          "of its item size")
    keep.extend([shape, strides])
    dl = DLTensor()
    dl.data = a.__array_interface__["data"][0] if a.size else None
    dl.device = DLDevice(kDLCPU, 0)
    dl.ndim = a.ndim
    dl.dtype = DLDataType(kinds[a.dtype.kind], a.itemsize * 8, 1)
    dl.shape = shape
    dl.strides = strides
    dl.byte_offset = 0
    return dl


def _torch_result(mp):
    import torch
    import torch.utils.dlpack
    dl = mp.contents.dl_tensor
    is_bool = dl.dtype.code == kDLBool
    if is_bool:
        dl.dtype.code = kDLUInt
    capsule = _capsule_new(ctypes.cast(mp, c_void_p), b"dltensor", _DESTRUCTOR)
    t = torch.utils.dlpack.from_dlpack(capsule)
    return t.view(torch.bool) if is_bool else t


class _Owner:
    """Frees a result when the last NumPy array over it goes away."""

    def __init__(self, mp):
        self.mp = mp

    def __del__(self):
        if self.mp is not None and self.mp.contents.deleter:
            self.mp.contents.deleter(self.mp)
            self.mp = None


def _numpy_result(mp):
    import numpy as np
    dl = mp.contents.dl_tensor
    owner = _Owner(mp)
    if dl.device.device_type != kDLCPU:
        raise KilnRtError("a result on device type %d cannot be a NumPy array"
                          % dl.device.device_type)
    key = (dl.dtype.code, dl.dtype.bits)
    if key not in _NUMPY_DTYPES:
        raise KilnRtError("a %s result has no NumPy dtype; pass torch tensors "
                          "to get torch results" %
                          ("bf16" if dl.dtype.code == kDLBfloat else str(key)))
    dtype = np.dtype(_NUMPY_DTYPES[key])
    shape = tuple(dl.shape[d] for d in range(dl.ndim))
    n = int(np.prod(shape)) if shape else 1
    if n == 0:
        return np.zeros(shape, dtype)
    buf = (ctypes.c_char * (n * dtype.itemsize)).from_address(dl.data + dl.byte_offset)
    buf._kiln_owner = owner  # the array's base keeps the owner alive
    return np.frombuffer(buf, dtype).reshape(shape)


class _CudaMemoryStats(Structure):
    _fields_ = [(n, c_uint64) for n in (
        "allocations", "cache_hits", "device_allocations", "device_frees",
        "bytes_in_use", "bytes_cached")]


def cuda_memory_stats():
    """The caching allocator's counters of CUDA packages' device memory
    (a dict), or None when libkiln_rt was built without CUDA."""
    L = load_library()
    if not hasattr(L, "kilnCudaGetMemoryStats"):
        return None
    s = _CudaMemoryStats()
    L.kilnCudaGetMemoryStats(ctypes.byref(s))
    return {n: getattr(s, n) for n, _ in _CudaMemoryStats._fields_}


def cuda_empty_cache():
    """Frees the device memory the caching allocator keeps for reuse."""
    L = load_library()
    if hasattr(L, "kilnCudaEmptyCache"):
        L.kilnCudaEmptyCache()


class Entry:
    """One entry of a package: call it with tensors."""

    def __init__(self, package, index):
        self.package = package
        self.index = index
        self.name = _lib.kiln_rt_entry_name(package._h, index).decode()

    def __call__(self, *args):
        return self.package.run(self.index, *args)


class Package:
    """A loaded package (kiln_rt_package_load)."""

    def __init__(self, path, library=None):
        L = load_library(library)
        self._h = L.kiln_rt_package_load(os.fsencode(path))
        if not self._h:
            raise _error()
        self.path = path
        self.manifest = json.loads(L.kiln_rt_package_manifest(self._h).decode())
        self._cuda = self.manifest.get("target", {}).get("device") == "cuda"
        self.entries = [L.kiln_rt_entry_name(self._h, i).decode()
                        for i in range(L.kiln_rt_package_num_entries(self._h))]

    def close(self):
        if getattr(self, "_h", None):
            _lib.kiln_rt_package_free(self._h)
            self._h = None

    def __del__(self):
        self.close()

    def _index(self, entry):
        if isinstance(entry, int):
            return entry
        i = _lib.kiln_rt_package_find_entry(self._h, entry.encode())
        if i < 0:
            raise _error()
        return i

    def __getitem__(self, entry):
        return Entry(self, self._index(entry))

    def signature(self, entry):
        """{"args": [(name, dtype, shape)], "results": [(dtype, shape)]}
        from the manifest (shape: sizes, symbolic dim names or "?")."""
        e = next(x for x in self.manifest["entries"]
                 if x["name"] == self.entries[self._index(entry)])
        return {"args": [(a["name"], a["dtype"], a["shape"]) for a in e["args"]],
                "results": [(r["dtype"], r["shape"]) for r in e["results"]]}

    def run(self, entry, *args):
        """Runs `entry` (name or index) on torch tensors / NumPy arrays."""
        if not self._h:
            raise KilnRtError("the package is closed")
        i = self._index(entry)
        keep = []
        dls = [_torch_arg(a, keep) if _is_torch(a) else _numpy_arg(a, keep)
               for a in args]
        arr = (POINTER(DLTensor) * max(len(dls), 1))(
            *[ctypes.pointer(d) for d in dls])
        n = _lib.kiln_rt_entry_num_results(self._h, i)
        out = (POINTER(DLManagedTensor) * max(n, 1))()
        if _lib.kiln_rt_run(self._h, i, arr, len(dls), out, n) != 0:
            raise _error()
        # A CUDA package's results are device memory: torch tensors always
        # (NumPy cannot hold them).
        as_torch = self._cuda or any(_is_torch(a) for a in args)
        return [(_torch_result if as_torch else _numpy_result)(out[r])
                for r in range(n)]
