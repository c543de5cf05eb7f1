#!/usr/bin/env bash
# npm test: the native GoogleTest suite (ctest: a Release build and an ASan + UBSan build), then Jest
# (engine API + real Chromium), then one closing line with the combined counts of every run,
# "N passed, N failed", that any CI reader understands.
set -uo pipefail
cd "$(dirname "$0")/.."
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

bash scripts/test-native.sh | tee "$results/ctest.txt"
native_status=${PIPESTATUS[0]}
npx jest --json --outputFile="$results/jest.json" "$@"
jest_status=$?

node -e '
const fs = require("fs");
const [ctestFile, jestFile] = process.argv.slice(1);
// One summary line per ctest run (Release, then sanitizers); a run without one (a build that
// failed) counts as one failure.
const NATIVE_RUNS = 2;
const runs = [...fs.readFileSync(ctestFile, "utf8").matchAll(/tests passed, (\d+) tests failed out of (\d+)/g)];
const nativeFailed = runs.reduce((n, m) => n + Number(m[1]), 0) + Math.max(0, NATIVE_RUNS - runs.length);
const nativePassed = runs.reduce((n, m) => n + Number(m[2]) - Number(m[1]), 0);
let jest = { numPassedTests: 0, numFailedTests: 1 };
try { jest = JSON.parse(fs.readFileSync(jestFile, "utf8")); } catch {}
console.log(`native (ctest, ${runs.length} of ${NATIVE_RUNS} runs): ${nativePassed} passed, ${nativeFailed} failed; jest: ${jest.numPassedTests} passed, ${jest.numFailedTests} failed`);
console.log(`${nativePassed + jest.numPassedTests} passed, ${nativeFailed + jest.numFailedTests} failed`);
' "$results/ctest.txt" "$results/jest.json"

[ "$native_status" -eq 0 ] && [ "$jest_status" -eq 0 ]
