#!/usr/bin/env bash
# Builds the WebAssembly module and assembles dist/ (the package's runtime files).
# Incremental: cmake rebuilds only what changed, so this is quick when everything is fresh.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's emcc cannot find its acorn module unless NODE_PATH names where Debian put it.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
if [ ! -f build/wasm/CMakeCache.txt ]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build/wasm -j"$(nproc)"
node scripts/assemble-dist.mjs
