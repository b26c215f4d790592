"""Stand-in for the expecttest package, which Debian lacks; PyTorch 1.13's
OpInfo database imports it (test/python/opinfo/sweep.py puts this folder on
sys.path)."""
ACCEPT = False


class TestCase:
    pass
