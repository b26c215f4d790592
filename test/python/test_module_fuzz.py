"""Random nn.Module programs through kiln.compile against eager PyTorch
(module_fuzz.py: layers, parameters, buffers written by forward,
`self.training`, SGD steps with the model or the whole step compiled), and
the defects its first runs found, each as a plain test.

Found by module_fuzz (2026-11-30), each failing on the code before:
* `x.requires_grad` of a value the traced code computed was always False
  (only an argument's own flag was known): a loss made of "the outputs that
  require grad" was empty, so a compiled training step never called
  backward and the parameters never moved, silently.
* `isinstance(x, torch.Tensor)` in a helper the traced code reaches through
  a module (`import losses; losses.total(out)`) or through another helper
  was False for a traced tensor (isinstance was patched in the globals of
  the compiled function and of the functions its closure names only).
* A buffer updated with the mean of a convolution's output
  (`self.count.add_(conv(x).mean())`) crashed the process (a segfault in
  kiln-cpu-conv-channels-last: a reduction of all dims has no `dim`).
* A compiled module whose forward makes a tensor constant
  (`x[torch.tensor([0, 0, 1])]`) after a graph break failed with
  "'M' object has no attribute '_tensor_constant0'" (the last segment runs
  after the trace, when the constants are off the module, and its
  importer had an empty dict of them)."""

import os
import sys
import types

import pytest
import torch
import torch.nn.functional as F

import kiln
import module_fuzz


BACKENDS = ["eager", "aot_eager", "cpu"]


# ------------------------------------------------- requires_grad of values

def _flags(lin):
    def f(x, w):
        y = lin(x)
        with torch.no_grad():
            n = y * 2
        flags = [y.requires_grad, (x * 2).requires_grad,
                 (w * x).requires_grad, y.detach().requires_grad,
                 n.requires_grad, y.argmax(-1).requires_grad,
                 (y.argmax(-1, keepdim=True).float() + x).requires_grad,
                 w.requires_grad, x.requires_grad, y.t()[0].requires_grad,
                 (y.clone().zero_() + 1).requires_grad,
                 # results of multi-result ops (`%v1#0`)
                 y.max(-1)[0].requires_grad, y.max(-1)[1].requires_grad,
                 F.batch_norm(y, torch.zeros(3), torch.ones(3),
                              training=True).requires_grad,
                 torch.var_mean(y, 0)[1].requires_grad]
        out = x.sum() * 0
        for i, flag in enumerate(flags):
            out = out + (2.0 ** i if flag else 0.0)
        return out
    return f


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("dynamic", [None, True])
def test_requires_grad_of_computed_values_matches_eager(backend, grad,
                                                        dynamic):
    lin = torch.nn.Linear(3, 3)
    f = _flags(lin)
    x, w = torch.randn(2, 3), torch.randn(3, requires_grad=True)
    with torch.set_grad_enabled(grad):
        want = f(x, w)
        got = kiln.compile(f, backend=backend, dynamic=dynamic)(x, w)
    assert got.item() == want.item()


@pytest.mark.parametrize("backend", BACKENDS)
def test_step_with_loss_over_outputs_that_require_grad(backend):
    """The loss is built from the outputs whose requires_grad is True, in
    a compiled training step: before, none was, so nothing trained."""
    def run(compiled):
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

        def step(x):
            outs = (x * 2, m(x))
            loss = sum((o * (i + 1)).sum() for i, o in enumerate(outs)
                       if o.requires_grad)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss

        fn = kiln.compile(step, backend=backend) if compiled else step
        x = torch.randn(5, 3)
        losses = [fn(x).item() for _ in range(3)]
        return losses, [p.detach().clone() for p in m.parameters()]

    (lw, pw), (lg, pg) = run(False), run(True)
    assert lg == pytest.approx(lw, rel=1e-5)
    for a, b in zip(pg, pw):
        torch.testing.assert_close(a, b)


# -------------------------------------- isinstance in helpers of helpers

_LOSSES = """
import torch

def _terms(out):
    return [o for o in out if isinstance(o, torch.Tensor)]

def total(out):
    return sum(t.sum() for t in _terms(out)) + len(_terms(out))
"""


@pytest.fixture
def losses_module():
    mod = types.ModuleType("kiln_test_user_losses")
    exec(_LOSSES, mod.__dict__)
    sys.modules[mod.__name__] = mod
    yield mod
    del sys.modules[mod.__name__]


