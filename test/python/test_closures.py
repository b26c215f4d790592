"""Compiled functions that reach modules which are not the compiled root: a
function calling `model.encoder(x)` where only the function is compiled, a
lambda capturing a layer, a function reading `layer.weight` directly. Their
parameters and buffers become program arguments read by name on every call
(as a compiled module's), their training flags are part of the key.
Compared against eager PyTorch."""

import copy

import pytest
import torch
import torch.nn as nn

import kiln
from models import BACKENDS



class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8),
                                     nn.ReLU())
        self.head = nn.Linear(8, 2)
        with torch.no_grad():
            self.encoder[1].running_mean.uniform_(-1, 1)
            self.encoder[1].running_var.uniform_(0.5, 2)
            self.encoder[1].weight.uniform_(0.5, 1.5)

    def forward(self, x):
        return self.head(self.encoder(x))


pytestmark = pytest.mark.usefixtures("reset_kiln")


@pytest.mark.parametrize("backend", BACKENDS)
def test_function_calling_a_submodule(backend):
    torch.manual_seed(0)
    model = Model().eval()

    def encode(x):
        return model.encoder(x).sum(-1)

    g = kiln.compile(encode, backend=backend)
    x = torch.randn(5, 4)
    torch.testing.assert_close(g(x), encode(x))
    # parameters are read on every call: an in-place update is seen
    with torch.no_grad():
        model.encoder[0].weight.mul_(-2)
        model.encoder[1].running_mean.add_(0.5)
    torch.testing.assert_close(g(x), encode(x))
    # the root module is untouched (no submodule added to it)
    assert [n for n, _ in model.named_modules()] == [
        "", "encoder", "encoder.0", "encoder.1", "encoder.2", "head"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_lambda_capturing_a_layer(backend):
    torch.manual_seed(1)
    layer = nn.Linear(4, 3)
    fn = lambda x: torch.tanh(layer(x)) * 2  # noqa: E731
    g = kiln.compile(fn, backend=backend)
    for n in (2, 2, 6):
        x = torch.randn(n, 4)
        torch.testing.assert_close(g(x), fn(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameters_read_directly(backend):
    torch.manual_seed(2)
    layer = nn.Linear(4, 3)

    def f(x):
        return x @ layer.weight.t() + layer.bias

    g = kiln.compile(f, backend=backend)
    x = torch.randn(5, 4)
    torch.testing.assert_close(g(x), f(x))
    with torch.no_grad():
        layer.bias.fill_(3.0)
    torch.testing.assert_close(g(x), f(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_mode_of_a_closure_module_is_guarded(backend):
    """model.train() after the first call recaptures (BatchNorm uses batch
    statistics and updates its running statistics, as eager)."""
    torch.manual_seed(3)
    model = Model().eval()
    ref = copy.deepcopy(model)

    def f(x):
        return model.encoder(x)

    def f_ref(x):
        return ref.encoder(x)

    g = kiln.compile(f, backend=backend)
    x = torch.randn(6, 4)
    torch.testing.assert_close(g(x), f_ref(x))
    model.train()
    ref.train()
    with torch.no_grad():
        torch.testing.assert_close(g(x), f_ref(x))
    torch.testing.assert_close(model.encoder[1].running_mean,
                               ref.encoder[1].running_mean)
    torch.testing.assert_close(model.encoder[1].running_var,
                               ref.encoder[1].running_var)
    model.eval()
    ref.eval()
    torch.testing.assert_close(g(x), f_ref(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_reach_closure_parameters(backend):
    torch.manual_seed(4)
    model = Model().eval()
    ref = copy.deepcopy(model)

    def loss(x, y):
        return ((model.head(model.encoder(x)) - y) ** 2).mean()

    def loss_ref(x, y):
        return ((ref.head(ref.encoder(x)) - y) ** 2).mean()

    g = kiln.compile(loss, backend=backend)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        x, y = torch.randn(5, 4), torch.randn(5, 2)
        opt.zero_grad()
        opt_ref.zero_grad()
        out = g(x, y)
        out_ref = loss_ref(x, y)
        torch.testing.assert_close(out, out_ref)
        out.backward()
        out_ref.backward()
        for (n, p), p_ref in zip(model.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, p_ref.grad, msg=n)
        opt.step()
        opt_ref.step()
    for p, p_ref in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, p_ref)


def test_closure_module_with_a_graph_break():
    torch.manual_seed(5)
    layer = nn.Linear(4, 4)

    def f(x):
        y = layer(x)
        if y.sum() > 0:
            return layer(y) * 2
        return y - 1

    g = kiln.compile(f, backend="eager")
    for sign in (1, -1, 1):
        x = sign * torch.rand(3, 4) * 4
        torch.testing.assert_close(g(x), f(x))
    assert len(kiln.explain(f, torch.rand(3, 4)).break_reasons) == 1


def test_compiled_module_calling_an_outside_module():
    """A compiled module whose forward calls a module that is not one of its
    submodules: kiln.Unsupported naming it (kiln does not add it to the
    user's module)."""
    outside = nn.Linear(4, 4)

    class Root(nn.Module):
        def forward(self, x):
            return outside(x) + 1

    root = Root()
    g = kiln.compile(root, backend="eager")
    with pytest.raises(kiln.Unsupported,
                       match="Linear is called by Root but is not one of "
                             "its submodules"):
        g(torch.randn(2, 4))
    assert list(root.named_modules()) == [("", root)]
