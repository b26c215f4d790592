"""Checks a Chrome trace written by --kiln-trace / KILN_TRACE: valid Trace
Event Format JSON ("X" events with name, cat, ts, dur, pid, tid), and, per
argument, that events of a category (and optionally a name) are present:
    check_trace.py FILE compile run kernel=@toy_example_g0 compile=kiln-fuse
Prints one summary line per category (counts) for FileCheck."""
import collections
import json
import sys

path, wants = sys.argv[1], sys.argv[2:]
with open(path) as f:
    trace = json.load(f)
events = trace["traceEvents"]
assert isinstance(events, list) and events, "no events"
for e in events:
    for key, kind in (("name", str), ("cat", str), ("ph", str), ("ts", int),
                      ("dur", int), ("pid", int), ("tid", int)):
        assert isinstance(e.get(key), kind), "bad %s in %r" % (key, e)
    assert e["ph"] == "X" and e["ts"] >= 0 and e["dur"] >= 0, e
assert trace["otherData"]["producer"] == "kiln"
by_cat = collections.defaultdict(list)
for e in events:
    by_cat[e["cat"]].append(e)
for want in wants:
    cat, _, name = want.partition("=")
    names = [e["name"] for e in by_cat.get(cat, [])]
    assert names, "no %s events (have %s)" % (cat, sorted(by_cat))
    if name:
        assert name in names, "no %s event named %s (have %s)" % (
            cat, name, sorted(set(names)))
# Events of one thread nest or are disjoint (scopes).
for tid in {e["tid"] for e in events}:
    spans = sorted(((e["ts"], -e["dur"], e["name"]) for e in events
                    if e["tid"] == tid))
    stack = []
    for ts, neg, name in spans:
        end = ts - neg
        while stack and stack[-1][0] <= ts:
            stack.pop()
        assert not stack or end <= stack[-1][0], \
            "%s [%d, %d] overlaps its parent %s" % (name, ts, end,
                                                    stack[-1][1])
        stack.append((end, name))
for cat in sorted(by_cat):
    print("%s: %d events" % (cat, len(by_cat[cat])))
