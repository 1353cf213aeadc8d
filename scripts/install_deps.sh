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
  clang libclang-rt-14-dev llvm >/dev/null
