#!/usr/bin/env bash
# Compiler launcher for the relaxed builds' kernels (see CMakeLists.txt). CMake runs it as
#   relaxed-cxx.sh <clang++> em++ <compile arguments>
# Emscripten 3.1.6 drives clang 14, which lacks the final relaxed-SIMD builtins, so the kernels go
# to a newer clang instead, with the flags em++ would give its own clang: the target and sysroot
# (`em++ --cflags`) and, for -msse4.1, the defines by which Emscripten's SSE headers (hence xsimd's
# SSE path) map onto SIMD128. The objects link with the rest through Emscripten's own wasm-ld.
set -euo pipefail
clang=$1
emxx=$2
shift 2
args=()
threads=()
for arg in "$@"; do
  case $arg in
    -msse4.1) args+=(-D__SSE__=1 -D__SSE2__=1 -D__SSE3__=1 -D__SSSE3__=1 -D__SSE4_1__=1) ;;
    -pthread) threads=(-pthread); args+=("$arg") ;;
    *) args+=("$arg") ;;
  esac
done
# shellcheck disable=SC2207  # em++ prints one line of space-separated flags without quoting
cflags=($("$emxx" --cflags "${threads[@]}"))
exec "$clang" "${cflags[@]}" "${args[@]}"
