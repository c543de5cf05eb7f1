'use strict';
// The repository carries its own documents: every Markdown file a tracked file names exists in the
// repository, so no reader is sent to a document they cannot open.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
const TEXT = /\.(md|mjs|cjs|js|ts|cpp|h|sh|py|html|css|txt)$|^(CMakeLists\.txt|LICENSE|\.ci\/run)$/;

test('every cited .md file is in the repository', () => {
  const missing = [];
  for (const file of tracked.filter((f) => TEXT.test(f))) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    for (const [, cited] of text.matchAll(/([\w./-]*[\w-]+\.md)\b/g)) {
      const resolved = cited.startsWith('.')
        ? path.posix.normalize(path.posix.join(path.posix.dirname(file), cited))
        : cited;
      const found = tracked.some((t) => t === resolved || t.endsWith(`/${resolved}`));
      if (!found) missing.push(`${file} cites ${cited}`);
    }
  }
  expect(missing).toEqual([]);
});

test('the project documents are there: README, docs/API.md, LICENSE (MIT, as package.json says)', () => {
  for (const f of ['README.md', 'docs/API.md', 'LICENSE']) expect([f, tracked.includes(f)]).toEqual([f, true]);
  expect(require('../../package.json').license).toBe('MIT');
  expect(fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
});
