#!/usr/bin/python3
"""Writes docs/core-aten.md: one row per operator of
python/kiln/core_aten_ops.txt (PyTorch's Core ATen opset, then the other
operators of PyTorch 1.13's AOT graphs) saying what Kiln makes of it.

Every column is derived from code, nothing is typed in by hand:

* "becomes": the kt ops that kiln/_aten.py's converter emits for the
  operator's case in test/python/core_aten_cases.py (imported, not run), or
  "not supported: <reason>" from `kiln._aten.UNSUPPORTED`;
* "kind": `kt op` when the converter emits one kt op (kt.constant and
  kt.cast aside), `decomposition` otherwise;
* "interpreter", "CPU": every kt op emitted has a kernel in
  lib/Interpreter/Kernels, a lowering in lib/Conversion/KTToLinalg (its op
  class named there);
* "VJP": every kt op emitted has a vector-Jacobian rule (attachVJP /
  attachInterface in lib/Autodiff): `yes`, `zero` when every rule is the
  zero gradient (comparisons, rounding), `no: kt.X` naming the ops without;
* "GPU": `no: kt.X` for the ops docs/gpu.md lists as not lowered by
  kiln-nvptx, else `yes` (test/Conversion/NVPTX/parity.py keeps that list
  true).

A last section lists, per op, the messages its converter raises itself
(the arguments a supported op refuses), read from the converter's source.

`--check` fails when docs/core-aten.md differs from what it would write
(scripts/update-docs.sh --check runs it; so does test_core_aten.py).
"""

import glob
import os
import re
import sys
import warnings

ROOT = os.path.normpath(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))
os.environ.setdefault("KILN_CACHE_DIR", "off")

import torch  # noqa: E402

from kiln import _aten, _fx_import  # noqa: E402
import core_aten_cases  # noqa: E402

DOC = os.path.join(ROOT, "docs", "core-aten.md")
BOOKKEEPING = {"constant", "cast"}


def read(pattern):
    text = ""
    for p in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)):
        with open(p) as f:
            text += f.read()
    return text


def op_classes():
    """kt mnemonic -> ODS class name (AddOp)."""
    td = read("include/kiln/Dialect/KT/IR/*.td")
    out = {}
    for cls, mnemonic in re.findall(
            r'def KT_(\w+Op)\s*:\s*[\w<>, ]*?<\s*"([a-z0-9_]+)"', td):
        # Ops on refs share value ops' mnemonics (kt.reshape of a ref is
        # a view): the value op is the one named after the mnemonic.
        camel = "".join(w.capitalize() for w in mnemonic.split("_")) + "Op"
        if mnemonic not in out or cls.lower() == camel.lower():
            out[mnemonic] = cls
    return out


def vjp_rules():
    """ODS class -> "yes" / "zero" from lib/Autodiff."""
    src = read("lib/Autodiff/*.cpp")
    rules = {}
    for cls, rule in re.findall(r"attachVJP<kt::(\w+),\s*([\w<>:]+)", src):
        rules[cls] = "zero" if rule.startswith("vjpNone") else "yes"
    for cls in re.findall(r"kt::(\w+)::attachInterface<", src):
        rules.setdefault(cls, "yes")
    return rules


def gpu_exceptions():
    text = read("docs/gpu.md")
    part = text.split("## Ops without a GPU lowering", 1)[-1]
    part = part.split("\n## ", 1)[0]
    return set(re.findall(r"^\| `kt\.([a-z0-9_]+)` \|", part, re.M))


