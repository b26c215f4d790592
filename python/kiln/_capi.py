"""ctypes bindings of Kiln's C API (include/kiln-c/Kiln.h, libKilnCAPI.so).

This is the package's only way into the compiler (DESIGN.md, "Layering"):
sessions, options, calls with DLPack tensors, callbacks, statistics. Tensors
cross without copies: arguments are the DLTensors of
`torch.utils.dlpack.to_dlpack`, results are DLManagedTensors
(`kilnTensorListGetManaged`) adopted by `torch.utils.dlpack.from_dlpack`.

The library is looked up, in order, at:
  1. the environment variable KILN_LIBRARY (the .so itself, or a folder
     holding libKilnCAPI.so);
  2. next to this package (pip installs copy it there);
  3. the build tree of a source checkout: $KILN_BUILD_DIR/lib, then
     <checkout>/build/lib.
"""

import ctypes
import os
import re
import threading
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double,
                    c_int32, c_int64, c_size_t, c_uint8, c_uint16, c_uint32,
                    c_uint64, c_void_p)

import torch
import torch.utils.dlpack

from ._errors import KilnError, runtime_error

LIBRARY_NAME = "libKilnCAPI.so"
# The API version this package was written against: the library's major must
# equal it, its minor must be at least it (kilnTensorListGetManaged is 0.2,
# kilnSessionGetLastEntry 0.3).
API_MAJOR = 0
API_MINOR = 4

KILN_ARG_REQUIRES_GRAD = 1

# DLPack codes (kiln-c/DLPack.h).
kDLCPU = 1
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


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


class _Handle(Structure):
    _fields_ = [("ptr", c_void_p)]


class KilnSessionH(_Handle):
    pass


class KilnStatusH(_Handle):
    pass


class KilnTensorListH(_Handle):
    pass


class KilnStringRef(Structure):
    _fields_ = [("data", c_void_p), ("length", c_size_t)]


class KilnProgramStats(Structure):
    _fields_ = [("calls", c_uint64), ("hits", c_uint64), ("misses", c_uint64),
                ("compiles", c_uint64), ("fallbacks", c_uint64),
                ("numRecompileReasons", c_size_t),
                ("numCompilePhases", c_size_t), ("numEntries", c_size_t),
                ("totalCompileSeconds", c_double)]


# Callbacks. A KilnStatus is a struct holding one pointer, returned like a
# pointer on the platforms Kiln supports, and ctypes callbacks cannot return
# structs: they return c_void_p.
HOST_CALLBACK = CFUNCTYPE(c_void_p, c_void_p, POINTER(DLTensor), c_size_t,
                          KilnTensorListH)
MISS_CALLBACK = CFUNCTYPE(c_void_p, c_void_p, KilnStringRef,
                          POINTER(DLTensor), c_size_t, KilnStringRef,
                          POINTER(KilnStringRef))
WARNING_CALLBACK = CFUNCTYPE(None, c_void_p, KilnStringRef)
LOG_CALLBACK = CFUNCTYPE(None, c_void_p, KilnStringRef, KilnStringRef)


def _candidates():
    env = os.environ.get("KILN_LIBRARY")
    if env:
        yield (os.path.join(env, LIBRARY_NAME) if os.path.isdir(env) else env,
               "KILN_LIBRARY")
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, LIBRARY_NAME), "next to the package"
    build = os.environ.get("KILN_BUILD_DIR")
    if build:
        yield os.path.join(build, "lib", LIBRARY_NAME), "KILN_BUILD_DIR"
    checkout = os.path.dirname(os.path.dirname(here))
    yield os.path.join(checkout, "build", "lib", LIBRARY_NAME), "build tree"


_lib = None
_lib_path = None
_lock = threading.Lock()


def library_path():
    """The path of the libKilnCAPI.so in use (loading it if needed)."""
    lib()
    return _lib_path


