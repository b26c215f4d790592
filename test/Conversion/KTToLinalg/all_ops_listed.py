# RUN: %python %s %S/all-ops.mlir %S/../../../docs/dialects/kt.md
# Checks that all-ops.mlir has a function for every value-semantics op of the
# kt dialect (docs/dialects/kt.md, regenerated from the .td files), so a new
# op without a CPU lowering fails the completeness test instead of being
# silently missing from it.
import re
import sys

listed = set(re.findall(r"^func\.func @(\w+)\(", open(sys.argv[1]).read(), re.M))
ops = set(re.findall(r"^### `kt\.(\w+)`", open(sys.argv[2]).read(), re.M))
ref_ops = {o for o in ops if o.endswith("_") or o.startswith("view_")
           or o in ("alloc_ref", "load", "store")}
# kt.fusion / kt.yield are kiln-fuse's grouping, not ops to lower: their
# bodies are lowered in place and kiln-form-kernels removes them
# (test/Conversion/kiln-form-kernels*.mlir).
ops -= {"fusion", "yield"}
missing = sorted(ops - ref_ops - listed)
if missing:
    print("value-semantics kt ops missing from all-ops.mlir: " + ", ".join(missing))
    sys.exit(1)
print("%d value-semantics ops listed (%d ref ops excluded)" % (len(ops - ref_ops), len(ref_ops)))
