#!/usr/bin/env bash
# The sanitizer build (docs/fuzzing.md): every CPU part (sim, the runner, the profiler's and the
# kernels' host code, the GUI, the tests) built by clang with AddressSanitizer and
# UndefinedBehaviorSanitizer, plus the libFuzzer harnesses; runs every test of that build (the
# GPU tests are not built without CUDA) and each harness for a short smoke time (label `fuzz`).
# CI runs it after the README's test command. Usage: scripts/test_sanitized.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-san}"
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFLASHIO_FUZZ=ON -DFLASHIO_CUDA=OFF -DFLASHIO_TESTS=ON
cmake --build "$build" -j2
# Leaks fail a test too (LeakSanitizer is on by default with AddressSanitizer); a report names
# its source lines (llvm-symbolizer, from scripts/install_deps.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
ctest --test-dir "$build" --output-on-failure -j2