def lib():
    """The loaded C library (loaded and checked on first use)."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path, where in _candidates():
            if os.path.exists(path):
                try:
                    handle = ctypes.CDLL(path)
                except OSError as e:
                    raise KilnError("cannot load the Kiln C API library %s "
                                    "(%s): %s" % (path, where, e)) from None
                _declare(handle)
                version = handle.kilnGetAPIVersion()
                major, minor = version >> 16, version & 0xFFFF
                if major != API_MAJOR or minor < API_MINOR:
                    raise KilnError(
                        "%s has C API version %d.%d; this kiln package needs "
                        "%d.%d or a later %d.x" % (path, major, minor,
                                                   API_MAJOR, API_MINOR,
                                                   API_MAJOR))
                _lib, _lib_path = handle, path
                return _lib
            tried.append("%s (%s)" % (path, where))
        raise KilnError(
            "cannot find the Kiln C API library %s; looked at: %s. Build Kiln "
            "(scripts/build.sh) or set KILN_LIBRARY to the library's path"
            % (LIBRARY_NAME, ", ".join(tried)))


def _declare(L):
    S, St, TL, SR = KilnSessionH, KilnStatusH, KilnTensorListH, KilnStringRef
    sigs = {
        "kilnGetAPIVersion": (c_uint32, []),
        "kilnStatusCreate": (St, [SR]),
        "kilnStatusGetMessage": (SR, [St]),
        "kilnStatusDestroy": (None, [St]),
        "kilnTensorListCreate": (TL, []),
        "kilnTensorListDestroy": (None, [TL]),
        "kilnTensorListSize": (c_size_t, [TL]),
        "kilnTensorListGet": (POINTER(DLTensor), [TL, c_size_t]),
        "kilnTensorListGetManaged": (St, [TL, c_size_t,
                                          POINTER(POINTER(DLManagedTensor))]),
        "kilnTensorListAppend": (St, [TL, POINTER(DLTensor)]),
        "kilnSessionCreate": (S, []),
        "kilnSessionDestroy": (None, [S]),
        "kilnSessionLoadModule": (St, [S, SR, SR]),
        "kilnSessionLoadModuleFile": (St, [S, SR]),
        "kilnSessionSetOption": (St, [S, SR, SR]),
        "kilnSessionGetOption": (St, [S, SR, POINTER(SR)]),
        "kilnSessionMarkDynamic": (St, [S, SR, c_size_t, c_size_t]),
        "kilnSessionMarkStatic": (St, [S, SR, c_size_t, c_size_t]),
        "kilnSessionRegisterHostCallback": (St, [S, SR, HOST_CALLBACK,
                                                 c_void_p]),
        "kilnSessionSetMissCallback": (St, [S, MISS_CALLBACK, c_void_p]),
        "kilnSessionSetWarningCallback": (St, [S, WARNING_CALLBACK, c_void_p]),
        "kilnSessionCall": (St, [S, SR, POINTER(DLTensor), c_size_t,
                                 POINTER(c_uint32), POINTER(TL)]),
        "kilnSessionGetStats": (St, [S, SR, POINTER(KilnProgramStats)]),
        "kilnSessionGetRecompileReason": (St, [S, SR, c_size_t, POINTER(SR)]),
        "kilnSessionGetCompilePhase": (St, [S, SR, c_size_t, POINTER(SR),
                                            POINTER(c_double)]),
        "kilnSessionGetEntryIR": (St, [S, SR, c_size_t, POINTER(SR)]),
        "kilnSessionGetLastEntry": (St, [S, SR, POINTER(ctypes.c_int64)]),
        "kilnSessionTransformModule": (St, [S, SR, SR, POINTER(SR)]),
        "kilnSetLogs": (St, [SR]),
        "kilnSetLogCallback": (None, [LOG_CALLBACK, c_void_p]),
        "kilnLogEnabled": (ctypes.c_bool, [SR, ctypes.c_bool]),
        "kilnLog": (St, [SR, SR]),
        "kilnTraceOpen": (St, [SR]),
        "kilnTraceFlush": (St, []),
        "kilnTraceNowMicros": (ctypes.c_uint64, []),
        "kilnTraceRecord": (None, [SR, SR, ctypes.c_uint64, ctypes.c_uint64]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(L, name)
        fn.restype = res
        fn.argtypes = args


class _Str:
    """A KilnStringRef over Python text, keeping the bytes alive."""

    __slots__ = ("data", "ref")

    def __init__(self, text):
        self.data = text.encode() if isinstance(text, str) else bytes(text)
        buf = ctypes.c_char_p(self.data)
        self.ref = KilnStringRef(ctypes.cast(buf, c_void_p), len(self.data))


def _string(ref):
    if not ref.data or not ref.length:
        return ""
    return ctypes.string_at(ref.data, ref.length).decode("utf-8", "replace")


_LOCATION = re.compile(r"(?:^|: )([^\s:][^:]*:\d+:\d+): ")


def error_location(message):
    """The innermost `file:line:col` a Kiln message names (the last one
    before its text: "@p: graph.py:3:1: compiled graph @p_g0 failed:
    user.py:7:12: index 7 is out of range" names user.py:7:12), or None."""
    head = message.split(" (note:", 1)[0]
    found = _LOCATION.findall(head)
    return found[-1] if found else None


def _check(status):
    """Raises KilnError with the status's message (destroying it) and the
    source location it names."""
    if not status.ptr:
        return
    L = lib()
    message = _string(L.kilnStatusGetMessage(status))
    L.kilnStatusDestroy(status)
    raise runtime_error(message, error_location(message))


def storage_ptr(t):
    """The address of the memory block under tensor `t` (its storage's)."""
    return t.untyped_storage().data_ptr() if hasattr(
        t, "untyped_storage") else t.storage().data_ptr()


def _status_pointer(message):
    """A new error status for a callback to return (Kiln destroys it)."""
    return lib().kilnStatusCreate(_Str(message).ref).ptr


# --- Python's capsule functions, on our own handle so that their argtypes do
# not clash with anyone else's ctypes.pythonapi declarations.
_py = ctypes.PyDLL(None)
_py.PyCapsule_New.restype = ctypes.py_object
_py.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
_py.PyCapsule_GetPointer.restype = c_void_p
_py.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
_capsule_valid = _py.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [c_void_p, c_char_p]
_capsule_pointer_raw = ctypes.PyDLL(None).PyCapsule_GetPointer
_capsule_pointer_raw.restype = c_void_p
_capsule_pointer_raw.argtypes = [c_void_p, c_char_p]


@CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule):
    # A "dltensor" capsule nobody consumed (a consumer renames it
    # "used_dltensor" and calls the deleter itself): free the tensor.
    if _capsule_valid(capsule, b"dltensor"):
        p = _capsule_pointer_raw(capsule, b"dltensor")
        managed = DLManagedTensor.from_address(p)
        if managed.deleter:
            managed.deleter(ctypes.cast(p, POINTER(DLManagedTensor)))


