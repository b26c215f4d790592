"""kiln._capi: the ctypes bindings of the C API, on the FAQ's toy_example
(examples/toy_example.mlir) and small programs written here. References are
computed by PyTorch."""

import gc
import os
import subprocess
import sys

import pytest
import torch

import kiln
from kiln import _capi

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
TOY = os.path.join(ROOT, "examples", "toy_example.mlir")


def toy_reference(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def toy_session():
    s = kiln.Session()
    s.load_file(TOY)
    printed = []
    s.register_host_callback("print", lambda ins: printed.append(ins) or [])
    return s, printed


def test_library_found_and_versioned():
    path = kiln.library_path()
    assert os.path.basename(path).startswith("libKilnCAPI.so")
    version = _capi.lib().kilnGetAPIVersion()
    assert version >> 16 == _capi.API_MAJOR
    assert version & 0xFFFF >= _capi.API_MINOR


def test_library_not_found_is_a_clear_error(tmp_path):
    # A fresh interpreter with KILN_LIBRARY naming a missing file.
    code = ("import kiln\n"
            "try:\n"
            "    kiln.Session()\n"
            "except kiln.KilnError as e:\n"
            "    print('error:', e)\n")
    env = dict(os.environ, KILN_LIBRARY=str(tmp_path / "nope.so"),
               PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "cannot find the Kiln C API library" in out.stdout
    assert "nope.so (KILN_LIBRARY)" in out.stdout


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_toy_example_both_branches(backend):
    s, printed = toy_session()
    s.set_option("backend", backend)
    torch.manual_seed(0)
    a = torch.randn(10)
    for b in (torch.rand(10) + 0.1, -torch.rand(10) - 0.1):
        (r,) = s.call("toy_example", [a, b])
        torch.testing.assert_close(r, toy_reference(a, b))
    assert len(printed) == 2
    torch.testing.assert_close(printed[0][0], a / (a.abs() + 1))
    stats = s.stats("toy_example")
    assert (stats["calls"], stats["hits"], stats["compiles"]) == (2, 1, 1)


def test_results_are_not_copied():
    s, _ = toy_session()
    a, b = torch.randn(10), torch.randn(10)
    (r,) = s.call("toy_example", [a, b])
    # The torch tensor's storage is the buffer the C API reported.
    assert r.data_ptr() == s.last_result_pointers[0]
    # It outlives the session.
    expected = toy_reference(a, b)
    s.close()
    del s
    gc.collect()
    torch.testing.assert_close(r, expected)


def test_recompile_reasons_and_stats():
    s, _ = toy_session()
    for n in (10, 20, 30):
        s.call("toy_example", [torch.randn(n), torch.randn(n)])
    assert s.recompile_reasons("toy_example") == [
        "tensor 'a' size mismatch at index 0. expected 10, actual 20"]
    stats = s.stats("toy_example")
    assert (stats["misses"], stats["compiles"], stats["hits"]) == (2, 2, 1)
    assert "tensor<?xf32>" in s.entry_ir("toy_example", 1)
    assert "specialize" in s.compile_phases("toy_example")


def test_errors_become_kiln_errors():
    s, _ = toy_session()
    with pytest.raises(kiln.KilnError, match="takes 2 arguments, got 1"):
        s.call("toy_example", [torch.randn(10)])
    with pytest.raises(kiln.KilnError, match="unknown option 'nope'"):
        s.set_option("nope", "1")
    with pytest.raises(kiln.KilnError, match="kilnSessionLoadModule"):
        s.load("kg.program @p(", "bad.mlir")
    # The session is still usable.
    s.call("toy_example", [torch.randn(10), torch.randn(10)])


def test_miss_callback_and_its_exceptions():
    s, _ = toy_session()
    reasons = []

    def miss(program, reason):
        reasons.append((program, reason))
        with open(TOY) as f:
            return f.read()

    s.set_miss_callback(miss)
    s.call("toy_example", [torch.randn(10), torch.randn(10)])
    s.call("toy_example", [torch.randn(12), torch.randn(12)])
    assert reasons == [("toy_example", ""), (
        "toy_example",
        "tensor 'a' size mismatch at index 0. expected 10, actual 12")]

    class Boom(Exception):
        pass

    def failing(program, reason):
        raise Boom("cannot capture")

    s.set_miss_callback(failing)
    # The callback's own exception comes back out of the call.
    with pytest.raises(Boom, match="cannot capture"):
        s.call("toy_example", [torch.randn(3, 2), torch.randn(3, 2)])


BOOL_PROGRAM = """
kg.program @flip(%m: tensor<4xi1>, %x: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xf32>) {
  kg.guard_tensor %m {dtype = i1, shape = [4]} : tensor<4xi1>
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  %r:2 = kg.graph @flip_g0(%m, %x) : (tensor<4xi1>, tensor<4xf32>) -> (tensor<4xi1>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xi1>, %b: tensor<4xf32>):
    %n = kt.logical_not %a : (tensor<4xi1>) -> tensor<4xi1>
    %z = kt.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %w = kt.where %a, %b, %z : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    kg.yield %n, %w : tensor<4xi1>, tensor<4xf32>
  }
  kg.return %r#0, %r#1 : tensor<4xi1>, tensor<4xf32>
}
"""


def test_bool_and_strided_tensors_cross():
    s = kiln.Session()
    s.load(BOOL_PROGRAM, "flip.mlir")
    m = torch.tensor([True, False, False, True])
    base = torch.arange(8, dtype=torch.float32)
    x = base[::2]  # strided
    n, w = s.call("flip", [m, x])
    assert n.dtype == torch.bool
    assert torch.equal(n, ~m)
    torch.testing.assert_close(w, torch.where(m, x, torch.zeros(())))


def test_unconsumed_result_capsule_is_freed():
    # A DLManagedTensor wrapped in a capsule nobody adopts is freed by the
    # capsule's destructor (no leak, no crash).
    s, _ = toy_session()
    a, b = torch.randn(10), torch.randn(10)
    import ctypes
    keep = []
    args = (_capi.DLTensor * 2)(_capi.torch_to_dl(a, keep),
                                _capi.torch_to_dl(b, keep))
    results = _capi.KilnTensorListH()
    _capi._check(s._L.kilnSessionCall(s._h, _capi._Str("toy_example").ref,
                                      args, 2, None, ctypes.byref(results)))
    managed = ctypes.POINTER(_capi.DLManagedTensor)()
    _capi._check(s._L.kilnTensorListGetManaged(results, 0,
                                               ctypes.byref(managed)))
    s._L.kilnTensorListDestroy(results)
    capsule = _capi._py.PyCapsule_New(ctypes.cast(managed, ctypes.c_void_p),
                                      b"dltensor", _capi._DESTRUCTOR)
    del capsule
    gc.collect()


def test_cuda_tensors_are_refused():
    s, _ = toy_session()
    meta = torch.empty(10, device="meta")
    with pytest.raises(kiln.KilnError, match="CPU tensors only"):
        s.call("toy_example", [meta, meta])


def test_session_inherited_through_fork_is_left_to_the_parent():
    # A forked child that drops a session made by its parent must not tear
    # down the parent's MLIR context (its worker threads are not in the
    # child): that hung or crashed the child (opinfo_sweep's forked
    # workers, garbage collection). The child exits cleanly; the parent's
    # session still works.
    import time
    f = kiln.compile(lambda x: torch.sin(x) + 1, backend="cpu")
    x = torch.randn(8)
    f(x)
    sessions = [o for o in gc.get_objects() if isinstance(o, _capi.Session)]
    assert sessions
    pid = os.fork()
    if pid == 0:
        try:
            for s in sessions:
                s.close()
            gc.collect()
        finally:
            os._exit(0)
    deadline = time.time() + 60
    status = None
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung closing its inherited session")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    torch.testing.assert_close(f(x), torch.sin(x) + 1)
