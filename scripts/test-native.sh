#!/usr/bin/env bash
# Native GoogleTest runs of the C++ core (the same kernels the wasm build ships), via ctest: a
# Release build, then the same tests built with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DWA_SANITIZE=ON), which stop at the first invalid access, leak or undefined operation.
# Both runs always happen; the exit status is non-zero when either failed.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
status=0
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build build/native -j"$jobs" &&
  ctest --test-dir build/native --output-on-failure || status=1

echo "native tests under AddressSanitizer + UndefinedBehaviorSanitizer (build/native-asan):"
cmake -S . -B build/native-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWA_SANITIZE=ON >/dev/null &&
  cmake --build build/native-asan -j"$jobs" &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build/native-asan --output-on-failure || status=1
exit $status