@pytest.mark.parametrize("backend", BACKENDS)
def test_isinstance_in_a_helper_reached_through_a_module(backend,
                                                          losses_module):
    g = {"losses": losses_module, "torch": torch}
    exec("def f(x):\n    return losses.total((x, x * 2, 3))\n", g)
    f = g["f"]
    x = torch.randn(4)
    torch.testing.assert_close(kiln.compile(f, backend=backend)(x), f(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_isinstance_in_a_helper_of_a_helper(backend):
    """f calls `outer` (module A), which calls `inner` (module B): B's
    isinstance answers for a traced tensor too."""
    b = types.ModuleType("kiln_test_b")
    exec("import torch\n"
         "def inner(v):\n"
         "    return v * 2 if isinstance(v, torch.Tensor) else v\n",
         b.__dict__)
    a = types.ModuleType("kiln_test_a")
    a.__dict__["b"] = b
    exec("def outer(vs):\n    return [b.inner(v) for v in vs]\n",
         a.__dict__)
    outer = a.outer

    def f(x):
        u, v = outer((x, 1.5))
        return u + v

    x = torch.randn(4)
    torch.testing.assert_close(kiln.compile(f, backend=backend)(x), f(x))


# ------------------------------------------------------------- crashes

class _ConvMeanBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 2, 3, groups=2)
        self.register_buffer("total", torch.zeros(()))

    def forward(self, x):
        y = self.conv(x)
        self.total.add_(y.mean())
        return y.sum() + y.amax() + x * self.total


def test_buffer_updated_with_a_full_reduction_of_a_conv():
    torch.manual_seed(0)
    m1, m2 = _ConvMeanBuffer(), _ConvMeanBuffer()
    m2.load_state_dict(m1.state_dict())
    c = kiln.compile(m2, backend="cpu")
    x = torch.randn(4, 2, 4, 3)
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(c(x), m1(x))
    torch.testing.assert_close(m2.total, m1.total)


class _ConstantAfterBreak(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x):
        y = torch.exp(x)
        y = y[: max(1, int(y.abs().sum()) % 3)]    # a graph break
        return x[torch.tensor([0, 0, 1])], self.lin(x), y


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_constant_after_a_graph_break(backend):
    m = _ConstantAfterBreak()
    c = kiln.compile(m, backend=backend)
    with torch.no_grad():
        for _ in range(2):
            x = torch.randn(2, 2)
            for g, w in zip(c(x), m(x)):
                torch.testing.assert_close(g, w)
    assert not any(k.startswith("_tensor_constant") for k in m.__dict__)


class _ConstantInAnEagerSegment(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        y = self.lin(x)
        n = len(x.nonzero())                          # a graph break
        x.index_select(1, torch.tensor([1])) * n      # (unused)
        return y


@pytest.mark.filterwarnings("ignore::kiln.KilnWarning")
@pytest.mark.parametrize("dynamic", [None, True])
def test_module_constant_in_a_segment_run_eagerly(dynamic):
    """The last segment has no tensor results to train: it runs eagerly
    after the trace, reading the constant (before: AttributeError)."""
    torch.manual_seed(0)
    m1, m2 = _ConstantInAnEagerSegment(), _ConstantInAnEagerSegment()
    m2.load_state_dict(m1.state_dict())
    c = kiln.compile(m2, backend="cpu", dynamic=dynamic)
    for _ in range(2):
        x = torch.randn(2, 2, 3)
        c(x).sum().backward()
        m1(x).sum().backward()
    torch.testing.assert_close(m2.lin.weight.grad, m1.lin.weight.grad)


# ------------------------------------------------------------- the fuzzer

SEEDS = int(os.environ.get("KILN_MODULE_FUZZ_SEEDS", "12"))
MODES = [("infer", False), ("train", False), ("train", True)]


@pytest.mark.parametrize("mode,whole", MODES,
                         ids=["infer", "train-model", "train-whole-step"])
def test_random_modules(mode, whole):
    """SEEDS random modules per mode agree with eager (KILN_MODULE_FUZZ_
    SEEDS sets how many; a failure names its seed: module_fuzz.py --seeds
    N --mode M --whole-step yes|no --show). Training seeds take their
    optimizer and extras from the seed (module_fuzz.scenario)."""
    base = {"infer": 0, "train": 10000}[mode] + (5000 if whole else 0)
    findings = []
    for s in range(base, base + SEEDS):
        src, state, inputs = module_fuzz.generate(s, mode)
        m = module_fuzz.check(src, state, inputs, "cpu", mode,
                              whole_step=whole,
                              train=module_fuzz.scenario(s))
        if m:
            findings.append("seed %d: %s\n%s" % (s, m, src))
    assert not findings, "\n".join(findings)
