"""Slices whose bounds are dynamic sizes (issue 12, item 1): kt.slice takes
a bound that depends on a dim marked dynamic as an `index` operand
(dynamic_start / dynamic_end, like kt.reshape's size operands), so
x[:, :T], x.narrow(1, 0, T // 2), torch.split by T // 2 and GPT-2's causal
mask slice compile once for every size (they raised SpecializationError
before). Every output is compared with eager PyTorch."""

import copy

import pytest
import torch

import kiln
from models import GPT2Block, same

def check_same(actual, expected, what, tol=1e-4):
    ok, msg = same(actual.detach(), expected.detach(), None, rtol=tol,
                   atol=tol)
    assert ok, "%s: %s" % (what, msg)


def marked(x, *dims):
    for d in dims:
        kiln.mark_dynamic(x, d)
    return x


def once(compiled):
    (prog,) = compiled._kiln.programs.values()
    assert prog.stats()["compiles"] == 1, prog.recompile_reasons()
    return prog


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_slice_to_another_inputs_dynamic_size(backend):
    # x[:, :T] and x[..., :T - 1] with T the marked dim of another input;
    # T past the end of x clamps, T = 0 gives an empty dim.
    def f(x, y):
        T = y.size(0)
        return x[:, :T] * 2, x[..., :T - 1] + 1

    compiled = kiln.compile(f, backend=backend)
    x = torch.randn(3, 6)
    for t in [4, 2, 9, 0, 1]:
        y = torch.randn(t)
        got = compiled(x, marked(y.clone(), 0))
        for g, e in zip(got, f(x, y)):
            check_same(g, e, "T = %d" % t)
    once(compiled)


