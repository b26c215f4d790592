"""A failed run-time index check of a compiled program raises
kiln.KilnIndexError: a KilnError (a RuntimeError, as eager's gather and
scatter raise) that `except IndexError` catches too, as eager's `x[i]`,
`index_select` and `embedding` raise IndexError. Before 2026-11-30 it was
a plain KilnError, which `except IndexError` missed."""

import pytest
import torch
import torch.nn.functional as F

import kiln

CASES = {
    "getitem": lambda x, i: x[i],
    "index_select": lambda x, i: x.index_select(0, i),
    "gather": lambda x, i: x.gather(0, i),
    "embedding": lambda x, i: F.embedding(i, x.unsqueeze(1)),
    "scatter_add": lambda x, i: x.scatter_add(0, i, x[:2]),
}


@pytest.mark.parametrize("backend", ["cpu", "eager"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_range_index(backend, name):
    f = CASES[name]
    x = torch.randn(3)
    good = torch.tensor([2, 0])
    torch.testing.assert_close(kiln.compile(f, backend=backend)(x, good),
                               f(x, good))
    bad = torch.tensor([0, 5])
    with pytest.raises(Exception) as eager:
        f(x, bad)
    cf = kiln.compile(f, backend=backend)
    with pytest.raises(RuntimeError) as got:
        cf(x, bad)
    assert isinstance(got.value, kiln.KilnError)
    assert "index 5" in str(got.value)
    assert "test_index_errors.py" in str(got.value)
    # eager's IndexError is caught as one here too
    if isinstance(eager.value, IndexError):
        assert isinstance(got.value, IndexError)


def test_other_errors_stay_kiln_errors():
    f = kiln.compile(lambda x: x.view(2, -1))
    with pytest.raises(kiln.KilnError) as e:
        f(torch.randn(3))
    assert not isinstance(e.value, IndexError)
