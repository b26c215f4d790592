"""kiln.compile(..., options={"freezing": True}) (PyTorch's freezing): a
module's parameters and buffers are constant arguments of the program
(session option constant_args). Against eager PyTorch: convolution
networks with BatchNorm folded (the fold computed once, the convolutions'
weights packed into oneDNN's layout once: libkiln_onednn's pack counters),
results after a parameter is updated in place or replaced, a kept value
returned to the caller (its own copy), calls from several threads, a
changed batch size (a new cache entry), training with the option on, and
bad option values."""

import ctypes
import os

import pytest
import torch
import torch.nn as nn

import kiln
from kiln import KilnError
from helpers import run_in_threads


def _pack_stats():
    """(made, reused, bytes) of libkiln_onednn's packed weights, or None when
    the library is not loaded in this process."""
    try:
        lib = ctypes.CDLL("libkiln_onednn.so.0", mode=os.RTLD_NOLOAD)
    except OSError:
        return None
    made, hits, held = (ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64())
    lib.kiln_onednn_pack_stats(ctypes.byref(made), ctypes.byref(hits),
                               ctypes.byref(held))
    return made.value, hits.value, held.value


def _randomize(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.5)
                m.running_var.copy_(torch.rand(c, generator=g) * 2 + 0.1)
                m.weight.copy_(torch.randn(c, generator=g))
                m.bias.copy_(torch.randn(c, generator=g))
    return model


class Block(nn.Module):
    """conv-BN-ReLU, a 1x1 conv-BN (both folded), a residual add."""

    def __init__(self, c=32):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


def _close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_conv_bn_packed_once_and_equal():
    torch.manual_seed(0)
    m = _randomize(Block()).eval()
    c = kiln.compile(m, backend="cpu", options={"freezing": True})
    x = torch.randn(2, 32, 14, 14)
    with torch.no_grad():
        _close(c(x), m(x))
        before = _pack_stats()
        assert before is not None, "libkiln_onednn not loaded"
        for _ in range(3):
            _close(c(x), m(x))
        after = _pack_stats()
    # Warm calls reuse packs and make none.
    assert after[0] == before[0], (before, after)
    assert after[1] >= before[1] + 3, (before, after)


def test_without_freezing_nothing_is_packed():
    torch.manual_seed(1)
    m = _randomize(Block(16)).eval()
    c = kiln.compile(m, backend="cpu")
    x = torch.randn(1, 16, 10, 10)
    with torch.no_grad():
        _close(c(x), m(x))
        before = _pack_stats()
        _close(c(x), m(x))
        after = _pack_stats()
    if before is not None:
        assert after[:2] == before[:2], (before, after)


def test_in_place_update_and_replacement_are_seen():
    torch.manual_seed(2)
    m = _randomize(Block(16), seed=2).eval()
    c = kiln.compile(m, backend="cpu", options={"freezing": True})
    x = torch.randn(2, 16, 9, 9)
    with torch.no_grad():
        _close(c(x), m(x))
        _close(c(x), m(x))
        m.bn1.weight.mul_(-2.0)          # BatchNorm folded into conv1
        _close(c(x), m(x))
        m.conv2.weight.add_(1.0)         # a packed weight, in place
        _close(c(x), m(x))
        m.bn2.running_var.fill_(3.0)     # a buffer
        _close(c(x), m(x))
        m.conv1.weight = nn.Parameter(torch.randn(16, 16, 3, 3))  # replaced
        _close(c(x), m(x))
        _close(c(x), m(x))


def test_packed_weight_updated_in_place():
    # No BatchNorm: the convolution reads the parameter itself, packed once;
    # an in-place update must not leave the old pack in use.
    torch.manual_seed(7)
    m = nn.Sequential(nn.Conv2d(16, 32, 1), nn.ReLU(),
                      nn.Conv2d(32, 16, 3, padding=1)).eval()
    c = kiln.compile(m, backend="cpu", options={"freezing": True})
    x = torch.randn(2, 16, 12, 12)
    with torch.no_grad():
        _close(c(x), m(x))
        _close(c(x), m(x))
        before = _pack_stats()
        m[2].weight.mul_(0.5)
        _close(c(x), m(x))
        m[0].weight.copy_(torch.randn(32, 16, 1, 1))
        _close(c(x), m(x))
        after = _pack_stats()
    assert after[0] > before[0], (before, after)  # packed again


class ReturnsScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8))
        self.register_buffer("v", torch.rand(8) + 0.5)

    def forward(self, x):
        scale = self.w * torch.rsqrt(self.v + 1e-5)
        return x * scale, scale


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_returned_constant_is_the_callers_copy(backend):
    torch.manual_seed(3)
    m = ReturnsScale()
    c = kiln.compile(m, backend=backend, options={"freezing": True})
    x = torch.randn(4, 8)
    with torch.no_grad():
        y, s = c(x)
        _close(s, m(x)[1])
        s.fill_(123.0)                   # the caller's tensor, not Kiln's
        y2, s2 = c(x)
        _close(y2, m(x)[0])
        _close(s2, m(x)[1])


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_backends_agree(backend):
    torch.manual_seed(4)
    m = ReturnsScale()
    c = kiln.compile(m, backend=backend, options={"freezing": True})
    with torch.no_grad():
        for n in (3, 5, 3):              # a new batch size: another entry
            x = torch.randn(n, 8)
            a, b = c(x)
            ea, eb = m(x)
            _close(a, ea)
            _close(b, eb)


def test_threads():
    torch.manual_seed(5)
    m = _randomize(Block(16), seed=5).eval()
    c = kiln.compile(m, backend="cpu", options={"freezing": True})
    xs = [torch.randn(2, 16, 8, 8) for _ in range(4)]
    with torch.no_grad():
        want = [m(x) for x in xs]
        c(xs[0])

    def work(i):
        with torch.no_grad():
            for _ in range(5):
                _close(c(xs[i]), want[i])
    run_in_threads(work, 4)


def test_training_step_with_freezing_on():
    # Freezing is meant for inference; a training call (grad enabled) still
    # computes the right gradients and the parameters change between calls.
    torch.manual_seed(6)
    m = ReturnsScale()
    ref = ReturnsScale()
    ref.load_state_dict(m.state_dict())
    c = kiln.compile(m, backend="cpu", options={"freezing": True})
    x = torch.randn(4, 8)
    for _ in range(3):
        for model, fn in ((m, c), (ref, ref)):
            model.zero_grad()
            y, s = fn(x)
            (y.sum() + s.sum()).backward()
            with torch.no_grad():
                model.w.sub_(0.1 * model.w.grad)
        _close(m.w, ref.w)
    with torch.no_grad():
        _close(c(x)[0], ref(x)[0])


def test_fx_backend_entry_with_freezing():
    # kiln.backend (the torch.compile backend signature) takes the option too.
    m = _randomize(Block(8), seed=8).eval()
    gm = torch.fx.symbolic_trace(m)
    x = torch.randn(2, 8, 9, 9)
    fn = kiln.backend(gm, [x], options={"freezing": True})
    with torch.no_grad():
        _close(fn(x), gm(x))
        before = _pack_stats()
        _close(fn(x), gm(x))
        after = _pack_stats()
        assert after[1] > before[1] and after[0] == before[0], (before, after)
        gm.bn1.weight.mul_(3.0)
        _close(fn(x), gm(x))


@pytest.mark.parametrize("bad", ["true", 1, None])
def test_bad_freezing_values(bad):
    with pytest.raises(KilnError, match="option 'freezing' must be True or "
                                        "False"):
        kiln.compile(nn.Linear(2, 2), options={"freezing": bad})


def test_bad_constant_args_from_the_c_api():
    from kiln import _capi
    s = _capi.Session()
    with pytest.raises(Exception, match="constant_args must be a "
                                        "comma-separated list"):
        s.set_option("constant_args", "0,w")
    s.set_option("constant_args", " 3, 1,")
    assert s.get_option("constant_args") == "3,1"
    s.set_option("constant_args", "")
    assert s.get_option("constant_args") == ""
