'use strict';
// The README's usage example runs, so it never rots: the first ```js block under a heading that
// contains "Usage" runs in a child node process that resolves 'wasm-attention' to this repository.
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const README = path.join(ROOT, 'README.md');

/** The first ```js / ```javascript / ```mjs / ```cjs block after a heading containing "Usage". */
function usageSnippet(markdown) {
  const lines = markdown.split(/\r?\n/);
  const h = lines.findIndex((l) => /^#{1,6}\s.*usage/i.test(l));
  if (h < 0) throw new Error('README.md has no heading containing "Usage"');
  for (let i = h + 1; i < lines.length; i++) {
    const open = lines[i].match(/^\s*(```+)\s*(js|javascript|mjs|cjs)\b/i);
    if (!open) continue;
    const body = [];
    for (let j = i + 1; j < lines.length; j++) {
      if (lines[j].trim().startsWith(open[1])) return { code: body.join('\n'), line: i + 1, lang: open[2].toLowerCase() };
      body.push(lines[j]);
    }
    throw new Error(`README.md: the code block at line ${i + 1} is not closed`);
  }
  throw new Error(`README.md: no \`\`\`js block after the "Usage" heading at line ${h + 1}`);
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

test('README.md: the Usage example runs with exit code 0', () => {
  if (!fs.existsSync(README)) throw new Error('README.md does not exist');
  const snippet = usageSnippet(fs.readFileSync(README, 'utf8'));
  expect(snippet.code).toMatch(/wasm-attention/);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-attention-readme-'));
  fs.mkdirSync(path.join(tmp, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'wasm-attention'), 'dir');
  fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'readme-check', private: true }));
  const mod = asModule(snippet);
  fs.writeFileSync(path.join(tmp, mod.file), mod.text);
  const r = spawnSync(process.execPath, [mod.file], { cwd: tmp, encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) {
    throw new Error(
      `README.md block at line ${snippet.line} (run as ${mod.file}) exited ${r.status}${r.signal ? ` (${r.signal})` : ''}:\n` +
        `${r.stderr}\n--- stdout ---\n${r.stdout}\n--- code ---\n${mod.text}`,
    );
  }
});
