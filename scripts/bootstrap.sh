#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks for building, testing and serving.
# Quick when everything is already there, so `npm start` and `npm test` run it first.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v emcc >/dev/null 2>&1 || need_apt+=(emscripten)
# Emscripten's clang 14 cannot emit relaxed SIMD: the relaxed builds' kernels need a newer clang.
command -v clang++-19 >/dev/null 2>&1 || need_apt+=(clang-19)
[ -f /usr/include/xsimd/xsimd.hpp ] || need_apt+=(libxsimd-dev)
command -v wasm2wat >/dev/null 2>&1 || need_apt+=(wabt)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
command -v clang-format >/dev/null 2>&1 || need_apt+=(clang-format)
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
[ -d /usr/share/fonts/truetype/wqy ] || need_apt+=(fonts-wqy-microhei)

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# npm ci only when node_modules is missing or older than the lockfile.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: installing npm packages"
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
fi
