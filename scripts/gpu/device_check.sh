#!/bin/bash
# The GPU check, in one command, on the GPU machine (docs/gpu.md, "Running
# on a GPU"). Needs there: CMake, a C++ compiler, the CUDA toolkit's
# headers, an NVIDIA driver, Python 3 with PyTorch (CUDA) and NumPy; no
# LLVM or MLIR. Needs from here, in .gpu/ (scripts/gpu/prepare.sh):
# corpus.tar.xz (test programs compiled for the GPU + the interpreter's
# results) and bench/*.so (bench/gpu/*.mlir compiled for the GPU).
#
#   scripts/gpu/device_check.sh            # results under $OUT (default /tmp/kiln-gpu-out)
#
# Steps: (1) build libkiln_rt (with its CUDA runtime) and runtime/cuda's
# check program from runtime/ alone; (2) the check program (a PTX kernel
# run through the mgpu* functions, a bad module's JIT error); (3) every
# corpus case through libkiln_rt on the GPU against the interpreter
# (scripts/gpu/run_corpus.py); (4) bench/gpu_bench.py. Exit status: that of
# the corpus run (1 when a case fails).
set -u
OUT=${OUT:-/tmp/kiln-gpu-out}
mkdir -p "$OUT"
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUT/device_check.log") 2>&1
cd "$(dirname "$0")/../.."
echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
echo "== build libkiln_rt (runtime/ alone)"
G=; command -v ninja > /dev/null && G="-G Ninja"
cmake -S runtime -B /tmp/kiln-rt $G -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/kiln-rt -j 8 >> "$OUT/build.log" 2>&1 &&
  cmake -S runtime/cuda -B /tmp/kiln-cuda-rt $G -DCMAKE_BUILD_TYPE=Release >> "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/kiln-cuda-rt -j 8 >> "$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 2; }
grep "kiln_rt:" "$OUT/build.log"
LIB=/tmp/kiln-rt/libkiln_rt.so.0
echo "== runtime/cuda check program"
/tmp/kiln-cuda-rt/kiln-cuda-rt-check
echo "== the same without cuBLAS (KILN_CUBLAS names a missing file)"
KILN_CUBLAS=/nonexistent/libcublas.so /tmp/kiln-cuda-rt/kiln-cuda-rt-check | grep gemm
echo "== run-time errors and library calls (scripts/gpu/run_checks.py)"
python3 scripts/gpu/run_checks.py --package .gpu/checks/checks.so --library "$LIB"
checks=$?
echo "== corpus"
rm -rf /tmp/kiln-corpus && mkdir -p /tmp/kiln-corpus &&
  tar -xJf .gpu/corpus.tar.xz -C /tmp/kiln-corpus || exit 2
python3 scripts/gpu/run_corpus.py /tmp/kiln-corpus/corpus --library "$LIB" \
  --json "$OUT/corpus.json" --workers "${KILN_GPU_WORKERS:-8}"
rc=$?
[ $checks != 0 ] && rc=1
if [ "${KILN_GPU_BENCH:-1}" != 0 ]; then
  echo "== bench"
  timeout "${KILN_GPU_BENCH_TIMEOUT:-240}" python3 bench/gpu_bench.py \
    --packages .gpu/bench --library "$LIB" ${KILN_GPU_BENCH_ARGS:-}
fi
exit $rc
