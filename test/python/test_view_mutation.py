"""In-place writes through views, and views that see later writes to their
base (kiln's functionalization of views in the frontend: Importer.mutate).
A write through a view is scattered into its base (slice_scatter,
select_scatter, the inverse permute or reshape), up to the tensor that owns
the memory (a program argument is written back); every view of a written
tensor is made again from its new value, as PyTorch's views share memory.
References are eager PyTorch on copies of the same inputs."""

import time

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils import _pytree as pytree

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


def check(fn, *shapes, backend, dtype=torch.float32, seed=0):
    """fn on fresh inputs through kiln and through PyTorch: the same
    results, and the same values left in the inputs (writes to arguments)."""
    g = torch.Generator().manual_seed(seed)
    inputs = [torch.randn(*s, generator=g, dtype=dtype) for s in shapes]
    mine = [t.clone() for t in inputs]
    ref = [t.clone() for t in inputs]
    got = kiln.compile(fn, backend=backend, fullgraph=True)(*mine)
    want = fn(*ref)
    got_l, want_l = pytree.tree_flatten(got)[0], pytree.tree_flatten(want)[0]
    assert len(got_l) == len(want_l)
    for a, b in zip(got_l, want_l):
        torch.testing.assert_close(a, b)
    for a, b in zip(mine, ref):
        torch.testing.assert_close(a, b)  # the arguments' in-place updates


def write_select(x):
    y = x.clone()
    y[:, 0].add_(1)
    return y


def write_flat_view(x):
    y = x * 2
    y.view(-1).mul_(3)
    return y


def write_slice_relu(x):
    y = x + 0
    y[1:].relu_()
    return y, y.sum()


def setitem_through_transpose(x):
    y = x + 0
    t = y.t()
    t[0] = 5
    t[2, 1:] = -1
    return y, t


def argument_through_select(x):
    x[0].add_(1)
    return x.sum()


def views_see_later_writes(x):
    y = x * 1
    row = y[0]
    col = y[:, 1]
    flat = y.view(-1)
    y.add_(1)
    return row * 1, col * 1, flat * 1


def view_of_view_writes(x):
    y = x.clone()
    z = y[1:]        # rows 1.. (a slice)
    w = z[:, 2]      # column 2 of those rows (a select of a slice)
    w.mul_(-2)
    z.unsqueeze(0).squeeze(0)[0].fill_(7)
    return y, z, w


def write_permuted_then_read_base(x):
    y = x.clone()
    p = y.permute(2, 0, 1)
    p[1].zero_()
    p.select(2, 0).add_(10)
    return y, p.sum(0)


def argument_written_through_views(x):
    x.view(2, -1)[1].mul_(0.5)
    x.t()[0].sub_(1)
    return None


def repeated_writes_in_a_loop(x):
    h = torch.zeros_like(x)
    h[:, 0] = x[:, 0]
    for i in range(1, x.shape[1]):
        h[:, i] = h[:, i - 1] * 0.5 + x[:, i]
    return h


CASES = [
    (write_select, [(3, 4)]),
    (write_flat_view, [(3, 4)]),
    (write_slice_relu, [(4, 5)]),
    (setitem_through_transpose, [(4, 3)]),
    (argument_through_select, [(3, 4)]),
    (views_see_later_writes, [(3, 4)]),
    (view_of_view_writes, [(4, 5)]),
    (write_permuted_then_read_base, [(2, 3, 4)]),
    (argument_written_through_views, [(4, 6)]),
    (repeated_writes_in_a_loop, [(3, 9)]),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,shapes", CASES, ids=[c[0].__name__
                                                  for c in CASES])
def test_writes_through_views(fn, shapes, backend):
    check(fn, *shapes, backend=backend)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_writes_through_views_f64_odd_sizes(backend):
    for fn, shapes in CASES:
        check(fn, *[tuple(d + 2 for d in s) for s in shapes],
              backend=backend, dtype=torch.float64, seed=1)


def reshape_of_transpose_write(x):
    y = x + 0
    y.t().reshape(-1).add_(1)  # PyTorch: reshape copies, y is unchanged
    return y


def expand_write(x):
    y = x[:1] + 0
    y.expand(3, 4).add_(1)  # PyTorch refuses this too
    return y


@pytest.mark.parametrize("fn", [reshape_of_transpose_write, expand_write])
def test_writes_kiln_cannot_follow_are_refused(fn):
    with pytest.raises(kiln.Unsupported,
                       match="in-place op on this view .* not supported"):
        kiln.compile(fn, backend="eager", fullgraph=True)(torch.randn(3, 4))
    # Not silently wrong without fullgraph either: the write is not a
    # graph break (running it eagerly would write a copy).
    with pytest.raises(kiln.Unsupported):
        kiln.compile(fn, backend="eager")(torch.randn(3, 4))


def test_many_writes_do_not_remake_every_view():
    """A loop of T writes to columns of one tensor, each reading the
    previous column: the views of earlier columns are made again only when
    read (compile time stays linear)."""
    def scan(x):
        h = torch.zeros_like(x)
        for i in range(x.shape[1]):
            prev = h[:, i - 1] if i else x[:, 0]
            h[:, i] = prev * 0.5 + x[:, i]
        return h

    x = torch.randn(2, 300)
    opt = kiln.compile(scan, backend="eager", fullgraph=True)
    start = time.perf_counter()
    got = opt(x)
    elapsed = time.perf_counter() - start
    torch.testing.assert_close(got, scan(x))
    text = kiln.compile(scan, backend="eager", fullgraph=True)
    text(x)
    (prog,) = text._kiln.programs.values()
    ops = prog.result.text.count(" = kt.")
    # ~5 ops per step (select, mul, add, select of x, select_scatter):
    # far from the ~T^2/2 = 45000 of remaking every view per write.
    assert ops < 20 * 300, ops
    assert elapsed < 60, elapsed


class FlattenDropoutHead(nn.Module):
    """torchvision's efficientnet / mobilenet_v3 classifier: an in-place
    dropout (and ReLU) on the flattened view of the pooled features."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(p=0.0, inplace=True)
        self.act = nn.ReLU(inplace=True)
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        x = torch.flatten(self.pool(self.conv(x)), 1)
        return self.fc(self.act(self.drop(x)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_through_in_place_ops_on_views(backend):
    torch.manual_seed(0)
    m = FlattenDropoutHead().train().double()
    ref = FlattenDropoutHead().train().double()
    ref.load_state_dict(m.state_dict())
    opt = kiln.compile(m, backend=backend, fullgraph=True)
    x = torch.randn(2, 3, 8, 8, dtype=torch.float64)
    for step in range(2):
        for model, call in ((m, opt), (ref, ref)):
            model.zero_grad()
            F.cross_entropy(call(x), torch.tensor([1, 3])).backward()
        for (name, p), q in zip(ref.named_parameters(), m.parameters()):
            torch.testing.assert_close(q.grad, p.grad, msg=name)
        with torch.no_grad():
            for p, q in zip(ref.parameters(), m.parameters()):
                p -= 0.1 * p.grad
                q -= 0.1 * q.grad
