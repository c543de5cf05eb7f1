'use strict';
// Every JavaScript example in the README and docs/ compiles under `tsc --strict` against the
// package's own declarations, so the types agree with what the documents say the package accepts.
// The examples are JavaScript, checked as such (checkJs): every strict check applies but
// noImplicitAny, since plain JavaScript cannot annotate its callbacks' parameters.
// An example may use names it leaves to the reader (embedDim, query, attn, …): those are declared
// with the types the contract gives them, and any other unknown name fails the test. One gap:
// checkJs takes an assignment to a property of an unknown name (`chip.style.color = …`) for the
// declaration of an expando object, so a name that is only ever assigned through is not caught.
const fs = require('fs');
const os = require('os');
const path = require('path');
const ts = require('typescript');

const ROOT = path.join(__dirname, '..', '..');
const DOCUMENTS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

// The names examples use without defining them, typed as the contract says.
const FREE_NAMES = {
  attn: "import('wasm-attention').Attention",
  embedDim: 'number',
  numHeads: 'number',
  numKvHeads: 'number',
  headDim: 'number',
  kdim: 'number',
  vdim: 'number',
  batch: 'number',
  tgtLen: 'number',
  srcLen: 'number',
  dModel: 'number',
  seqLen: 'number',
  scale: 'number',
  n: 'number',
  query: 'Float32Array',
  key: 'Float32Array',
  value: 'Float32Array',
  x: 'Float32Array',
  prompt: 'Float32Array',
  nextToken: 'Float32Array',
  wq: 'Float32Array',
  wk: 'Float32Array',
  wv: 'Float32Array',
  bq: 'Float32Array',
  bk: 'Float32Array',
  bv: 'Float32Array',
  inProjWeight: 'Float32Array',
  inProjBias: 'Float32Array',
  qProjWeight: 'Float32Array',
  kProjWeight: 'Float32Array',
  vProjWeight: 'Float32Array',
  outProjWeight: 'Float32Array',
  outProjBias: 'Float32Array',
  attnMask: 'Uint8Array',
  keyPaddingMask: 'Uint8Array',
  isCausal: 'boolean',
  needWeights: 'boolean',
  averageAttnWeights: 'boolean',
};
const CANNOT_FIND_NAME = new Set([2304, 2552, 2582, 18004]);