_DESTRUCTOR = ctypes.cast(_capsule_destructor, c_void_p)

_BOOL_AS_U8 = {torch.bool}


def torch_to_dl(tensor, keep):
    """The DLTensor of a CPU torch tensor (no copy), via
    torch.utils.dlpack.to_dlpack. `keep` collects what must stay alive until
    the C call returns. torch 1.13 exports no booleans: they go as uint8 and
    are relabelled kDLBool."""
    if tensor.device.type != "cpu":
        raise KilnError("kiln takes CPU tensors only (got a tensor on %s); "
                        "copy it to the CPU first" % tensor.device)
    t = tensor.detach()
    is_bool = t.dtype == torch.bool
    if is_bool:
        t = t.view(torch.uint8)
    capsule = torch.utils.dlpack.to_dlpack(t)
    keep.append(capsule)
    p = _py.PyCapsule_GetPointer(capsule, b"dltensor")
    dl = DLManagedTensor.from_address(p).dl_tensor
    if is_bool:
        dl.dtype.code = kDLBool
    return dl


class _ArgExports:
    """The argument array of one program's calls on one thread, with the
    DLPack exports of its held arguments (module parameters and buffers)
    kept between calls: exporting ~260 parameters anew on every call of a
    mobilenet_v2 costs more than 1 ms at batch 1. A kept export is used
    again only for the same tensor object with the same data pointer,
    shape, strides and dtype (`.data = ...`, `resize_`, `set_` or a
    replaced parameter export again); the export holds the tensor's
    storage, so no other tensor can have taken its address meanwhile."""
    __slots__ = ("args", "kept", "busy")

    def __init__(self, n):
        self.args = (DLTensor * max(n, 1))()
        self.kept = [None] * n
        self.busy = False

    def fill(self, tensors, held, keep):
        args = self.args
        kept = self.kept
        for i, t in enumerate(tensors):
            if not held[i]:
                kept[i] = None
                args[i] = torch_to_dl(t, keep)
                continue
            sig = (t.data_ptr(), t.shape, t.stride(), t.dtype)
            k = kept[i]
            if k is not None and k[0] is t and k[1] == sig:
                continue
            mine = []
            args[i] = torch_to_dl(t, mine)
            kept[i] = (t, sig, mine)
        return args


