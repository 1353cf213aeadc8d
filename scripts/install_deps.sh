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

# Two CUDA tools the preinstalled toolkit lacks, from their PyPI wheels into the toolkit's bin/,
# where CMake's CUDAToolkit finds them (13.2.51, the oldest 13.x wheels, read the CUDA 13.0 kernels):
# - cuobjdump, which the kernel catalog's register check runs on the built kernels
#   (tests/kernels/test_catalog_resources.cpp, docs/kernels.md "Catalog");
# - nvdisasm, which cuobjdump runs to print SASS: the catalog's step-loop check reads each
#   kernel's instructions with it (tests/kernels/test_step_loops.cpp, docs/time_model.md "Issue slots").
install_cuda_tool() {
  local tool=$1 dir
  if [ -x /usr/local/cuda/bin/nvcc ] && [ ! -x "/usr/local/cuda/bin/$tool" ]; then
    dir=$(mktemp -d)
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
      --target "$dir" "nvidia-cuda-$tool==13.2.51"
    install -m 755 "$dir/nvidia/cu13/bin/$tool" "/usr/local/cuda/bin/$tool"
    rm -rf "$dir"
  fi
}
install_cuda_tool cuobjdump
install_cuda_tool nvdisasm
