"""Inference BatchNorm folded into the convolution before it
(kiln-fold-conv-batch-norm, on in the cpu backend's pipeline
`kiln-aot-eager{fold-conv-bn=true ...},kiln-cpu`): conv + BatchNorm modules in
eval mode with random running statistics and affine parameters against
PyTorch eager (f32 and f64, eps variants, conv with and without bias,
depthwise and grouped, batch 1, odd channels), the compiled graph checked
for the fold (no BatchNorm arithmetic over the activations left), and the
cases that must not fold: training mode (batch statistics) and a conv whose
unnormalized output is also used."""

import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln


def _randomize_bn(bn, gen):
    c = bn.num_features
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(c, generator=gen) * 0.5)
        bn.running_var.copy_(torch.rand(c, generator=gen) * 2 + 0.05)
        if bn.affine:
            bn.weight.copy_(torch.randn(c, generator=gen))
            bn.bias.copy_(torch.randn(c, generator=gen))


class ConvBN(nn.Module):
    def __init__(self, cin, cout, k, stride, padding, groups, bias, eps,
                 affine, act):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride=stride, padding=padding,
                              groups=groups, bias=bias)
        self.bn = nn.BatchNorm2d(cout, eps=eps, affine=affine)
        self.act = act

    def forward(self, x):
        y = self.bn(self.conv(x))
        return F.relu6(y) if self.act else y


class _GraphLog:
    """The graphs the cpu backend compiles (the `graph` log topic: after
    the host pipeline, so after the fold and kiln-decompose)."""

    def __enter__(self):
        self.text = []
        kiln.set_log_handler(lambda topic, msg: self.text.append(msg)
                             if topic == "graph" else None)
        kiln.set_logs("+graph")
        return self

    def __exit__(self, *exc):
        kiln.set_logs()
        kiln.set_log_handler(None)

    def joined(self):
        return "\n".join(self.text)


def _activation_ops(text, shape, dtype):
    """The kt.sub / kt.mul ops whose first operand has the activation's
    type: the decomposed (unfolded) BatchNorm's passes over the conv's
    output."""
    ty = "tensor<%sx%s>" % ("x".join(map(str, shape)), dtype)
    return [ln for ln in text.splitlines()
            if re.search(r"kt\.(sub|mul) ", ln) and ": (" + ty in ln]


CASES = [
    # cin, cout, k, stride, padding, groups, bias, eps, affine, act, shape
    (3, 8, 3, 1, 1, 1, False, 1e-5, True, True, (2, 3, 9, 11)),
    (3, 7, 3, 2, 1, 1, True, 1e-3, True, False, (1, 3, 13, 10)),   # odd ch, b1
    (5, 5, 3, 1, 1, 5, False, 1e-5, True, True, (2, 5, 8, 9)),     # depthwise
    (6, 12, 3, 2, 1, 6, True, 0.1, True, True, (1, 6, 11, 11)),    # dw x2 s2
    (6, 9, 3, 1, 0, 3, True, 1e-5, False, False, (2, 6, 7, 8)),    # groups 3
    (16, 24, 1, 1, 0, 1, False, 1e-5, True, True, (2, 16, 5, 7)),  # 1x1
    (9, 5, 1, 1, 0, 1, True, 1e-2, False, True, (1, 9, 6, 6)),     # 1x1 bias
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES)
def test_folded_conv_bn_matches_eager(case, dtype):
    cin, cout, k, stride, padding, groups, bias, eps, affine, act, shape = case
    gen = torch.Generator().manual_seed(hash(case) % 1000)
    torch.manual_seed(3)
    m = ConvBN(cin, cout, k, stride, padding, groups, bias, eps, affine,
               act).to(dtype)
    _randomize_bn(m.bn, gen)
    m.eval()
    x = torch.randn(*shape, dtype=dtype, generator=gen)
    with torch.no_grad():
        want = m(x)
        with _GraphLog() as log:
            got = kiln.compile(m, backend="cpu")(x)
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)
    text = log.joined()
    assert "kt.conv2d" in text, text
    ty = "f32" if dtype == torch.float32 else "f64"
    assert not _activation_ops(text, want.shape, ty), text


