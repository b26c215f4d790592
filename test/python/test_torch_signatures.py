"""torch.* functions whose positional arguments differ from their F.*
namesakes (ATen's order): one converter served both and read torch's
arguments in F's order, silently. torch.batch_norm and torch.instance_norm
take weight and bias before the running statistics; torch.softmax,
torch.log_softmax and Tensor.softmax take dtype third (F's third is
_stacklevel)."""

import pytest
import torch
import torch.nn.functional as F

import kiln

BACKENDS = ["eager", "cpu"]


def _args():
    torch.manual_seed(0)
    return (torch.randn(4, 3, 5), torch.rand(3) + 0.5, torch.randn(3),
            torch.randn(3), torch.rand(3) + 0.5)


CASES = {
    "torch.batch_norm eval": lambda x, w, b, rm, rv: torch.batch_norm(
        x, w, b, rm, rv, False, 0.1, 1e-5, False),
    "torch.batch_norm train": lambda x, w, b, rm, rv: (torch.batch_norm(
        x, w, b, rm, rv, True, 0.2, 1e-5, False), rm, rv),
    "torch.instance_norm": lambda x, w, b, rm, rv: (torch.instance_norm(
        x, w, b, rm, rv, True, 0.1, 1e-5, False), rm, rv),
    "F.batch_norm": lambda x, w, b, rm, rv: F.batch_norm(
        x, rm, rv, w, b, False, 0.1, 1e-5),
    "F.instance_norm": lambda x, w, b, rm, rv: F.instance_norm(
        x, rm, rv, w, b, True, 0.1, 1e-5),
    "torch.softmax dtype": lambda x, *_: torch.softmax(x, 1, torch.float64),
    "torch.log_softmax dtype": lambda x, *_: torch.log_softmax(
        x, -1, torch.float64),
    "Tensor.softmax dtype": lambda x, *_: x.softmax(1, torch.float64),
    "F.softmax stacklevel": lambda x, *_: F.softmax(x, 1, 3, torch.float64),
    # torch.adaptive_max_pool1d gives the indices too (F's only when asked)
    "torch.adaptive_max_pool1d": lambda x, *_: torch.adaptive_max_pool1d(
        x, 3),
    "F.adaptive_max_pool1d": lambda x, *_: F.adaptive_max_pool1d(x, 3),
}


def _flat(v):
    return list(v) if isinstance(v, tuple) else [v]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_torch_argument_order(backend, name):
    f = CASES[name]
    want = _flat(f(*[a.clone() for a in _args()]))
    got = _flat(kiln.compile(f, backend=backend)(*_args()))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5)


def test_softmax_dtype_twice_is_a_type_error():
    f = lambda x: torch.softmax(x, 1, torch.float64, dtype=torch.float64)  # noqa: E731,E501
    with pytest.raises(TypeError):
        f(torch.randn(2, 3))
    with pytest.raises((TypeError, kiln.Unsupported), match="dtype"):
        kiln.compile(f, backend="cpu")(torch.randn(2, 3))
