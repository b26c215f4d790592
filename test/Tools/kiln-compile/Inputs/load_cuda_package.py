# Loads a CUDA package with libkiln_rt (build/lib) and prints the outcome:
# without a driver, KilnRtError with libkiln_rt's reason. Used by nvptx.mlir.
import os
import sys

sys.path.insert(0, os.path.join(os.environ["KILN_TOOLS_DIR"], "..", "..",
                                "runtime", "python"))
import kiln_rt  # noqa: E402

kiln_rt.load_library(os.path.join(os.environ["KILN_TOOLS_DIR"], "..", "lib",
                                  "libkiln_rt.so.0"))
try:
    p = kiln_rt.Package(sys.argv[1])
    print("loaded", p.entries, p.manifest["target"]["device"])
except kiln_rt.KilnRtError as e:
    print("KilnRtError:", e)
