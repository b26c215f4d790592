"""Convolutions through oneDNN in the kiln package (backend="cpu" with the
pipeline option `kiln-cpu{conv=onednn}`, and conv=auto): conv2d modules of
odd shapes against PyTorch eager, a conv net, and concurrent calls of one
compiled module from several threads (libkiln_onednn's primitive cache is
shared). Skipped where the build has no libkiln_onednn."""

import os
import threading

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("KILN_BUILD_DIR",
                       os.path.join(os.path.dirname(os.path.dirname(HERE)), "build"))
pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(BUILD, "lib", "libkiln_onednn.so.0")),
    reason="this build has no libkiln_onednn (libdnnl-dev)")

ONEDNN = {"pipeline": "kiln-aot-eager,kiln-cpu{conv=onednn threads=2}"}


@pytest.mark.parametrize("cin,cout,k,stride,padding,dilation,groups,bias,shape", [
    (3, 8, 3, 1, 1, 1, 1, True, (1, 3, 11, 9)),
    (8, 16, (3, 5), (2, 1), (1, 2), (1, 2), 1, False, (3, 8, 15, 12)),
    (8, 8, 3, 1, 1, 1, 8, True, (2, 8, 7, 10)),      # depthwise
    (4, 12, 3, 2, 1, 1, 4, False, (2, 4, 9, 9)),     # depthwise, multiplier 3
    (6, 9, 3, 1, 0, 2, 3, True, (1, 6, 12, 13)),     # groups 3, dilation 2
    (16, 24, 1, 1, 0, 1, 1, False, (2, 16, 5, 7)),   # 1x1
    (3, 16, 7, 2, 3, 1, 1, False, (1, 3, 32, 30)),   # a resnet stem
])
def test_conv2d_matches_eager(cin, cout, k, stride, padding, dilation, groups, bias, shape):
    torch.manual_seed(0)
    m = nn.Conv2d(cin, cout, k, stride=stride, padding=padding, dilation=dilation,
                  groups=groups, bias=bias).eval()
    x = torch.randn(*shape)
    with torch.no_grad():
        want = m(x)
        for options in (ONEDNN, None):  # forced, and conv=auto
            got = kiln.compile(m, backend="cpu", options=options)(x)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(16)

    def forward(self, x):
        h = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(h)) + x)


def test_block_from_several_threads():
    torch.manual_seed(1)
    m = Block().eval()
    xs = [torch.randn(2, 16, 12, 12) for _ in range(4)]
    with torch.no_grad():
        want = [m(x) for x in xs]
        c = kiln.compile(m, backend="cpu", options=ONEDNN)
        torch.testing.assert_close(c(xs[0]), want[0], rtol=1e-4, atol=1e-4)
        errors = []

        def work(i):
            try:
                for _ in range(5):
                    torch.testing.assert_close(c(xs[i]), want[i], rtol=1e-4, atol=1e-4)
            except Exception as e:  # reported below
                errors.append(e)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[0]
