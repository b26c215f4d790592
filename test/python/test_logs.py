"""Logs and traces from Python (kiln.set_logs, set_log_handler, set_trace;
KILN_LOGS / KILN_TRACE): the tracer's graph breaks with the user's line, the
runtime's recompiles and guards, the keyword form, bad topics, and a Chrome
trace with capture, compile, run and kernel events. Results are still
checked against eager PyTorch."""

import inspect
import json
import os
import subprocess
import sys

import pytest
import torch

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(autouse=True)
def _logs_off():
    yield
    kiln.set_logs()
    kiln.set_log_handler(None)


def branchy(x):
    y = torch.sin(x) * 2
    if y.sum() > 0:  # LINE branch
        return y + 1
    return y - 1


def _line(fn, marker):
    src, start = inspect.getsourcelines(fn)
    (i,) = [i for i, l in enumerate(src) if marker in l]
    return start + i


def test_graph_breaks_recompiles_and_guards_reach_the_handler():
    got = []
    kiln.set_log_handler(lambda topic, text: got.append((topic, text)))
    kiln.set_logs("graph_breaks,recompiles,guards")
    f = kiln.compile(branchy, backend="cpu")
    for n in (4, 6):
        x = torch.linspace(-1, 3, n)
        torch.testing.assert_close(f(x), branchy(x))
    topics = [t for t, _ in got]
    assert set(topics) == {"graph_breaks", "recompiles", "guards"}, topics
    breaks = [m for t, m in got if t == "graph_breaks"]
    where = "%s:%d" % (__file__, _line(branchy, "LINE branch"))
    assert any(where in m and "generic_jump" in m for m in breaks), breaks
    recompiles = [m for t, m in got if t == "recompiles"]
    assert any("size mismatch at index 0. expected 4, actual 6" in m
               for m in recompiles), recompiles
    guards = [m for t, m in got if t == "guards"]
    assert any("x.size(0) == 4" in m for m in guards), guards
    # The second entry of the program before the break has a symbolic dim.
    assert any("s0 = x.size(0)" in m for m in guards), guards


def test_keyword_form_and_levels():
    kiln.set_logs(recompiles=True, guards="+", perf=False)
    assert kiln._logs.log_enabled("recompiles")
    assert not kiln._logs.log_enabled("recompiles", verbose=True)
    assert kiln._logs.log_enabled("guards", verbose=True)
    assert not kiln._logs.log_enabled("perf")
    kiln.set_logs("all", perf=False)
    assert kiln._logs.log_enabled("fusion")
    assert not kiln._logs.log_enabled("perf")
    kiln.set_logs()
    assert not any(kiln._logs.log_enabled(t) for t in kiln._logs.TOPICS)


def test_unknown_topic_is_an_error_and_changes_nothing():
    kiln.set_logs("recompiles")
    with pytest.raises(kiln.KilnError, match="unknown log topic 'grpah'.*"
                       "valid: graph_breaks"):
        kiln.set_logs("grpah")
    with pytest.raises(kiln.KilnError, match="expected True, False or '\\+'"):
        kiln.set_logs(guards=3)
    assert kiln._logs.log_enabled("recompiles")


def test_nothing_logged_by_default():
    got = []
    kiln.set_log_handler(lambda topic, text: got.append(topic))
    f = kiln.compile(branchy, backend="eager")
    for n in (4, 6):
        x = torch.linspace(-1, 3, n)
        torch.testing.assert_close(f(x), branchy(x))
    assert got == []


SCRIPT = """
import torch, kiln
def f(x):
    return torch.relu(x) * 3 + 1
g = kiln.compile(f, backend="cpu")
for n in (5, 7, 9):
    x = torch.randn(n)
    assert torch.allclose(g(x), f(x))
print("ok")
"""


def test_environment_logs_and_trace(tmp_path):
    trace = tmp_path / "trace.json"
    env = dict(os.environ, KILN_LOGS="recompiles", KILN_TRACE=str(trace),
               PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    lines = [l for l in r.stderr.splitlines() if l.startswith("[kiln:")]
    assert lines and all(l.startswith("[kiln:recompiles] Recompiling @f")
                         for l in lines), r.stderr
    events = json.loads(trace.read_text())["traceEvents"]
    cats = {e["cat"] for e in events}
    assert {"capture", "compile", "run", "kernel"} <= cats, cats
    names = {e["name"] for e in events}
    assert "capture f" in names and "call @f" in names, sorted(names)
    # Three calls ran compiled code.
    assert sum(e["cat"] == "kernel" for e in events) >= 3


def test_set_trace_bad_path_is_an_error(tmp_path):
    with pytest.raises(kiln.KilnError, match="cannot write the trace"):
        kiln.set_trace(str(tmp_path / "missing" / "t.json"))
    with pytest.raises(kiln.KilnError, match="it is a directory"):
        kiln.set_trace(str(tmp_path))