def _managed_to_torch(managed_ptr):
    """Adopts a DLManagedTensor from kilnTensorListGetManaged as a torch
    tensor without a copy (booleans go through uint8: torch 1.13's DLPack
    has no bool)."""
    dl = managed_ptr.contents.dl_tensor
    is_bool = dl.dtype.code == kDLBool
    if is_bool:
        dl.dtype.code = kDLUInt
    capsule = _py.PyCapsule_New(ctypes.cast(managed_ptr, c_void_p),
                                b"dltensor", _DESTRUCTOR)
    t = torch.utils.dlpack.from_dlpack(capsule)
    return t.view(torch.bool) if is_bool else t


class Session:
    """A Kiln session (kilnSession*): one loaded module of kg.programs, its
    options, caches, callbacks and statistics. The C API session underneath
    may be called from several threads (docs/c-api.md, "Threading"); this
    wrapper has not been tested that way: use it from one thread at a
    time."""

    def __init__(self):
        self._L = lib()
        self._h = self._L.kilnSessionCreate()
        self._pid = os.getpid()
        self._miss = None
        self._miss_fn = None
        self._miss_text = None
        self._miss_error = None
        self._warn = None
        self._warn_fn = None
        self._host = {}
        self._arg_exports = threading.local()   # _ArgExports per program
        # Data pointers of the last call's results as the C API reported
        # them (tests check the torch tensors share these buffers).
        self.last_result_pointers = []

    def close(self):
        if getattr(self, "_h", None) is not None and self._h.ptr:
            # A session inherited through fork() is not destroyed in the
            # child: its MLIR context's worker threads exist only in the
            # parent, and tearing it down there crashed (garbage collection
            # in opinfo_sweep's forked workers). The child leaves it to the
            # parent.
            if getattr(self, "_pid", None) == os.getpid():
                self._L.kilnSessionDestroy(self._h)
            self._h = KilnSessionH()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # --- module and options
    def load(self, text, buffer_name="kiln"):
        _check(self._L.kilnSessionLoadModule(self._h, _Str(text).ref,
                                             _Str(buffer_name).ref))

    def load_file(self, path):
        _check(self._L.kilnSessionLoadModuleFile(self._h, _Str(path).ref))

    def set_option(self, key, value):
        _check(self._L.kilnSessionSetOption(self._h, _Str(key).ref,
                                            _Str(str(value)).ref))

    def get_option(self, key):
        out = KilnStringRef()
        _check(self._L.kilnSessionGetOption(self._h, _Str(key).ref,
                                            ctypes.byref(out)))
        return _string(out)

    def mark_dynamic(self, program, arg, dim):
        _check(self._L.kilnSessionMarkDynamic(self._h, _Str(program).ref,
                                              arg, dim))

    def mark_static(self, program, arg, dim):
        _check(self._L.kilnSessionMarkStatic(self._h, _Str(program).ref,
                                             arg, dim))

    # --- callbacks
    def set_miss_callback(self, fn):
        """fn(program: str, reason: str) -> module text, called on a cache
        miss that compiles (reason "" the first time). An exception it
        raises fails the call and is re-raised by `call`."""
        self._miss_fn = fn
        if fn is None:
            self._miss = None
            _check(self._L.kilnSessionSetMissCallback(
                self._h, MISS_CALLBACK(), None))
            return

        def trampoline(_user, program, _args, _nargs, reason, out):
            try:
                text = self._miss_fn(_string(program), _string(reason))
                self._miss_text = text.encode()
                out[0] = KilnStringRef(
                    ctypes.cast(ctypes.c_char_p(self._miss_text), c_void_p),
                    len(self._miss_text))
                return None
            except BaseException as e:  # re-raised after the call returns
                self._miss_error = e
                return _status_pointer("%s: %s" % (type(e).__name__, e))

        self._miss = MISS_CALLBACK(trampoline)
        _check(self._L.kilnSessionSetMissCallback(self._h, self._miss, None))

    def set_warning_callback(self, fn):
        """fn(message: str) receives Kiln's warnings (None: stderr)."""
        self._warn_fn = fn
        if fn is None:
            self._warn = None
            _check(self._L.kilnSessionSetWarningCallback(
                self._h, WARNING_CALLBACK(), None))
            return

        def trampoline(_user, message):
            try:
                self._warn_fn(_string(message))
            except BaseException:
                pass

        self._warn = WARNING_CALLBACK(trampoline)
        _check(self._L.kilnSessionSetWarningCallback(self._h, self._warn,
                                                     None))

    def register_host_callback(self, name, fn):
        """fn(list of torch tensors) -> list of torch tensors (copied)."""

        def trampoline(_user, inputs, n, outputs):
            try:
                ins = []
                for i in range(n):
                    ins.append(_borrowed_to_torch(inputs[i]))
                outs = fn(ins)
                for t in outs:
                    keep = []
                    dl = torch_to_dl(torch.as_tensor(t), keep)
                    st = self._L.kilnTensorListAppend(outputs,
                                                      ctypes.byref(dl))
                    if st.ptr:
                        return st.ptr
                return None
            except BaseException as e:
                return _status_pointer("%s: %s" % (type(e).__name__, e))

        cb = HOST_CALLBACK(trampoline)
        self._host[name] = cb
        _check(self._L.kilnSessionRegisterHostCallback(self._h,
                                                       _Str(name).ref, cb,
                                                       None))

    # --- calls
    def call(self, program, tensors, requires_grad=None, held=None):
        """Calls `program` with torch tensors (host scalars as 0-d
        tensors); returns the results as torch tensors that own Kiln's
        buffers (no copy). `held`: per argument, whether its DLPack export
        may be kept for the next call of `program` (module parameters and
        buffers, which live as long as the module: _ArgExports)."""
        keep = []
        n = len(tensors)
        flags = (c_uint32 * max(n, 1))()
        if requires_grad is not None:
            for i, r in enumerate(requires_grad):
                if r:
                    flags[i] = KILN_ARG_REQUIRES_GRAD
        exports = None if held is None else self._exports(program, n)
        results = KilnTensorListH()
        self._miss_error = None
        try:
            if exports is not None:
                args = exports.fill(tensors, held, keep)
            else:
                args = (DLTensor * max(n, 1))()
                for i, t in enumerate(tensors):
                    args[i] = torch_to_dl(t, keep)
            status = self._L.kilnSessionCall(self._h, _Str(program).ref, args,
                                             n, flags, ctypes.byref(results))
        finally:
            if exports is not None:
                exports.busy = False   # also when an export failed
        del keep
        if status.ptr:
            error = self._miss_error
            self._miss_error = None
            if error is not None:
                self._L.kilnStatusDestroy(status)
                raise error
            _check(status)
        try:
            out = []
            pointers = []
            count = self._L.kilnTensorListSize(results)
            for i in range(count):
                managed = POINTER(DLManagedTensor)()
                _check(self._L.kilnTensorListGetManaged(results, i,
                                                        ctypes.byref(managed)))
                pointers.append(managed.contents.dl_tensor.data or 0)
                out.append(_managed_to_torch(managed))
            self.last_result_pointers = pointers
            return out
        finally:
            self._L.kilnTensorListDestroy(results)

    @staticmethod
    def distinct(results, count=None):
        """The first `count` results (all by default) as tensors of their
        own: one that shares memory with an earlier one is copied. A
        program's results are distinct values (the importer returns one
        result per traced value, and `return y, y` gives the caller one
        tensor twice), but the compiler may give two of them one buffer
        where their values are equal (`y * 1.0` and `y.clone()` fold to
        `y`), and eager PyTorch's two tensors do not share memory: a write
        into one (by the caller, or by a later graph of a function with
        breaks) must not show in the other. Before 2026-11-30 it did
        (`test_distinct_results.py`)."""
        count = len(results) if count is None else count
        seen = {}
        for i in range(count):
            t = results[i]
            if not isinstance(t, torch.Tensor) or t.numel() == 0:
                continue
            ptr = storage_ptr(t)
            if ptr in seen:
                results[i] = t.clone()
            else:
                seen[ptr] = i
        return results

    def _exports(self, program, n):
        """This thread's _ArgExports of `program` (None while a call of it
        on this thread is under way: a host callback calling it again)."""
        local = self._arg_exports
        table = getattr(local, "table", None)
        if table is None:
            table = local.table = {}
        e = table.get(program)
        if e is None or len(e.kept) != n:
            e = table[program] = _ArgExports(n)
        if e.busy:
            return None
        e.busy = True
        return e

    # --- statistics
    def stats(self, program):
        s = KilnProgramStats()
        _check(self._L.kilnSessionGetStats(self._h, _Str(program).ref,
                                           ctypes.byref(s)))
        return {f: getattr(s, f) for f, _ in KilnProgramStats._fields_}

    def recompile_reasons(self, program):
        n = self.stats(program)["numRecompileReasons"]
        out = []
        for i in range(n):
            r = KilnStringRef()
            _check(self._L.kilnSessionGetRecompileReason(
                self._h, _Str(program).ref, i, ctypes.byref(r)))
            out.append(_string(r))
        return out

    def compile_phases(self, program):
        n = self.stats(program)["numCompilePhases"]
        out = {}
        for i in range(n):
            name = KilnStringRef()
            secs = c_double()
            _check(self._L.kilnSessionGetCompilePhase(
                self._h, _Str(program).ref, i, ctypes.byref(name),
                ctypes.byref(secs)))
            out[_string(name)] = secs.value
        return out

    def transform(self, text, pipeline):
        """Runs the pass `pipeline` on the module `text` (this session's
        context; its loaded module is untouched): the resulting text."""
        r = KilnStringRef()
        _check(self._L.kilnSessionTransformModule(
            self._h, _Str(text).ref, _Str(pipeline).ref, ctypes.byref(r)))
        return _string(r)

    def last_entry(self, program):
        """The cache entry (compile order) that ran the last call of
        `program`; -1 for the fallback."""
        e = ctypes.c_int64(-1)
        _check(self._L.kilnSessionGetLastEntry(self._h, _Str(program).ref,
                                               ctypes.byref(e)))
        return e.value

    def entry_ir(self, program, index):
        r = KilnStringRef()
        _check(self._L.kilnSessionGetEntryIR(self._h, _Str(program).ref,
                                             index, ctypes.byref(r)))
        return _string(r)


_DL_TO_TORCH = {
    (kDLFloat, 32): torch.float32, (kDLFloat, 64): torch.float64,
    (kDLFloat, 16): torch.float16, (kDLBfloat, 16): torch.bfloat16,
    (kDLInt, 64): torch.int64, (kDLInt, 32): torch.int32,
    (kDLInt, 16): torch.int16, (kDLInt, 8): torch.int8,
    (kDLUInt, 8): torch.uint8, (kDLBool, 8): torch.bool,
}


def _borrowed_to_torch(dl):
    """A copy of a borrowed (compact) DLTensor as a torch tensor."""
    dtype = _DL_TO_TORCH.get((dl.dtype.code, dl.dtype.bits))
    if dtype is None:
        raise KilnError("unsupported DLPack dtype code %d bits %d"
                        % (dl.dtype.code, dl.dtype.bits))
    shape = [dl.shape[i] for i in range(dl.ndim)]
    out = torch.empty(shape, dtype=dtype)
    nbytes = out.numel() * out.element_size()
    if nbytes:
        ctypes.memmove(out.data_ptr(), dl.data + dl.byte_offset, nbytes)
    return out
