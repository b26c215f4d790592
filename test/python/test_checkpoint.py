"""Activation checkpointing (`torch.utils.checkpoint`) in compiled code:
the checkpointed function is traced as it is (kiln-partition decides what
the backward keeps), values and gradients as eager's. Before 2026-11-30
the reentrant form (the default in PyTorch 1.13) failed the capture:
"element 0 of tensors does not require grad"."""

import copy

import pytest
import torch
import torch.utils.checkpoint as cp
from torch.utils.checkpoint import checkpoint

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


class Blocks(torch.nn.Module):
    def __init__(self, how):
        super().__init__()
        self.how = how
        self.blocks = torch.nn.Sequential(*[
            torch.nn.Sequential(torch.nn.Linear(6, 6), torch.nn.GELU())
            for _ in range(4)])
        self.head = torch.nn.Linear(6, 2)

    def forward(self, x):
        if self.how == "sequential":
            h = cp.checkpoint_sequential(self.blocks, 2, x)
        else:
            h = x
            for blk in self.blocks:
                if self.how == "reentrant":
                    h = checkpoint(blk, h)
                else:
                    h = cp.checkpoint(blk, h, use_reentrant=False)
        return self.head(h)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["reentrant", "non-reentrant",
                                 "sequential"])
def test_checkpointed_blocks_train_like_eager(backend, how):
    torch.manual_seed(0)
    ref = Blocks(how)
    m = copy.deepcopy(ref)
    cm = kiln.compile(m, backend=backend)
    opt_r = torch.optim.SGD(ref.parameters(), lr=0.05)
    opt_m = torch.optim.SGD(m.parameters(), lr=0.05)
    for _ in range(3):
        x = torch.randn(5, 6, requires_grad=True)
        xk = x.detach().clone().requires_grad_()
        want, got = ref(x), cm(xk)
        torch.testing.assert_close(got, want)
        want.pow(2).sum().backward()
        got.pow(2).sum().backward()
        torch.testing.assert_close(xk.grad, x.grad)
        for a, b in zip(m.parameters(), ref.parameters()):
            torch.testing.assert_close(a.grad, b.grad)
        opt_r.step()
        opt_m.step()
        opt_r.zero_grad()
        opt_m.zero_grad()


def test_checkpoint_outside_a_trace_is_unchanged():
    """Only a tracing thread sees the inlined form."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3, requires_grad=True)
    y = checkpoint(lin, x)
    assert y.grad_fn is not None and "CheckpointFunction" in \
        type(y.grad_fn).__name__
