#!/usr/bin/env bash
# Native GoogleTest run of the C++ core (the same kernels the wasm build ships), via ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/native -j"$(nproc)"
ctest --test-dir build/native --output-on-failure
