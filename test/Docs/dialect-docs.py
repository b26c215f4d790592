# RUN: %python %s %kiln_src_root/docs/dialects %kiln_src_root/include
# Tests the generated dialect references (docs/dialects/*.md, made from the
# ODS definitions by scripts/update-docs.sh, whose --check keeps them equal
# to what the .td files generate):
# * no TableGen record name (a def, defvar or class of include/**/*.td, or
#   any KT_/KG_ identifier) appears in them outside the "Traits:" and
#   "Interfaces:" lines (which list records): such a word is text TableGen
#   left unexpanded (a defvar on the right of `#` is read as its own name:
#   the docs printed "KT_ReduceDimDoc" instead of the shared text);
# * every ```mlir example parses and verifies with kiln-opt, and every
#   attribute and type syntax the docs show (`#kt.approximate<`,
#   `!kt.ref<`) is used by an example that does.
#
# An example that is a whole module (a kg.program or func.func) is parsed as
# it is. A fragment (a few ops) is wrapped: the values it uses without
# defining become arguments, with the types its own type annotations give
# them (`%r = kt.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> ...` makes
# %a and %b arguments of those types), in a kg.program when it holds kg ops,
# else in a func.func. All examples of a file go to kiln-opt in one run
# (-split-input-file), and a failing example is reported with its op's
# heading and the diagnostic.

import os
import re
import subprocess
import sys

from kiln_testing import KILN_OPT, Suite

s = Suite(__file__)
DOC_DIR, TD_DIR = sys.argv[1], sys.argv[2]

SSA = re.compile(r"%[A-Za-z_0-9$.]+")


def split_top(text, sep=","):
    """Splits at `sep` outside (), <>, [], {}."""
    parts, depth, cur = [], 0, ""
    for c in text:
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return parts


def strip_braces(text):
    """`text` without {...} groups (attribute dictionaries)."""
    out, depth = "", 0
    for c in text:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0:
            out += c
    return out


def operand_types(type_text):
    """The operand types of an op's trailing type annotation: the list of
    a functional type `(A, B) -> R`, else the types before `->`."""
    t = type_text.strip()
    if t.startswith("("):
        depth = 0
        for i, c in enumerate(t):
            depth += c == "("
            depth -= c == ")"
            if depth == 0:
                return split_top(t[1:i])
    return split_top(t.split(" -> ")[0])


def statements(lines):
    """The lines of an example joined into statements (a line starting
    with ':' continues the one before)."""
    out = []
    for line in lines:
        if line.strip().startswith(":") and out:
            out[-1] += " " + line.strip()
        else:
            out.append(line.rstrip())
    return out


def wrap(example):
    """The example as a module to parse, or (None, why)."""
    lines = example.splitlines()
    first = next((l.strip() for l in lines if l.strip()), "")
    if re.match(r"(kg\.program|func\.func|module)\b", first):
        return example, None
    defined, arg_types, order = set(), {}, []
    for st in statements(lines):
        body = st.strip()
        lhs = ""
        m = re.match(r"(%[^=]*?)\s*=\s*(?=[a-z])", body)
        if m and not body.startswith("^"):
            lhs, body = m.group(1), body[m.end():]
            for name in SSA.findall(lhs):
                defined.add(name.split(":")[0])
        bb = re.match(r"\^bb\d*\((.*)\):", body)
        if bb:
            for arg in split_top(bb.group(1)):
                defined.add(arg.split(":")[0].strip())
            continue
        # Operands: the SSA names before the type annotation, outside the
        # attribute dictionary; types: the annotation's operand list.
        head, colon, types = strip_braces(body).partition(" : ")
        uses = [u.split("#")[0] for u in SSA.findall(head)]
        tys = operand_types(types) if colon else []
        for i, u in enumerate(uses):
            if u in defined or u in arg_types:
                continue
            if len(tys) != len(uses):
                return None, ("cannot tell the type of %s in %r" % (u, st))
            arg_types[u] = tys[i]
            order.append(u)
    args = ", ".join("%s: %s" % (u, arg_types[u]) for u in order)
    indented = "\n".join("  " + l for l in lines)
    if re.search(r"\bkg\.(?!is_compiling\b)", example):
        return ("kg.program @doc_example(%s) {\n%s\n  kg.return\n}\n"
                % (args, indented)), None
    return ("func.func @doc_example(%s) {\n%s\n  return\n}\n"
            % (args, indented)), None


