"""A torchvision smoke test in the normal suite (issue 12 section 3): one
small model of each family that test/python/zoo_sweep.py covers by hand,
compiled for the `cpu` backend against eager PyTorch 1.13, inference at
2x3x32x32, and one training step of two of them.

The families' own torchvision code (residual blocks, inverted residuals with
squeeze-excitation, dense blocks, fire modules, channel shuffles, ConvNeXt's
layer-scaled blocks, ViT's encoder) at the smallest sizes it accepts:
torchvision's resnet18, mobilenet_v3_small, squeezenet1_1 and
shufflenet_v2_x0_5 as they are, and DenseNet, EfficientNet, RegNet,
ConvNeXt and VisionTransformer built by their classes with fewer and
narrower layers (the full models take minutes to compile on 2 cores).
Values are seeded (no pretrained weights), BatchNorm statistics random
(models.seeded_batchnorm), zero-initialized layers random (zoo_sweep.build).

Compiled code goes to a disk cache of this test's own
($KILN_BUILD_DIR/test-cache/zoo-smoke, or KILN_ZOO_CACHE_DIR; "off" turns
it off), so a second run loads the machine code instead of compiling it.
Wall time on the shared 2-core machine: docs/python.md, "The torchvision
zoo"."""

import functools
import os

import pytest
import torch

import kiln
from models import seeded_batchnorm, seeded_zero_layers
from zoo_sweep import no_randomness, rel_err

tv = pytest.importorskip("torchvision")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def zoo_cache(monkeypatch):
    build = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
    cache = os.environ.get("KILN_ZOO_CACHE_DIR",
                           os.path.join(build, "test-cache", "zoo-smoke"))
    if cache != "off":
        os.makedirs(cache, exist_ok=True)
    monkeypatch.setenv("KILN_CACHE_DIR", cache)
    kiln.reset()
    yield
    kiln.reset()


def _densenet():
    return tv.models.DenseNet(growth_rate=8, block_config=(2, 2, 2),
                              num_init_features=16, bn_size=2,
                              num_classes=10)


def _efficientnet():
    from torchvision.models.efficientnet import (EfficientNet,
                                                 MBConvConfig)
    cfg = [MBConvConfig(1, 3, 1, 16, 16, 1, 1.0, 1.0),
           MBConvConfig(6, 3, 2, 16, 24, 2, 1.0, 1.0),
           MBConvConfig(6, 5, 2, 24, 32, 1, 1.0, 1.0)]
    return EfficientNet(cfg, dropout=0.2, stochastic_depth_prob=0.2,
                        num_classes=10)


def _regnet():
    from torchvision.models.regnet import BlockParams, RegNet
    params = BlockParams.from_init_params(depth=4, w_0=16, w_a=8.0, w_m=2.0,
                                          group_width=8, se_ratio=0.25)
    return RegNet(params, num_classes=10)


def _convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    cfg = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 2)]
    return ConvNeXt(cfg, stochastic_depth_prob=0.1, num_classes=10)


def _vit():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                             num_heads=2, hidden_dim=32, mlp_dim=64,
                             num_classes=10)


MODELS = {
    "resnet18": functools.partial(tv.models.resnet18, num_classes=10),
    "mobilenet_v3_small": functools.partial(tv.models.mobilenet_v3_small,
                                            num_classes=10),
    "efficientnet": _efficientnet,
    "regnet": _regnet,
    "densenet": _densenet,
    "squeezenet1_1": functools.partial(tv.models.squeezenet1_1,
                                       num_classes=10),
    "shufflenet_v2_x0_5": functools.partial(tv.models.shufflenet_v2_x0_5,
                                            num_classes=10),
    "convnext": _convnext,
    "vit": _vit,
}


def build(name):
    torch.manual_seed(0)
    return seeded_zero_layers(seeded_batchnorm(MODELS[name]()).eval())


def example():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_inference(name):
    m = build(name)
    x = example()
    with torch.no_grad():
        want = m(x)
        got = kiln.compile(m, backend="cpu", fullgraph=True)(x)
    assert got.shape == want.shape
    err = rel_err(got, want)
    assert err <= 1e-4, "%s: max relative error %.2e" % (name, err)


