'use strict';
// The one list of supported model types (lib/model/families/registry.mjs, derived from the family
// files) as the package entries export it, and the ModelType union of the shipped declarations: the
// same types, so a family added without its type in the declarations fails here; and a strict
// TypeScript consumer reads SUPPORTED_MODEL_TYPES as ModelType values.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const ts = require('typescript');
const { modelModules } = require('./model-modules');
const { typeCheck } = require('./type-check');

const ROOT = path.join(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
const { SUPPORTED_MODEL_TYPES } = modelModules(); // the registry's list (config.mjs re-exports it)

// The string literals of `export type ModelType = 'a' | 'b' | …;` in a declaration file.
function modelTypeUnion(file) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const alias = source.statements.find((s) => ts.isTypeAliasDeclaration(s) && s.name.text === 'ModelType');
  expect(alias).toBeDefined();
  const members = ts.isUnionTypeNode(alias.type) ? alias.type.types : [alias.type];
  return members.map((m) => {
    expect(ts.isLiteralTypeNode(m) && ts.isStringLiteral(m.literal)).toBe(true);
    return m.literal.text;
  });
}

test('the registry lists each model type once, llama-shaped ones among them', () => {
  expect(SUPPORTED_MODEL_TYPES).toEqual(expect.arrayContaining(['llama', 'gpt2', 'bert']));
  expect(new Set(SUPPORTED_MODEL_TYPES).size).toBe(SUPPORTED_MODEL_TYPES.length);
});

test.each(['index.d.ts', 'index.d.mts', 'index.d.cts'])(
  "dist/%s's ModelType is exactly the registry's list",
  (name) => {
    expect(modelTypeUnion(path.join(DIST, name)).sort()).toEqual([...SUPPORTED_MODEL_TYPES].sort());
  },
);

test('require, import (Node) and the browser entry export the same frozen list', () => {
  const cjs = require(path.join(DIST, 'index.cjs')).SUPPORTED_MODEL_TYPES;
  expect([...cjs]).toEqual([...SUPPORTED_MODEL_TYPES]);
  expect(Object.isFrozen(cjs)).toBe(true);
  const script = `
    import { SUPPORTED_MODEL_TYPES as browser } from ${JSON.stringify(path.join(DIST, 'index.mjs'))};
    import { SUPPORTED_MODEL_TYPES as node } from ${JSON.stringify(path.join(DIST, 'node.mjs'))};
    console.log(JSON.stringify([browser, node]));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(JSON.parse(out)).toEqual([[...SUPPORTED_MODEL_TYPES], [...SUPPORTED_MODEL_TYPES]]);
});

test('a strict TypeScript consumer reads SUPPORTED_MODEL_TYPES as readonly ModelType values', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-model-types-'));
  try {
    fs.mkdirSync(path.join(tmp, 'node_modules'));
    fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'wasm-attention'), 'dir');
    fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'model-types', private: true }));
    const good = path.join(tmp, 'good.ts');
    fs.writeFileSync(
      good,
      `import { SUPPORTED_MODEL_TYPES } from 'wasm-attention';
import type { ModelType } from 'wasm-attention';
export const types: readonly ModelType[] = SUPPORTED_MODEL_TYPES;
export const known = (t: string): boolean => (SUPPORTED_MODEL_TYPES as readonly string[]).includes(t);
`,
    );
    expect(typeCheck(good).problems).toEqual([]);
    const bad = path.join(tmp, 'bad.ts');
    fs.writeFileSync(
      bad,
      `import { SUPPORTED_MODEL_TYPES } from 'wasm-attention';\nSUPPORTED_MODEL_TYPES.push('olmo');\n`,
    );
    expect(typeCheck(bad).problems.join('\n')).toMatch(/push/);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