def examples(path):
    """(heading, text) of each ```mlir block, and the attribute/type syntax
    prefixes (`#kt.approximate<`) of the Syntax blocks."""
    out, syntaxes = [], []
    heading, block, in_block, in_syntax = "", None, False, False
    with open(path) as f:
        for line in f:
            if block is None and re.match(r"#+ ", line):
                heading = line.strip("# \n")
            if block is not None:
                if line.startswith("```"):
                    out.append((heading, "".join(block)))
                    block = None
                else:
                    block.append(line)
                continue
            if line.startswith("```mlir"):
                block = []
            elif line.startswith("Syntax"):
                in_syntax = True
                m = re.search(r"`([#!][a-z_]+\.[a-z_]+)`", line)
                if m:  # a parameterless one: Syntax: `#kt.name`
                    syntaxes.append((heading, m.group(1)))
                    in_syntax = False
            elif in_syntax and re.match(r"[#!][a-z_]+\.[a-z_]+<", line):
                syntaxes.append((heading, line.strip()))
                in_syntax = False
    return out, syntaxes


def record_names(root):
    """The names of the records (def, defvar, class, multiclass) of the .td
    files under `root`."""
    names = set()
    decl = re.compile(r"^\s*(?:def|defvar|class|multiclass)\s+([A-Za-z_]\w*)",
                      re.M)
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".td"):
                with open(os.path.join(dirpath, f)) as td:
                    names.update(decl.findall(td.read()))
    return names


RECORDS = record_names(TD_DIR)
s.record("record names found", len(RECORDS) > 100, sorted(RECORDS))
WORD = re.compile(r"\b[A-Za-z_]\w*\b")

for name in sorted(os.listdir(DOC_DIR)):
    if not name.endswith(".md"):
        continue
    path = os.path.join(DOC_DIR, name)
    unexpanded = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            # mlir-tblgen lists an op's traits and interfaces by record name.
            if re.match(r"(Traits|Interfaces): ", line):
                continue
            bad = sorted({w for w in WORD.findall(line)
                          if w in RECORDS or re.match(r"K[TG]_[A-Za-z]", w)})
            if bad:
                unexpanded.append("%s:%d: %s in: %s" % (name, n, bad,
                                                         line.strip()))
    s.record("%s has no TableGen record name" % name, not unexpanded,
             "\n".join(unexpanded))
    exs, syntaxes = examples(path)
    s.record("%s has examples" % name, len(exs) > 0, "no ```mlir block")
    modules, labels = [], []
    for i, (heading, text) in enumerate(exs):
        module, why = wrap(text)
        label = "%s example %d (%s)" % (name, i, heading)
        if module is None:
            s.record(label, False, why + "\n" + text)
            continue
        modules.append(module)
        labels.append((label, text, module))
    # One kiln-opt run per file; each example in its own split, and each
    # split's diagnostics carry the line of the combined input.
    combined, starts = "", []
    for m in modules:
        starts.append(combined.count("\n") + 1)
        combined += m + "// -----\n"
    p = subprocess.run([KILN_OPT, "-", "-split-input-file", "-o", os.devnull],
                       input=combined, capture_output=True, text=True)
    failed_lines = [int(m.group(1)) for m in
                    re.finditer(r"^<stdin>:(\d+):\d+: error", p.stderr, re.M)]
    parsed = ""
    for (label, text, module), start in zip(labels, starts):
        end = start + module.count("\n")
        errs = [l for l in failed_lines if start <= l < end]
        ok = not errs
        msg = ""
        if not ok:
            msg = "\n".join(l for l in p.stderr.splitlines()
                            if any(l.startswith("<stdin>:%d:" % e)
                                   for e in errs)) + "\n" + module
        s.record(label, ok, msg)
        if ok:
            parsed += text
    s.record("%s: kiln-opt ran" % name, p.returncode == 0 or failed_lines,
             p.stderr)
    # Every syntax shown is used by an example that parses.
    for heading, syntax in syntaxes:
        prefix = syntax.strip()
        s.record("%s: syntax of %s (%s) is used by an example" % (
            name, heading, prefix), prefix in parsed,
            "no parsing example uses %r" % prefix)

s.finish()
