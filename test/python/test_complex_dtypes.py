"""Complex tensors (complex64, complex128) reaching Kiln: kt has no complex
element types (docs/adding-ops.md, "Complex dtypes"), so every path refuses
them with kiln.Unsupported naming the op (or the argument) and the dtype,
never a crash or a wrong answer: complex inputs and parameters, torch-level
functions that make complex tensors (view_as_complex, polar, torch.fft),
casts to a complex dtype, ATen-level graphs (make_fx) through kiln.backend,
and the C API's DLPack path (kiln.Session). A complex constant that the
program only reads the real part of (computed at trace time) still runs, and
is checked against eager PyTorch."""

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import kiln
from kiln import _fx_import

BACKENDS = ["eager", "aot_eager", "cpu"]
REASON = "complex dtypes are not supported: kt has no complex element types"
COMPLEX = [torch.complex64, torch.complex128]


class Param(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3, dtype=torch.complex64))

    def forward(self, x):
        return (x * self.w).real


def compile_error(fn, *args, backend):
    with pytest.raises(kiln.Unsupported) as e:
        kiln.compile(fn, backend=backend, fullgraph=True)(*args)
    return str(e.value)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_input(backend, dtype):
    x = torch.randn(2, 3, dtype=dtype)
    for fn in (lambda x: x + x, lambda x: x.abs(), lambda x: x @ x.T,
               lambda x: torch.view_as_real(x), lambda x: x.sum()):
        msg = compile_error(fn, x, backend=backend)
        assert "argument 'x' of dtype %s: %s" % (dtype, REASON) in msg, msg


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_parameter(backend):
    msg = compile_error(Param(), torch.randn(3), backend=backend)
    assert "'w' of dtype torch.complex64: " + REASON in msg, msg


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", [
    ("torch.view_as_complex", lambda x: torch.view_as_complex(x).abs()),
    ("torch.polar", lambda x: torch.view_as_real(torch.polar(x, x))),
    ("torch.complex", lambda x: torch.complex(x, x).real),
    ("torch.fft_rfft", lambda x: torch.fft.rfft(x, dim=0).abs()),
    ("torch.fft_fft", lambda x: torch.fft.fft(x).real),
], ids=lambda c: c[0])
def test_functions_making_complex_tensors(backend, case):
    name, fn = case
    msg = compile_error(fn, torch.randn(4, 2), backend=backend)
    assert "%s: its result would be complex: %s" % (name, REASON) in msg, msg
    # The user's line is named.
    assert "test_complex_dtypes.py:" in msg, msg


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_cast_to_complex(backend, dtype):
    for name, fn in (("Tensor.to", lambda x: x.to(dtype) * 2),
                     ("torch.zeros_like", lambda x: torch.zeros_like(
                         x, dtype=dtype).real + x)):
        msg = compile_error(fn, torch.randn(3), backend=backend)
        assert "%s: " % name in msg and str(dtype) in msg and REASON in msg, \
            msg


@pytest.mark.parametrize("backend", BACKENDS)
def test_real_part_of_a_complex_constant_runs(backend):
    # The complex tensor lives only at trace time: the graph sees its real
    # (float) part as a constant.
    def f(x):
        return x + torch.tensor([1 + 2j, -3 - 1j]).real

    x = torch.randn(2)
    got = kiln.compile(f, backend=backend, fullgraph=True)(x)
    assert torch.equal(got, x + torch.tensor([1.0, -3.0]))


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("case", [
    ("view_as_complex.default", lambda x: torch.view_as_complex(x).abs()),
    ("_fft_r2c.default", lambda x: torch.fft.rfft(x, dim=0).abs()),
    ("polar.default", lambda x: torch.view_as_real(torch.polar(x, x))),
], ids=lambda c: c[0])
def test_aten_graphs(backend, case):
    name, fn = case
    x = torch.randn(4, 2)
    gm = make_fx(fn)(x)
    with pytest.raises(kiln.Unsupported) as e:
        kiln.backend(gm, [x], backend=backend)(x)
    assert "aten.%s: its result would be complex: %s" % (name, REASON) \
        in str(e.value), str(e.value)


def test_aten_graph_complex_input():
    c = torch.randn(3, dtype=torch.complex64)
    gm = make_fx(lambda c: c.abs())(c)
    with pytest.raises(kiln.Unsupported) as e:
        kiln.backend(gm, [c], backend="eager")(c)
    assert "of dtype torch.complex64: " + REASON in str(e.value)


def test_aten_node_with_a_complex_tensor_meta():
    # A node whose make_fx tensor_meta is complex is refused naming its op,
    # even an op that has a converter (aten.mul here multiplies complex
    # values).
    x = torch.randn(3, 2)
    gm = make_fx(lambda x: torch.view_as_real(
        torch.view_as_complex(x) * 2))(x)
    with pytest.raises(kiln.Unsupported) as e:
        _fx_import.import_graph_module(gm, [x], "prog")
    msg = str(e.value)
    assert "aten.view_as_complex.default" in msg and REASON in msg, msg


def test_capi_complex_argument():
    # kiln.Session takes DLPack tensors: a complex one is refused by the C
    # API naming the DLPack code.
    import os
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    s = kiln.Session()
    s.load_file(os.path.join(root, "examples", "toy_example.mlir"))
    a = torch.randn(10)
    b = torch.randn(10, dtype=torch.complex64)
    with pytest.raises(kiln.KilnError) as e:
        s.call("toy_example", [a, b])
    assert "unsupported dtype (code 5, bits 64, lanes 1): complex dtypes " \
        "are not supported" in str(e.value), str(e.value)
