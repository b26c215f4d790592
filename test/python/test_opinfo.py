"""PyTorch's OpInfo samples through Kiln, checked against the expectations
of the last sweep (issue 16, section 3).

test/python/opinfo_sweep.py runs one OpInfo sample on one backend ("eager":
kiln.compile on the interpreter, "cpu": kiln.compile on the CPU backend,
"aten": make_fx + kiln.backend on the interpreter) and compares it with
eager PyTorch. test/python/opinfo_expected.txt (written by
`scripts/opinfo_sweep.py --report`, with docs/opinfo.md) says what each
(op, dtype, backend) gave. This test reruns:

* in CI: a fixed, deterministic selection (opinfo_sweep.ci_selection:
  about a sixth of the OpInfos by a hash of their name, a twelfth on
  "aten"; sample 0; float32 and for half of them int64), where the
  expectations list it;
* with KILN_SLOW_TESTS=1: every sample the expectations list.

It fails when a sample the expectations say passes does not, and when a
sample expected to fail now passes or fails differently (then rerun the
sweep for that op and regenerate with `scripts/opinfo_sweep.py --report`,
so the list stays honest).
"""

import os

import pytest

import opinfo_sweep as S

EXPECTED = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "opinfo_expected.txt")
SLOW = os.environ.get("KILN_SLOW_TESTS") == "1"


@pytest.fixture(scope="module")
def expectations():
    return S.parse_expectations(EXPECTED)


def _items(exp, backend, everything):
    items = []
    if everything:
        for (key, dt, be), (_st, n, _f) in exp.items():
            if be == backend:
                items += [(key, dt, be, i) for i in range(n)]
    else:
        for key, dt, i in S.ci_selection(backend):
            if (key, dt, backend) in exp:
                items.append((key, dt, backend, i))
    return items


def _check(exp, items):
    S.preload()
    got = S.run_task(items, timeout=120.0)
    wrong = []
    for it in items:
        key, dt, be, i = it
        want = S.expected_status(exp, key, dt, be, i)
        st, msg = got[it]
        if want == "skip" or st == "skip" and want == "pass":
            continue
        if st != want:
            wrong.append("%s %s %s sample %d: %s, expected %s%s" % (
                key, dt, be, i, st, want, (": " + msg) if msg else ""))
    assert not wrong, (
        "%d of %d OpInfo samples changed (a regression, or a fix: rerun "
        "scripts/opinfo_sweep.py on the op and --report):\n%s" % (
            len(wrong), len(items), "\n".join(wrong)))


def test_expectations_are_well_formed(expectations):
    keys = S.ops_by_key()
    assert expectations, "no expectations"
    for (key, dt, be), (st, n, fails) in expectations.items():
        assert key in keys, "unknown OpInfo %s" % key
        assert dt in S.DTYPE_NAMES and be in S.BACKENDS
        assert st in S.STATUSES and n >= 1
        assert all(0 <= i < n and s in S.STATUSES for i, s in fails.items())
        if st == "pass":
            assert not fails


def test_ci_selection_is_fixed():
    sel = S.ci_selection()
    assert sel == S.ci_selection()
    assert 60 <= len(sel) <= 200, len(sel)
    assert len(S.ci_selection("aten")) < len(sel)


@pytest.mark.parametrize("backend", S.BACKENDS)
def test_opinfo_samples(expectations, backend):
    items = _items(expectations, backend, SLOW)
    if not items:
        pytest.skip("no expectations for %s" % backend)
    _check(expectations, items)


def test_every_deviation_has_a_reason(expectations):
    """Each OpInfo that does not pass somewhere is kept for a reason
    (DEVIATION_REASONS, listed in docs/opinfo.md): a new deviation is a
    defect to fix or a decision to write down."""
    missing = sorted({key for (key, _dt, _be), (st, _n, _f)
                      in expectations.items()
                      if st not in ("pass", "skip")
                      and S.deviation_reason(key) is None})
    assert not missing, "deviations without a reason: %s" % missing
    assert S.deviation_reason("linalg.det.singular")[0] == "lapack"
    assert S.deviation_reason("fft.rfft2")[0] == "complex"
    assert S.deviation_reason("linalg.eigvalsh")[0] == "lapack"
    assert S.deviation_reason("abs") is None


def test_unsorted_unique_order_note():
    """The "order" note passes unique(sorted=False) results that are
    PyTorch's up to the order of the values, and nothing else."""
    import torch
    x = torch.tensor([3, 1, 3, 2, 1])
    kw = {"sorted": False, "return_inverse": True, "return_counts": True}
    want = torch.unique(x, sorted=False, return_inverse=True,
                        return_counts=True)
    vals = torch.tensor([1, 2, 3])
    got = (vals, torch.tensor([2, 0, 2, 1, 0]), torch.tensor([2, 1, 2]))
    assert S._equal_up_to_order(kw, want, got)
    bad_counts = (vals, got[1], torch.tensor([2, 2, 1]))
    assert not S._equal_up_to_order(kw, want, bad_counts)
    bad_inverse = (vals, torch.tensor([2, 0, 2, 1, 1]), got[2])
    assert not S._equal_up_to_order(kw, want, bad_inverse)
    bad_values = (torch.tensor([1, 2, 4]), got[1], got[2])
    assert not S._equal_up_to_order(kw, want, bad_values)
    assert S._equal_up_to_order({"sorted": False}, want[0], vals)
