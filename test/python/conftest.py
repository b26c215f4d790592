"""pytest setup for the kiln package's tests.

Run from the checkout root (scripts/test.sh does):
    PYTHONPATH=python /usr/bin/python3 -m pytest test/python
The package finds libKilnCAPI.so in build/lib (or KILN_BUILD_DIR/lib, or
KILN_LIBRARY). The kiln package under test is the first on sys.path; this
file adds the checkout's python/ when PYTHONPATH does not name it.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
if not any(os.path.abspath(p) == os.path.join(ROOT, "python")
           for p in sys.path if p):
    sys.path.insert(0, os.path.join(ROOT, "python"))

# No test reads or writes the user's compiled-code disk cache (docs/codegen.md,
# "Disk cache"): sessions start with KILN_CACHE_DIR=off.
os.environ["KILN_CACHE_DIR"] = "off"

import pytest  # noqa: E402
import torch  # noqa: E402

# Deterministic, single-threaded eager references (Kiln's own threads are
# set by its pipelines).
torch.set_num_threads(1)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: a long sweep, skipped unless KILN_SLOW_TESTS=1")


@pytest.fixture
def reset_kiln():
    """kiln.reset() before and after a test (compiled-code caches, guards,
    counters): `pytestmark = pytest.mark.usefixtures("reset_kiln")` in a
    test file runs every test of it from a clean state."""
    import kiln
    kiln.reset()
    yield
    kiln.reset()