def test_narrow_and_split_by_a_dynamic_size():
    def f(x):
        T = x.size(1)
        a = x.narrow(1, 0, T // 2)
        b, c = torch.split(x, T // 2, 1)[:2]
        return a + b, c.sum()

    compiled = kiln.compile(f, backend="eager")
    for t in [4, 6, 8]:
        x = torch.randn(2, t)
        for g, e in zip(compiled(marked(x.clone(), 1)), f(x)):
            check_same(g, e, "T = %d" % t)
    once(compiled)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_gpt2_causal_mask_slice_seq_dynamic_inference(backend):
    torch.manual_seed(1)
    model = GPT2Block().eval()
    compiled = kiln.compile(model, backend=backend)
    with torch.no_grad():
        for b, t in [(2, 5), (3, 2), (1, 16), (2, 1)]:
            x = torch.randn(b, t, 32)
            check_same(compiled(marked(x.clone(), 0, 1)), model(x),
                       "output at (%d, %d)" % (b, t))
    once(compiled)


def test_gpt2_causal_mask_slice_seq_dynamic_training():
    torch.manual_seed(2)
    m = GPT2Block().train()
    ref = copy.deepcopy(m)
    compiled = kiln.compile(m, backend="aot_eager")
    for b, t in [(2, 5), (3, 3)]:
        x = torch.randn(b, t, 32)
        outs = [compiled(marked(x.clone(), 0, 1)), ref(x.clone())]
        check_same(outs[0], outs[1], "output at (%d, %d)" % (b, t))
        for o in outs:
            (o * o).mean().backward()
        for (n, p), (_, q) in zip(m.named_parameters(),
                                  ref.named_parameters()):
            check_same(p.grad, q.grad, "grad of %s at (%d, %d)" % (n, b, t),
                       tol=1e-3)
            p.grad, q.grad = None, None
    (prog,) = compiled._kiln.programs.values()
    (pair,) = prog.training_pairs.values()
    for which in ("_fwd", "_bwd"):
        assert pair.session.stats(pair.name + which)["compiles"] == 1


def test_slices_to_the_end_of_a_dynamic_dim_stay_symbolic():
    # What works today and must keep working: x[s0:] and x[s0::step] of a
    # marked dim keep a symbolic length (one compile for every size).
    def f(x):
        return x[1:] * 2, x[::2] + 1, x[2::3].sum(0)

    compiled = kiln.compile(f, backend="eager")
    for n in [3, 5, 8, 2]:
        x = torch.randn(n, 4)
        for g, e in zip(compiled(marked(x.clone(), 0)), f(x)):
            check_same(g, e, "n = %d" % n)
    once(compiled)


@pytest.mark.parametrize("which", ["head", "tail", "middle"])
def test_static_bound_slices_of_a_dynamic_dim(which):
    f = {"head": lambda x: x[:1] * 2,
         "tail": lambda x: x[-1:] * 2,
         "middle": lambda x: x[1:3].sum(0)}[which]
    compiled = kiln.compile(f, backend="eager")
    for n in [3, 5, 8]:
        x = torch.randn(n, 4)
        check_same(compiled(marked(x.clone(), 0)), f(x), "n = %d" % n)
    once(compiled)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_static_bounds_clamp_at_every_size_of_a_dynamic_dim(backend):
    # Static bounds on a marked dim: negative bounds count from the end,
    # bounds past the end clamp, an empty result at small sizes (n = 0, 1);
    # the lengths are min / max of the size, one compile for all sizes.
    def f(x):
        return (x[:2] * 2, x[-3:] + 1, x[1:4:2] * 3, x[-5:-1].sum(0),
                x[4:] - 1, x[:-2] * 1)

    compiled = kiln.compile(f, backend=backend)
    for n in [6, 3, 1, 0, 2, 9]:
        x = torch.randn(n, 3)
        got = compiled(marked(x.clone(), 0))
        for i, (g, e) in enumerate(zip(got, f(x))):
            assert g.shape == e.shape, "output %d at n = %d" % (i, n)
            check_same(g, e, "output %d at n = %d" % (i, n))
    once(compiled)


def test_sym_min_max_evaluate_and_fold():
    from kiln._symbolic import ShapeEnv, evaluate, smax, smin
    env = ShapeEnv()
    n = env.new(5, 0, 0)
    assert smin(3, 7) == 3 and smax(3, 7) == 7
    m = smax(smin(n, 2) - 4, 0)
    assert m.value == 0
    for size in [0, 1, 2, 3, 9]:
        assert evaluate(m.key, lambda sid: size) == max(min(size, 2) - 4, 0)
    assert smin(n, n) is n
    assert "min" in repr(smin(n, 2))


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_a_clamped_length_used_as_a_size(backend):
    # The length min(2, n) sizes other ops (kt.full, kt.reshape size
    # operands): the importer writes it as arith.minsi of tensor.dim.
    def f(x):
        h = x[:2]
        k = h.size(0)
        return torch.ones(k, 3) + h, h.reshape(k * 3) * 2

    compiled = kiln.compile(f, backend=backend)
    for n in [5, 1, 0, 2]:
        x = torch.randn(n, 3)
        for g, e in zip(compiled(marked(x.clone(), 0)), f(x)):
            assert g.shape == e.shape
            check_same(g, e, "n = %d" % n)
    once(compiled)


def test_a_slice_to_the_end_past_a_smaller_later_size():
    # x[5:] captured at n = 8 has length max(n - 5, 0): at n = 3 it is
    # empty (was n - 5 = -2, a negative kt.full size at run time).
    def f(x):
        h = x[5:]
        g = x[4::2]
        return torch.ones(h.size(0), 2) + h, torch.zeros(g.size(0), 2) - g

    compiled = kiln.compile(f, backend="eager")
    for n in [8, 3, 6, 0]:
        x = torch.randn(n, 2)
        for g, e in zip(compiled(marked(x.clone(), 0)), f(x)):
            assert g.shape == e.shape
            check_same(g, e, "n = %d" % n)
    once(compiled)


def test_dynamic_bounds_are_operands_in_the_ir():
    # x[:, :T] and x[..., :T - 1]: kt.slice with the bound as an operand
    # (T - 1 < 0 at T = 0 counts from the end: Python's rule at run time).
    def f(x, y):
        T = y.size(0)
        return x[:, :T] * 2, x[..., :T - 1] + 1, x[:, T // 2:]

    compiled = kiln.compile(f, backend="eager")
    x = torch.randn(3, 6)
    compiled(x, marked(torch.randn(4), 0))
    prog = once(compiled)
    ir = prog.session.entry_ir(prog.name, 0)
    assert ir.count("dynamic_end") == 2 and "dynamic_start" in ir, ir
    for t in [0, 7, 3]:
        for g, e in zip(compiled(x, marked(torch.randn(t), 0)),
                        f(x, torch.randn(t))):
            check_same(g, e, "T = %d" % t)
    once(compiled)


def test_symbolic_slice_index_evaluates_python_rules():
    from kiln._symbolic import ShapeEnv, evaluate, slice_index
    env = ShapeEnv()
    t, n = env.new(4, 0, 0), env.new(6, 1, 0)
    i = slice_index(t - 1, n)
    assert i.value == 3 and "idx" in repr(i)
    for tv, nv in [(0, 6), (1, 6), (9, 6), (3, 0), (0, 0)]:
        sizes = {0: tv, 1: nv}
        assert evaluate(i.key, sizes.get) == \
            len(range(nv)[:tv - 1]), (tv, nv)
    # A provably non-negative bound is a min, a negative int a max.
    assert slice_index(t, n).key[0] == "min"
    assert slice_index(-2, n).key[0] == "max"


def test_narrow_past_the_end_of_a_dynamic_dim_is_an_error():
    # narrow never clamps (PyTorch raises): checked on every call.
    def f(x, y):
        return x.narrow(1, 1, y.size(0)) * 2

    compiled = kiln.compile(f, backend="eager")
    x = torch.randn(2, 6)
    for t in [3, 5, 0]:
        y = torch.randn(t)
        check_same(compiled(x, marked(y.clone(), 0)), f(x, y), "T = %d" % t)
    with pytest.raises(kiln.KilnError, match="exceeds the size of dim 1"):
        compiled(x, marked(torch.randn(6), 0))
    with pytest.raises(RuntimeError):
        f(x, torch.randn(6))
    once(compiled)


def test_split_into_another_number_of_chunks_is_an_error():
    # The number of chunks of a split by a dynamic size is the capture's:
    # sizes that give another count raise (never a wrong result).
    def f(x):
        return torch.split(x, x.size(1) // 2, 1)[0] * 2

    compiled = kiln.compile(f, backend="eager")
    for t in [4, 8, 2]:
        x = torch.randn(2, t)
        check_same(compiled(marked(x.clone(), 1)), f(x), "T = %d" % t)
    with pytest.raises(kiln.KilnError, match="number of chunks"):
        compiled(marked(torch.randn(2, 5), 1))
    once(compiled)


def test_writing_through_a_dynamic_slice():
    # x[:, :T] = 0 and x[:, T // 2:T] += 1: kt.slice_scatter with the same
    # dynamic bounds, one compile for every T (0 and past the end included).
    def f(x, y):
        x = x.clone()
        T = y.size(0)
        x[:, :T] = 0
        x[:, T // 2:T] += 1
        return x * 2

    compiled = kiln.compile(f, backend="eager")
    x = torch.randn(3, 6)
    for t in [4, 1, 0, 9, 3]:
        y = torch.randn(t)
        check_same(compiled(x, marked(y.clone(), 0)), f(x, y), "T = %d" % t)
    prog = once(compiled)
    assert "dynamic_end" in prog.session.entry_ir(prog.name, 0)


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_gradient_of_a_dynamic_slice(backend):
    # The VJP of kt.slice with a dynamic bound scatters the cotangent into
    # zeros at the same run-time window (kt.slice_scatter with the bounds);
    # T - 1 = -1 at T = 0 counts from the end.
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 10))

        def forward(self, y):
            T = y.size(1)
            return (self.w[:, :T] * y).sum(0) + self.w[:, T - 1:T + 1].sum()

    m = M()
    ref = copy.deepcopy(m)
    compiled = kiln.compile(m, backend=backend)
    for t in [3, 7, 1, 10, 0]:
        y = torch.randn(4, t)
        outs = [compiled(marked(y.clone(), 1)), ref(y.clone())]
        check_same(outs[0], outs[1], "output at T = %d" % t)
        for o in outs:
            (o * o).sum().backward()
        check_same(m.w.grad, ref.w.grad, "grad at T = %d" % t, tol=1e-4)
        m.w.grad, ref.w.grad = None, None
    (prog,) = compiled._kiln.programs.values()
    (pair,) = prog.training_pairs.values()
    for which in ("_fwd", "_bwd"):
        assert pair.session.stats(pair.name + which)["compiles"] == 1


def test_automatic_dynamic_shapes_keep_slice_bounds_symbolic():
    # Without mark_dynamic: the capture does not specialize T for the mask
    # slice, so the runtime's automatic dynamic shapes compiles T as `?` on
    # the first new size and serves the others (5 compiles before).
    torch.manual_seed(3)
    model = GPT2Block().eval()
    compiled = kiln.compile(model, backend="eager")
    with torch.no_grad():
        for t in [5, 7, 3, 9, 1]:
            x = torch.randn(2, t, 32)
            check_same(compiled(x), model(x), "output at T = %d" % t)
    (prog,) = compiled._kiln.programs.values()
    assert prog.stats()["compiles"] == 2, prog.recompile_reasons()