def test_unfolded_pipeline_has_the_batch_norm_passes():
    # The check above can fail: without the option the decomposed
    # BatchNorm's sub/mul over the activations are in the graph.
    torch.manual_seed(0)
    m = ConvBN(3, 8, 3, 1, 1, 1, False, 1e-5, True, False).eval()
    _randomize_bn(m.bn, torch.Generator().manual_seed(0))
    x = torch.randn(2, 3, 9, 11)
    with torch.no_grad():
        with _GraphLog() as log:
            got = kiln.compile(m, backend="cpu", options={
                "pipeline": "kiln-aot-eager,kiln-cpu"})(x)
        torch.testing.assert_close(got, m(x), rtol=1e-4, atol=1e-4)
    assert _activation_ops(log.joined(), (2, 8, 9, 11), "f32")


def test_training_mode_uses_batch_statistics():
    # Training mode normalizes with the batch's statistics: nothing folds,
    # and the running statistics are updated as eager updates them.
    torch.manual_seed(1)
    m = ConvBN(4, 6, 3, 1, 1, 1, True, 1e-5, True, True)
    _randomize_bn(m.bn, torch.Generator().manual_seed(1))
    ref = ConvBN(4, 6, 3, 1, 1, 1, True, 1e-5, True, True)
    ref.load_state_dict(m.state_dict())
    x = torch.randn(3, 4, 7, 7)
    with torch.no_grad():
        want = ref(x)
        got = kiln.compile(m, backend="cpu")(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(m.bn.running_mean, ref.bn.running_mean,
                               rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(m.bn.running_var, ref.bn.running_var,
                               rtol=1e-4, atol=1e-5)


class ConvUsedTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.conv(x)
        return self.bn(y) + y, F.relu(self.bn(y))


def test_conv_output_used_elsewhere_is_not_folded():
    torch.manual_seed(2)
    m = ConvUsedTwice()
    _randomize_bn(m.bn, torch.Generator().manual_seed(2))
    m.eval()
    x = torch.randn(2, 4, 6, 5)
    with torch.no_grad():
        want = m(x)
        with _GraphLog() as log:
            got = kiln.compile(m, backend="cpu")(x)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    # The conv's output is needed unnormalized: the BatchNorm stays a pass
    # over it.
    assert _activation_ops(log.joined(), (2, 4, 6, 5), "f32")


def test_folded_mobilenet_block_training_step_after_eval():
    # A module compiled in eval mode (folded), then switched to training
    # mode: the training graph uses batch statistics and gets gradients
    # equal to eager's.
    torch.manual_seed(4)
    m = ConvBN(4, 8, 3, 1, 1, 4, False, 1e-5, True, True)
    _randomize_bn(m.bn, torch.Generator().manual_seed(4))
    ref = ConvBN(4, 8, 3, 1, 1, 4, False, 1e-5, True, True)
    ref.load_state_dict(m.state_dict())
    x = torch.randn(2, 4, 6, 6)
    c = kiln.compile(m, backend="cpu")
    m.eval()
    ref.eval()
    with torch.no_grad():
        torch.testing.assert_close(c(x), ref(x), rtol=1e-4, atol=1e-4)
    m.train()
    ref.train()
    c(x).sum().backward()
    ref(x).sum().backward()
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("groups", [1, 4])
def test_folded_gradients_in_eval_mode(groups):
    # Eval mode with gradients (fine-tuning with frozen statistics): the
    # fold is inside the differentiated graph; the input's and every
    # parameter's gradient (conv weight and bias, BatchNorm weight and
    # bias through the folded weight and bias) equal eager's.
    torch.manual_seed(5)
    m = ConvBN(4, 8, 3, 1, 1, groups, True, 1e-5, True, True)
    _randomize_bn(m.bn, torch.Generator().manual_seed(5))
    ref = ConvBN(4, 8, 3, 1, 1, groups, True, 1e-5, True, True)
    ref.load_state_dict(m.state_dict())
    m.eval()
    ref.eval()
    x = torch.randn(2, 4, 6, 7)
    g = torch.randn(2, 8, 6, 7)
    xk, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    (kiln.compile(m, backend="cpu")(xk) * g).sum().backward()
    (ref(xr) * g).sum().backward()
    torch.testing.assert_close(xk.grad, xr.grad, rtol=1e-4, atol=1e-4)
    for (n, p), q in zip(m.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4,
                                   msg=lambda s: n + ": " + s)