def emitted_ops(case):
    # One explicit node per case (no tracing): the converter sees the
    # same arguments as in a make_fx graph.
    gm, flat, _ = core_aten_cases.build_graph([case], trace=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _fx_import.import_graph_module(gm, flat, "p")
    ops = []
    for line in res.graph["ops"]:
        m = re.search(r"\bkt\.([a-z0-9_]+)", line)
        if m and m.group(1) not in ops:
            ops.append(m.group(1))
    return ops


def _messages(fn):
    """The b.error(...) messages in fn's own source (format placeholders
    shown as `...`) and the functions of kiln._ops / kiln._aten it calls
    by name (`O.f(...)`, `_ops.f(...)` or a bare `f(...)`)."""
    import ast
    import inspect
    import textwrap
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return [], []
    msgs, calls = [], []
    for node in ast.walk(ast.parse(src)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "error" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mod):
                arg = arg.left
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                msg = re.sub(r"%[-0-9.]*[a-z]", "...", arg.value)
                msgs.append(msg.replace("%%", "%"))
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id in ("O", "_ops"):
            calls.append(("_ops", f.attr))
        elif isinstance(f, ast.Name):
            calls.append((fn.__module__.rsplit(".", 1)[-1], f.id))
    return msgs, calls


def refusals(name):
    """The messages the converter of `name` raises (its `b.error(...)`
    calls, format placeholders shown as `...`): where a supported op
    refuses some arguments or dtypes. Followed into the kiln._ops /
    kiln._aten functions it calls: the private helpers (`_float_pool`,
    `_conv_dtype`, ...), transitively, and the public torch-level
    converter it delegates to (a name sharing the operator's first four
    letters: `avg_pool3d` for aten.avg_pool3d, `conv2d` for
    aten.convolution), whose private helpers are followed too; generic
    public helpers (need_tensor, reshape, ...) are not."""
    from kiln import _ops
    conv = _aten.ATEN.get(name)
    if conv is None:
        return []
    mods = {"_ops": _ops, "_aten": _aten}
    stem = name.split(".")[0].lstrip("_")[:4]
    out, seen = [], set()
    todo = [(conv, True)]
    while todo:
        fn, top = todo.pop(0)
        if fn in seen:
            continue
        seen.add(fn)
        msgs, calls = _messages(fn)
        for m in msgs:
            if m not in out:
                out.append(m)
        for mod, attr in calls:
            f = getattr(mods.get(mod), attr, None)
            if not callable(f) or getattr(f, "__module__", None) not in (
                    "kiln._ops", "kiln._aten"):
                continue
            if attr.startswith("_") or (top and attr.startswith(stem)):
                todo.append((f, False))
    return out


def row(name, case, classes, rules, gpu, interp_src, cpu_src):
    reason = _aten.UNSUPPORTED.get(name)
    if reason is not None:
        return ["`aten.%s`" % name, "not supported: %s" % reason, "", "",
                "", "", ""], "unsupported"
    ops = emitted_ops(case)
    real = [o for o in ops if o not in BOOKKEEPING] or ops
    kind = "kt op" if len(real) <= 1 else "decomposition"
    becomes = ", ".join("`kt.%s`" % o for o in real) if real else \
        "(no op: a size, or a value of the graph)"

    def have(src):
        miss = [o for o in ops if not re.search(
            r"\b%s\b" % classes.get(o, "?"), src)]
        return "yes" if not miss else "no: " + ", ".join(
            "kt." + o for o in miss)

    vj = [rules.get(classes.get(o, "?")) for o in real]
    no_vjp = [o for o, r in zip(real, vj) if r is None]
    if no_vjp:
        vjp = "no: " + ", ".join("kt." + o for o in no_vjp)
    elif real and all(r == "zero" for r in vj):
        vjp = "zero"
    else:
        vjp = "yes"
    no_gpu = [o for o in ops if o in gpu]
    g = "no: " + ", ".join("kt." + o for o in no_gpu) if no_gpu else "yes"
    return ["`aten.%s`" % name, becomes, kind, have(interp_src),
            have(cpu_src), vjp, g], kind


def generate():
    torch.manual_seed(0)
    classes = op_classes()
    rules = vjp_rules()
    gpu = gpu_exceptions()
    interp_src = read("lib/Interpreter/**/*.cpp")
    cpu_src = read("lib/Conversion/KTToLinalg/**/*.cpp") + read(
        "lib/Conversion/KTFusionToLinalg/**/*.cpp")
    cases = core_aten_cases.cases()
    sections = {"core": [], "aot": []}
    totals = {"core": {}, "aot": {}}
    for name, schema, section in _aten.core_ops():
        r, kind = row(name, cases.get(name), classes, rules, gpu,
                      interp_src, cpu_src)
        sections[section].append(r)
        totals[section][kind] = totals[section].get(kind, 0) + 1
    head = ["op", "becomes", "kind", "interpreter", "CPU", "VJP", "GPU"]
    out = []
    out.append("# PyTorch's Core ATen opset in Kiln\n")
    out.append("<!-- Generated by scripts/gen-core-aten-table.py from "
               "python/kiln/core_aten_ops.txt,\n     kiln/_aten.py and "
               "test/python/core_aten_cases.py: do not edit. -->\n")
    out.append(
        "Every operator of PyTorch's Core ATen opset (the `core` operators "
        "of\n`native_functions.yaml`, as PyTorch's \"IRs\" page lists them; "
        "the list and its\nsource are in `python/kiln/core_aten_ops.txt`), "
        "and the other operators that\nPyTorch 1.13's AOT and `make_fx` "
        "graphs contain, with what Kiln's ATen-level\nimporter "
        "(`python/kiln/_aten.py`, [python.md](python.md#the-fx-backend-"
        "entry-point))\nmakes of it. Columns:\n")
    out.append(
        "* **becomes**: the kt ops the converter emits for the operator's "
        "case\n  (`test/python/core_aten_cases.py`; `kt.constant` and "
        "`kt.cast` not shown),\n  or why it is not supported "
        "(`_aten.UNSUPPORTED`, the one place for reasons);\n"
        "* **kind**: `kt op` (one kt op) or `decomposition` (several);\n"
        "* **interpreter**, **CPU**: each of those kt ops has an interpreter "
        "kernel\n  (`lib/Interpreter`) and a lowering to `linalg` "
        "(`lib/Conversion/KTToLinalg`);\n"
        "* **VJP**: each has a vector-Jacobian rule (`lib/Autodiff`); "
        "`zero`: all its\n  rules are the zero gradient (comparisons, "
        "rounding, integer results);\n"
        "* **GPU**: `kiln-nvptx` lowers them, except the ops "
        "[gpu.md](gpu.md#ops-without-a-gpu-lowering)\n  lists.\n")
    out.append(
        "`test/python/test_core_aten.py` fails when an operator has neither "
        "a converter\nwith a case nor a reason, runs every case through "
        "the interpreter (and a fixed\nsample, or with `KILN_SLOW_TESTS=1` "
        "every case, through the `cpu` backend)\nagainst eager PyTorch, and "
        "checks that this file is up to date.\n")
    for section, title in (("core", "Core ATen operators"),
                           ("aot", "Other operators of AOT graphs "
                            "(PyTorch 1.13)")):
        t = totals[section]
        n = len(sections[section])
        out.append("## %s\n" % title)
        out.append("%d operators: %d a kt op, %d decompositions, %d not "
                   "supported.\n" % (n, t.get("kt op", 0),
                                     t.get("decomposition", 0),
                                     t.get("unsupported", 0)))
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for r in sections[section]:
            out.append("| " + " | ".join(r) + " |")
        out.append("")
    out.append("## Arguments a supported op refuses\n")
    out.append(
        "The messages of `kiln.Unsupported` that the converters in "
        "`kiln/_aten.py` raise,\nread from their source and from the "
        "`kiln/_ops.py` / `kiln/_aten.py` functions\nthey call: their "
        "private helpers (`_float_pool`, `_conv_dtype`, ...,\n"
        "transitively) and the torch-level converter an op delegates to "
        "(`avg_pool3d`\nfor `aten.avg_pool3d`, `conv2d` for "
        "`aten.convolution`), with its private\nhelpers; dtypes Kiln "
        "refuses on purpose appear here (`\"...\" not implemented\nfor "
        "...`, PyTorch's message where PyTorch refuses too). Generic "
        "helpers (shape\nand argument checks shared by every op) are not "
        "followed. Outside these, each\nop above takes what PyTorch "
        "takes.\n")
    out.append("| op | refused |")
    out.append("|---|---|")
    for name, _schema, _section in _aten.core_ops():
        msgs = refusals(name)
        if msgs:
            out.append("| `aten.%s` | %s |" % (name, "<br>".join(
                m.replace("|", "\\|").replace("<", "&lt;").replace(
                    ">", "&gt;") for m in msgs)))
    out.append("")
    return "\n".join(out)


def main():
    text = generate()
    if "--check" in sys.argv[1:]:
        with open(DOC) as f:
            old = f.read()
        if old != text:
            print("docs/core-aten.md is out of date: run "
                  "scripts/gen-core-aten-table.py", file=sys.stderr)
            return 1
        print("docs/core-aten.md is up to date")
        return 0
    with open(DOC, "w") as f:
        f.write(text)
    print("wrote docs/core-aten.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
