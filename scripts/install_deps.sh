#!/usr/bin/env bash
# Installs the Debian 12 packages flashio builds with (run as root). The CUDA toolkit is not a
# Debian package here: it is preinstalled at /usr/local/cuda; without it the kernels, the
# profiler, `flashio bench` and `flashio profile` are left out of the build. clang, its runtime
# libraries and llvm (llvm-symbolizer) build and report the sanitizer and fuzzing build
# (scripts/test_sanitized.sh, docs/fuzzing.md).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config \
  libeigen3-dev nlohmann-json3-dev libboost-program-options-dev catch2 \
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev libqt6svg6-dev libgl-dev \
  fonts-dejavu-core \
  clang libclang-rt-14-dev llvm python3-pip >/dev/null

# cuobjdump, which the kernel catalog's register check runs on the built kernels
# (tests/kernels/test_catalog_resources.cpp, docs/kernels.md "Catalog"), is not part of the
# preinstalled toolkit: the PyPI wheel's binary goes into the toolkit's bin/, where CMake's
# CUDAToolkit finds it. A newer cuobjdump reads the CUDA 13.0 kernels; 13.2.51 is the oldest
# 13.x wheel.
if [ -x /usr/local/cuda/bin/nvcc ] && [ ! -x /usr/local/cuda/bin/cuobjdump ]; then
  cuobjdump_dir=$(mktemp -d)
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
    --target "$cuobjdump_dir" nvidia-cuda-cuobjdump==13.2.51
  install -m 755 "$cuobjdump_dir/nvidia/cu13/bin/cuobjdump" /usr/local/cuda/bin/cuobjdump
  rm -rf "$cuobjdump_dir"
fi