@pytest.mark.parametrize("name", ["squeezenet1_1", "vit"])
def test_training_step(name):
    # One step in train mode (dropout and stochastic depth off): the output
    # and every parameter's gradient by the same() rule against a float64
    # copy (Kiln's error at most 10x eager float32's), with a floor of 1e-6
    # of the largest gradient (a gradient that is 0 in exact arithmetic is
    # noise on both sides).
    m = build(name)
    ref = build(name)
    ref64 = build(name).double()
    for mod in (m, ref, ref64):
        no_randomness(mod)
        mod.train()
    x = example()
    out = kiln.compile(m, backend="cpu")(x)
    out.sum().backward()
    want = ref(x)
    want.sum().backward()
    want64 = ref64(x.double())
    want64.sum().backward()
    pairs = [("output", out.detach(), want.detach(), want64.detach())]
    for (n, p), (_, q), (_, q64) in zip(m.named_parameters(),
                                        ref.named_parameters(),
                                        ref64.named_parameters()):
        assert (p.grad is None) == (q.grad is None), n
        if q.grad is not None:
            pairs.append((n + ".grad", p.grad, q.grad, q64.grad))
    assert len(pairs) > 10
    scale = max(c.abs().max().item() for _, _, _, c in pairs[1:])
    bad = []
    for n, a, b, c in pairs:
        e_kiln = (a.double() - c).abs().max().item()
        e_eager = (b.double() - c).abs().max().item()
        if e_kiln > 10 * e_eager + 1e-6 * max(scale, c.abs().max().item()):
            bad.append("%s: %.2e (eager %.2e)" % (n, e_kiln, e_eager))
    assert not bad, "%s: %s" % (name, ", ".join(bad))


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_stochastic_depth(backend):
    # torchvision.ops.StochasticDepth (EfficientNet's, ConvNeXt's drop
    # path) calls stochastic_depth, which torch.fx.wrap makes a call node
    # of its own: the input in eval mode or with p = 0 (before, no
    # converter: a graph break, and fullgraph=True failed on every such
    # model); training with p > 0: test_stochastic_depth_training;
    # torchvision's own argument checks at the break (ValueError).
    from torchvision.ops import StochasticDepth

    class M(torch.nn.Module):
        def __init__(self, p, mode):
            super().__init__()
            self.sd = StochasticDepth(p, mode)

        def forward(self, x):
            return self.sd(x * 2) + 1

    x = torch.randn(4, 3)
    for p, mode, training in [(0.5, "row", False), (0.0, "batch", True),
                              (1.0, "batch", False)]:
        m = M(p, mode).train(training)
        g = kiln.compile(m, backend=backend, fullgraph=True)
        torch.testing.assert_close(g(x), m(x))
    m = M(1.0, "row").train()
    torch.testing.assert_close(kiln.compile(m, backend=backend,
                                            fullgraph=True)(x),
                               torch.ones(4, 3))
    m = M(0.5, "row").eval()
    m.sd.p = 1.5
    with pytest.raises(ValueError, match="drop probability has to be"):
        m(x)
    with pytest.raises(ValueError, match="drop probability has to be"):
        kiln.compile(m, backend=backend)(x)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("mode", ["row", "batch"])
def test_stochastic_depth_training(backend, mode):
    """stochastic_depth in training with 0 < p < 1 is captured (before: a
    graph break): each row (mode "row") or the whole batch (mode "batch")
    is either dropped (0) or kept and divided by 1 - p, as torchvision's
    Bernoulli noise; a new mask on every call; the gradient is the same
    mask. The drop rate over many rows is p (a binomial bound)."""
    from torchvision.ops import StochasticDepth

    p = 0.3
    # (Through the module: torch.fx.wrap makes torchvision's own call of
    # stochastic_depth a call node.)
    g = kiln.compile(StochasticDepth(p, mode).train(), backend=backend,
                     fullgraph=True)
    n = 4000 if mode == "row" else 8
    masks = []
    for _ in range(2 if mode == "row" else 200):
        x = (torch.rand(n, 3, 2) + 0.5).requires_grad_()
        y = g(x)
        y.sum().backward()
        scale = (y / x).detach()
        kept = scale.flatten(1).amax(1)
        # every element of a row scaled alike: by 0 or 1 / (1 - p)
        torch.testing.assert_close(scale,
                                   kept.view(n, 1, 1).expand_as(scale))
        assert torch.all((kept == 0) | torch.isclose(
            kept, torch.tensor(1 / (1 - p))))
        torch.testing.assert_close(x.grad, scale)
        if mode == "batch":
            assert bool((kept > 0).all()) or not bool((kept > 0).any())
        masks.append(kept > 0)
    dropped = 1 - torch.cat(masks).float().mean().item() if mode == "row" \
        else 1 - sum(m[0].item() for m in masks) / len(masks)
    count = sum(m.numel() for m in masks) if mode == "row" else len(masks)
    sigma = (p * (1 - p) / count) ** 0.5
    assert abs(dropped - p) < 5 * sigma, (dropped, p)
    assert not torch.equal(masks[0], masks[1]) or mode == "batch"
