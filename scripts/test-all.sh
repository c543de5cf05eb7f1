#!/usr/bin/env bash
# npm test: the native GoogleTest suite (ctest), then Jest (engine API + real Chromium), then one
# closing line with the combined counts, "N passed, N failed", that any CI reader understands.
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
const ctest = fs.readFileSync(ctestFile, "utf8").match(/tests passed, (\d+) tests failed out of (\d+)/);
const nativeFailed = ctest ? Number(ctest[1]) : 1;
const nativePassed = ctest ? Number(ctest[2]) - nativeFailed : 0;
let jest = { numPassedTests: 0, numFailedTests: 1 };
try { jest = JSON.parse(fs.readFileSync(jestFile, "utf8")); } catch {}
console.log(`native (ctest): ${nativePassed} passed, ${nativeFailed} failed; jest: ${jest.numPassedTests} passed, ${jest.numFailedTests} failed`);
console.log(`${nativePassed + jest.numPassedTests} passed, ${nativeFailed + jest.numFailedTests} failed`);
' "$results/ctest.txt" "$results/jest.json"

[ "$native_status" -eq 0 ] && [ "$jest_status" -eq 0 ]
