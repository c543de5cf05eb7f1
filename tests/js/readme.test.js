'use strict';
// The documents' usage examples run, so they never rot: in the README and in every docs/*.md, under
// every heading that contains "Usage", the first ```js block runs in a child node process that
// resolves 'wasm-attention' to this repository.
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const DOCUMENTS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** Line indices of the headings that contain "Usage". */
function usageHeadings(markdown) {
  const lines = markdown.split(/\r?\n/);
  const found = [];
  lines.forEach((l, i) => {
    if (/^#{1,6}\s.*usage/i.test(l)) found.push(i);
  });
  return found;
}

/** The first ```js / ```javascript / ```mjs / ```cjs block after the heading at line index h. */
function usageSnippet(document, markdown, h) {
  const lines = markdown.split(/\r?\n/);
  for (let i = h + 1; i < lines.length; i++) {
    const open = lines[i].match(/^\s*(```+)\s*(js|javascript|mjs|cjs)\b/i);
    if (!open) continue;
    const body = [];
    for (let j = i + 1; j < lines.length; j++) {
      if (lines[j].trim().startsWith(open[1]))
        return { code: body.join('\n'), line: i + 1, lang: open[2].toLowerCase() };
      body.push(lines[j]);
    }
    throw new Error(`${document}: the code block at line ${i + 1} is not closed`);
  }
  throw new Error(`${document}: no \`\`\`js block after the "Usage" heading at line ${h + 1}`);
}

/** ESM when the snippet imports/exports (or is marked mjs); otherwise CommonJS inside an async function. */
function asModule({ code, lang }) {
  const esm = lang === 'mjs' || (lang !== 'cjs' && /^\s*(import\s|export\s)/m.test(code));
  if (esm) return { file: 'usage.mjs', text: code };
  return {
    file: 'usage.cjs',
    text: `(async () => {\n${code}\n})().catch((e) => { console.error(e); process.exit(1); });\n`,
  };
}

let tmp;
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const texts = new Map(DOCUMENTS.map((d) => [d, fs.readFileSync(path.join(ROOT, d), 'utf8')]));
/** Every usage example: [document, heading text, heading's line index]. */
const usages = DOCUMENTS.flatMap((d) => {
  const lines = texts.get(d).split(/\r?\n/);
  return usageHeadings(texts.get(d)).map((h) => [d, lines[h], h]);
});

test('README.md exists and has Usage examples; docs/attention.md has the rest', () => {
  expect(texts.get('README.md')).not.toBe('');
  // The README: attention, a model. docs/attention.md: KV-cache decoding, loading weights, reduced precision.
  expect(usages.filter(([d]) => d === 'README.md').length).toBeGreaterThanOrEqual(2);
  expect(usages.filter(([d]) => d === 'docs/attention.md').length).toBeGreaterThanOrEqual(3);
  expect(usages.length).toBeGreaterThanOrEqual(5);
});

test.each(usages)('%s: "%s" runs with exit code 0', (document, _, h) => {
  const snippet = usageSnippet(document, texts.get(document), h);
  expect(snippet.code).toMatch(/wasm-attention/);
  if (!tmp) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-readme-'));
    fs.mkdirSync(path.join(tmp, 'node_modules'));
    fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'wasm-attention'), 'dir');
    fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'readme-check', private: true }));
    // The file the weight-loading example reads: a small LLaMA-style attention layer in F16.
    fs.copyFileSync(
      path.join(ROOT, 'tests', 'fixtures', 'safetensors', 'llama-gqa-f16.safetensors'),
      path.join(tmp, 'model.safetensors'),
    );
    // The folder the model examples load: a tiny sharded llama checkpoint with its tokenizer.
    fs.cpSync(path.join(ROOT, 'tests', 'fixtures', 'models', 'llama-gqa-llama3-sharded'), path.join(tmp, 'my-model'), {
      recursive: true,
    });
  }
  const mod = asModule(snippet);
  fs.writeFileSync(path.join(tmp, mod.file), mod.text);
  const r = spawnSync(process.execPath, [mod.file], { cwd: tmp, encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) {
    throw new Error(
      `${document} block at line ${snippet.line} (run as ${mod.file}) exited ${r.status}${r.signal ? ` (${r.signal})` : ''}:\n` +
        `${r.stderr}\n--- stdout ---\n${r.stdout}\n--- code ---\n${mod.text}`,
    );
  }
});
