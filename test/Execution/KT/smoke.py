# RUN: %python %s
# REQUIRES: numpy
# Tests that kt.add (broadcasting, integer wrap-around) and kt.exp give
# NumPy's results through kiln-run.

import numpy as np
from kiln_testing import Suite, ttype

s = Suite(__file__, cpu=True)
a, b = s.randn(2, 3), s.randn(3)
s.check_op("kt.add", [a, b], a.astype(np.float64) + b, [ttype((2, 3), "f32")])
i, j = np.array([2**63 - 1, 5], dtype=np.int64), np.array([1, -7], dtype=np.int64)
s.check_op("kt.add", [i, j], np.array([-2**63, -2], dtype=np.int64), [ttype((2,), "i64")])
x = s.randn(4, 5, dtype=np.float64)
s.check_op("kt.exp", [x], np.exp(x), [ttype((4, 5), "f64")])
s.finish()
