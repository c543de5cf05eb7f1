'use strict';
// The house's rules, checked on the tracked tree: no shipped source file over 350 lines, no JavaScript
// function over 80 lines, every relative import resolving to a tracked file, and docs/ARCHITECTURE.md
// naming every file of the code, its scripts and benchmarks (and nothing that is gone). The measures
// live in scripts/house-rules.mjs and scripts/architecture-map.mjs, ES modules run in a child process.
const { execFileSync } = require('child_process');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');

/** Runs `expression` (an ES module expression over the two scripts' exports) and returns its JSON. */
function ask(expression) {
  const script = `import * as rules from './scripts/house-rules.mjs';
    import * as map from './scripts/architecture-map.mjs';
    console.log(JSON.stringify(await (${expression})));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out);
}

test('the measure finds a long function, its nested closures included, and passes a short one', () => {
  const body = (n) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
  const long = `export function outer() {\n  return () => {\n${body(80)}\n  };\n}\n`;
  const short = `const f = (a) => {\n${body(78)}\n};\n`;
  const spans = ask(`[rules.functionSpans(${JSON.stringify(long)}), rules.functionSpans(${JSON.stringify(short)})]`);
  expect(spans[0]).toEqual([
    { name: 'outer', line: 1, lines: 84 },
    { name: '(anonymous)', line: 2, lines: 82 },
  ]);
  expect(spans[1]).toEqual([{ name: 'f', line: 1, lines: 80 }]);
});

// The tree's measures, taken in one child process: git and the parser run once for every test below.
let tree;
beforeAll(() => {
  tree = ask(`({
    longFiles: rules.longFiles(),
    longFunctions: rules.longFunctions(),
    unresolvedImports: rules.unresolvedImports(),
    mappedCount: map.mappedFiles().length,
    unmapped: map.unmappedFiles(),
    stale: map.staleNames(),
  })`);
});

test('no shipped source file is over 350 lines', () => {
  expect(tree.longFiles).toEqual([]);
});

test('no JavaScript function in bindings/, lib/, viz/ or web/ is over 80 lines', () => {
  expect(tree.longFunctions).toEqual([]);
});

test('every relative import of the shipped JavaScript names a tracked file', () => {
  expect(tree.unresolvedImports).toEqual([]);
});

test('docs/ARCHITECTURE.md names every file of the code, scripts and benchmarks, and no file that is gone', () => {
  expect(tree.mappedCount).toBeGreaterThan(150);
  expect(tree.unmapped).toEqual([]);
  expect(tree.stale).toEqual([]);
});

// A file in the unit project must run without a build: neither it nor a local module it requires may load
// the package (mapped to dist/) or name dist/ or build/.
test('the unit project (tests/test-sets.js) loads nothing built', () => {
  const fs = require('fs');
  const { UNIT } = require('../test-sets.js');
  const needsBuild = (file, seen = new Set()) => {
    // this file names the patterns it looks for, and builds nothing
    if (seen.has(file) || file === __filename) return [];
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    const own = /require\('wasm-attention'\)|import\('wasm-attention'\)|['"/]dist['"/]|\bbuild\//.test(text)
      ? [file]
      : [];
    const local = [...text.matchAll(/require\('(\.\.?\/[\w./-]+)'\)/g)]
      .map((m) => require.resolve(path.resolve(path.dirname(file), m[1])))
      .filter((f) => f.startsWith(path.join(ROOT, 'tests')));
    return own.concat(local.flatMap((f) => needsBuild(f, seen)));
  };
  expect(UNIT.length).toBeGreaterThan(5);
  const found = UNIT.flatMap((name) => needsBuild(path.join(__dirname, `${name}.test.js`)));
  expect(found.map((f) => path.relative(ROOT, f))).toEqual([]);
  // the check sees a file that does load the package
  expect(needsBuild(path.join(__dirname, 'attention-rules.test.js')).length).toBeGreaterThan(0);
});
