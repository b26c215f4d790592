"""Models of the acceptance tests (issue 12), built with seeded values (no
pretrained weights) and small CI sizes, and the `same()` accuracy rule."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# The kiln.compile backends a test runs on: the interpreter, the
# interpreter after the AOT stage, and the CPU backend.
BACKENDS = ["eager", "aot_eager", "cpu"]


def seeded_batchnorm(model, seed=0):
    """Random running statistics and affine parameters for every BatchNorm
    (fresh ones are the identity, which tests nothing in eval mode)."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.copy_(torch.rand(m.running_mean.shape,
                                                generator=g) - 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape,
                                               generator=g) + 0.5)
                if m.affine:
                    m.weight.copy_(torch.rand(m.weight.shape, generator=g)
                                   + 0.5)
                    m.bias.copy_(torch.rand(m.bias.shape, generator=g) - 0.5)
    return model


def seeded_zero_layers(model, seed=1):
    """Small random values for the parameters that start all zero
    (ViT's and Swin's heads, ResNet's zero-init options), which would make
    the output a constant that tests nothing."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() > 1 and not p.any():
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
    return model


def torchvision_model(name, seed=0):
    import torchvision
    torch.manual_seed(seed)
    return seeded_batchnorm(getattr(torchvision.models, name)(weights=None),
                            seed).eval()


class CausalSelfAttention(nn.Module):
    """GPT-2 attention: one qkv projection, a causal mask from a buffer."""

    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.n_embd, self.n_head = n_embd, n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(
            block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class GPT2Block(nn.Module):
    """A GPT-2 block: pre-norm attention and MLP with residuals."""

    def __init__(self, n_embd=32, n_head=4, block_size=16):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


def gpt2_block(seed=0, **kw):
    torch.manual_seed(seed)
    return GPT2Block(**kw).eval()


def transformer_layer(seed=0, d_model=32, nhead=4, dim_feedforward=64):
    torch.manual_seed(seed)
    return nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward,
                                      dropout=0.0, batch_first=True).eval()


def rmse(a, b):
    return torch.sqrt(torch.mean((a.double() - b.double()) ** 2)).item()


def same(actual, expected, fp64_ref, rtol=1e-4, atol=1e-4, multiplier=2.0):
    """torch._dynamo.utils.same for tensors: allclose at a tolerance, else
    the RMSE of `actual` against the fp64 reference is no worse than
    `multiplier` times eager's (plus a small absolute slack). Returns
    (ok, message)."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False, "shape/dtype %s %s vs %s %s" % (
            tuple(actual.shape), actual.dtype, tuple(expected.shape),
            expected.dtype)
    if torch.allclose(actual, expected, rtol=rtol, atol=atol):
        return True, "allclose"
    ref = fp64_ref.to(actual.dtype).double() if fp64_ref is not None else None
    if ref is None:
        return False, "not allclose (max diff %g)" % (
            (actual - expected).abs().max().item())
    r_actual = rmse(actual, fp64_ref)
    r_eager = rmse(expected, fp64_ref)
    ok = r_actual <= multiplier * r_eager + 1e-6
    return ok, "rmse %g vs eager %g (max diff %g)" % (
        r_actual, r_eager, (actual - expected).abs().max().item())


def fp64_reference(model, *inputs):
    """The model run in float64 (a deep copy), outputs cast back."""
    import copy
    m64 = copy.deepcopy(model).double()
    with torch.no_grad():
        return m64(*[x.double() for x in inputs])
