#!/usr/bin/env bash
# Installs every system package Kiln needs (Debian 12, apt only). Idempotent:
# packages already present are skipped, and `apt-get update` runs only when
# something is missing.
set -euo pipefail

PKGS=(
  # compiler toolchain: LLVM/MLIR 22, clang 22, lld, ninja, ccache
  llvm-22-dev llvm-22-tools mlir-22-tools libmlir-22-dev clang-22 lld-22
  libomp-22-dev ninja-build ccache cmake
  # clang's sanitizer runtimes (ASan runs of the C API tests)
  libclang-rt-22-dev
  # test oracles and benchmark baselines
  python3-numpy python3-torch libopenblas-dev libopenblas0-pthread
  # mpmath: the reference of the special-function tests (test_bessel_ops.py)
  python3-mpmath
  # functorch.compile.min_cut_rematerialization_partition (bench/partition_bytes.py)
  python3-networkx
  # the kiln Python package: its models (torchvision) and tests (pytest)
  python3-torchvision python3-pytest python3-pytest-xdist python3-setuptools python3-pip
  # oneDNN convolutions of the CPU backend (kiln.conv_impl = "onednn"; 2.6, as PyTorch 1.13)
  libdnnl-dev
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
