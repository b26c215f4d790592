"""Converters that took a symbolic size's example value silently.

With a dynamic dim (automatic dynamic shapes after a size change, or
kiln.mark_dynamic), a converter that read a size with `value()` baked the
first dynamic call's size into the program: later sizes computed wrong
answers (kl_div's batchmean divided by the old batch, cross_entropy with
class probabilities averaged over it, torch.cov, median, trapezoid) or
failed at run time (unfold, block_diag, diagonal_scatter, kron). Now a
mean's divisor is counted at run time (one program for every size), and
a size the program's structure needs is specialized (a guard: another
size recaptures; marked dynamic: kiln.SpecializationError). Every result
is compared with eager PyTorch, for three sizes in a row."""

import pytest
import torch
import torch.nn.functional as F

import kiln

BACKENDS = ["eager", "cpu"]


pytestmark = pytest.mark.usefixtures("reset_kiln")


def r(*shape):
    return torch.randn(*shape)


# name: (fn, make(n) -> args, True when one program serves every size)
CASES = {
    "kl_div batchmean": (
        lambda x, t: F.kl_div(x.log_softmax(-1), t.softmax(-1),
                              reduction="batchmean"),
        lambda n: (r(n, 5), r(n, 5)), True),
    "cross_entropy probabilities": (
        lambda x, t: F.cross_entropy(x, t.softmax(-1)),
        lambda n: (r(n, 5), r(n, 5)), True),
    "cross_entropy probabilities, smoothing": (
        lambda x, t: F.cross_entropy(x, t.softmax(-1), label_smoothing=0.2),
        lambda n: (r(n, 5), r(n, 5)), True),
    "multilabel_soft_margin_loss over classes": (
        lambda x, t: F.multilabel_soft_margin_loss(x, t),
        lambda n: (r(3, n), (r(3, n) > 0).float()), True),
    "cov over observations": (
        lambda x: torch.cov(x), lambda n: (r(3, n),), True),
    "cov of a vector": (lambda x: torch.cov(x), lambda n: (r(n),), True),
    "unfold at a batch": (
        lambda x: F.unfold(x, 2, padding=1), lambda n: (r(n, 2, 4, 5),),
        True),
    "median": (lambda x: x.median(), lambda n: (r(n),), False),
    "median along a dim": (lambda x: x.median(-1).values,
                           lambda n: (r(3, n),), False),
    "trapezoid": (lambda y: torch.trapz(y), lambda n: (r(n),), False),
    "block_diag": (lambda a, c: torch.block_diag(a, c),
                   lambda n: (r(n, 2), r(n, 3)), False),
    "diagonal_scatter": (lambda x, s: torch.diagonal_scatter(x, s),
                         lambda n: (r(n, n), r(n)), False),
    "kron": (lambda a, c: torch.kron(a, c), lambda n: (r(n, 2), r(2, 3)),
             False),
    "take": (lambda x: x.take(torch.tensor([0, 2, 5])),
             lambda n: (r(n, 3),), False),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_three_sizes(backend, case):
    fn, make, _ = CASES[case]
    cf = kiln.compile(fn, backend=backend)
    torch.manual_seed(0)
    for n in (4, 6, 7):   # the second size makes the dim dynamic
        args = make(n)
        torch.testing.assert_close(cf(*args), fn(*args))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c][2]))
def test_marked_dynamic_compiles_once(backend, case):
    fn, make, _ = CASES[case]
    cf = kiln.compile(fn, backend=backend)
    torch.manual_seed(1)
    for i, n in enumerate((4, 6, 7)):
        args = make(n)
        if i == 0:
            for a in args:   # the first dim of that size
                d = next((d for d in range(a.dim()) if a.shape[d] == n),
                         None)
                if d is not None:
                    kiln.mark_dynamic(a, d)
        torch.testing.assert_close(cf(*args), fn(*args))
    assert len(cf._kiln.programs) == 1


@pytest.mark.parametrize("case", ["median", "block_diag"])
def test_marked_dynamic_that_must_specialize_says_so(case):
    fn, make, _ = CASES[case]
    cf = kiln.compile(fn, backend="eager")
    args = make(4)
    for a in args:
        kiln.mark_dynamic(a, 0)
    with pytest.raises(kiln.SpecializationError, match="marked dynamic"):
        cf(*args)


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_batchmean_gradient_at_a_dynamic_batch(backend):
    # training: d(loss)/dx carries the 1/batch of batchmean
    def f(x, t):
        return F.kl_div(x.log_softmax(-1), t.softmax(-1),
                        reduction="batchmean") + F.cross_entropy(
                            x, t.softmax(-1))
    cf = kiln.compile(f, backend=backend)
    torch.manual_seed(2)
    for n in (4, 6, 7):
        x, t = r(n, 5), r(n, 5)
        x1 = x.clone().requires_grad_()
        x2 = x.clone().requires_grad_()
        got, want = cf(x1, t), f(x2, t)
        got.backward()
        want.backward()
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(x1.grad, x2.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_op_at_a_break_with_a_size_from_an_input(backend):
    # torch.randint / randperm run eagerly at a graph break; a size from an
    # input dim reached torch as a traced value (the capture failed:
    # "randint() received an invalid combination of arguments").
    def f(x):
        n = x.shape[-1]
        i = torch.randint(0, 5, (n,))
        p = torch.randperm(n)
        return x * 2, i, p
    cf = kiln.compile(f, backend=backend)
    for n in (3, 4, 6):
        x = r(2, n)
        y, i, p = cf(x)
        torch.testing.assert_close(y, x * 2)
        assert i.shape == (n,) and i.dtype == torch.int64
        assert bool(((i >= 0) & (i < 5)).all())
        assert sorted(p.tolist()) == list(range(n))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_index_dtype(backend):
    # an empty index of another integer dtype: an empty result, as PyTorch
    # (before: IR that failed kt.gather's verifier); a non-empty one:
    # PyTorch's error, naming the op (eager raises RuntimeError)
    f = kiln.compile(lambda x, i: torch.gather(x, 0, i), backend=backend,
                     fullgraph=True)
    got = f(r(5), torch.empty(0, dtype=torch.uint8))
    assert got.shape == (0,) and got.dtype == torch.float32
    kiln.reset()
    f = kiln.compile(lambda x, i: torch.gather(x, 0, i), backend=backend,
                     fullgraph=True)
    with pytest.raises(kiln.Unsupported,
                       match="gather\\(\\): Expected dtype int64 for index"):
        f(r(5), torch.zeros(2, dtype=torch.uint8))