/** Every ```js / javascript / mjs / cjs / ts block: { document, line, lang, code }. */
function examples() {
  const found = [];
  for (const document of DOCUMENTS) {
    const lines = fs.readFileSync(path.join(ROOT, document), 'utf8').split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const open = lines[i].match(/^\s*(```+)\s*(js|javascript|mjs|cjs|ts)\s*$/i);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && l.trim().startsWith(open[1]));
      found.push({ document, line: i + 1, lang: open[2].toLowerCase(), code: lines.slice(i + 1, end).join('\n') });
      i = end;
    }
  }
  return found;
}

// Each example is checked as the JavaScript it is (checkJs, strict): CommonJS (.cjs) when it requires
// the package and does not import it, else an ES module (.mjs). An example that shows both forms on
// two lines (`import …` and `const … = require(…)`) is checked as the ES module, the require line left
// out. A URL import (a CDN) is typed as the package.
function asChecked(example, index) {
  let code = example.code.replace(/from\s+'https?:\/\/[^']*\/dist\/index\.mjs'/g, "from 'wasm-attention'");
  const imports = /^\s*import\s[^;]*from\s+'wasm-attention'/m.test(code);
  if (imports)
    code = code
      .split('\n')
      .filter((l) => !/^\s*const\s*\{[^}]*\}\s*=\s*require\('wasm-attention'\)/.test(l))
      .join('\n');
  const commonjs = !imports && /require\(/.test(code);
  return { file: `example-${index}.${commonjs ? 'cjs' : 'mjs'}`, text: commonjs ? code : `${code}\nexport {};\n` };
}

// A free name, declared in the example's own scope with its contract type (JSDoc, as the example is
// JavaScript). `prompt` is also a DOM global, which would otherwise hide that the example left it free.
const declaration = (name) => `const ${name} = /** @type {${FREE_NAMES[name]}} */ (/** @type {unknown} */ (null));`;
const SHADOWED_GLOBALS = ['prompt'];
const definesName = (code, name) => new RegExp(`\\b(const|let|var|function)\\s+${name}\\b`).test(code);

const OPTIONS = {
  strict: true,
  noImplicitAny: false,
  noEmit: true,
  allowJs: true,
  checkJs: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  types: ['node'],
  skipLibCheck: true,
};

// Compiles the files; declares the free names each one uses and compiles again. Returns the
// diagnostics that remain, by file.
function compile(dir, files) {
  const declared = new Map(
    files.map((f) => [
      f.file,
      new Set(SHADOWED_GLOBALS.filter((n) => new RegExp(`\\b${n}\\b`).test(f.text) && !definesName(f.text, n))),
    ]),
  );
  for (let round = 0; round < 2; round++) {
    for (const f of files) {
      const declarations = [...declared.get(f.file)].map(declaration).join(' ');
      fs.writeFileSync(path.join(dir, f.file), `${declarations}\n${f.text}`);
    }
    const program = ts.createProgram(
      files.map((f) => path.join(dir, f.file)),
      OPTIONS,
    );
    const problems = new Map(files.map((f) => [f.file, []]));
    let added = false;
    for (const d of ts.getPreEmitDiagnostics(program)) {
      const file = d.file ? path.basename(d.file.fileName) : '(global)';
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      const name = CANNOT_FIND_NAME.has(d.code) && /'([^']+)'/.exec(text)?.[1];
      if (round === 0 && name && Object.hasOwn(FREE_NAMES, name) && declared.has(file)) {
        declared.get(file).add(name);
        added = true;
      } else {
        if (!problems.has(file)) problems.set(file, []);
        problems.get(file).push(`TS${d.code}: ${text}`);
      }
    }
    if (!added) return problems;
  }
  throw new Error('unreachable');
}

let tmp;
let problems;
const all = examples();
const files = all.map(asChecked);

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-doc-types-'));
  fs.mkdirSync(path.join(tmp, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'wasm-attention'), 'dir');
  fs.symlinkSync(path.join(ROOT, 'node_modules', '@types'), path.join(tmp, 'node_modules', '@types'), 'dir');
  fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'doc-types-check', private: true }));
  problems = compile(tmp, files);
}, 120000);
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('the documents have JavaScript examples to check', () => {
  expect(all.length).toBeGreaterThanOrEqual(7);
  expect(all.map((e) => e.document)).toEqual(expect.arrayContaining(['README.md', 'docs/API.md']));
});

test.each(all.map((e, i) => [`${e.document}:${e.line}`, i]))('%s compiles under tsc --strict', (where, i) => {
  expect([where, problems.get(files[i].file)]).toEqual([where, []]);
});

test('the check catches a mistake: a misspelt argument, a wrong type and a name never defined fail to compile', () => {
  const planted = [
    {
      file: 'planted-1.mjs',
      text: "import { createAttention } from 'wasm-attention';\nconst attn = await createAttention();\nattn.multiHeadAttention({ query: new Float32Array(4), embedDim: 4, numHeads: 1, outProjWeight: new Float32Array(16), needweights: false });\n",
    },
    {
      file: 'planted-2.mjs',
      text: "import { createAttention } from 'wasm-attention';\nconst attn = await createAttention({ threads: '2' });\n",
    },
    {
      file: 'planted-3.mjs',
      text: "import { weightRGB } from 'wasm-attention/viz';\nconst [r, g, b] = weightRGB(0.5);\ndocument.body.append(chip, `rgb(${r}, ${g}, ${b})`);\nexport {};\n",
    },
  ];
  const found = compile(tmp, planted);
  expect(found.get('planted-1.mjs').join('\n')).toMatch(/needweights/);
  expect(found.get('planted-2.mjs').join('\n')).toMatch(/TS2322/);
  expect(found.get('planted-3.mjs').join('\n')).toMatch(/TS2304: Cannot find name 'chip'/);
});
