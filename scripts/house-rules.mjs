// The house's size rules, measured one way for the test and for anyone refactoring: no shipped source
// file over 350 lines, no JavaScript function (declaration, expression, arrow, method, accessor) over 80
// lines, counted from its first line to its last, nested functions included (a closure that holds a
// page's whole state is what the rule is for). `node scripts/house-rules.mjs` prints what breaks them.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const MAX_FILE_LINES = 350;
export const MAX_FUNCTION_LINES = 80;
// The shipped code: the C++ core, the seam, the JavaScript library, the views and the page.
export const SHIPPED_FOLDERS = ['bindings/', 'lib/', 'src/', 'viz/', 'web/'];
const SOURCE = /\.(mjs|cjs|js|ts|mts|cts|cpp|h|css|html)$/;
const JAVASCRIPT = /\.(mjs|cjs|js)$/;

export function shippedFiles() {
  return execFileSync('git', ['ls-files', '--', ...SHIPPED_FOLDERS], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => SOURCE.test(file));
}

const lineCount = (text) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** Files over the line limit: `{ file, lines }`. */
export function longFiles(files = shippedFiles()) {
  return files
    .map((file) => ({ file, lines: lineCount(readFileSync(join(ROOT, file), 'utf8')) }))
    .filter(({ lines }) => lines > MAX_FILE_LINES);
}

function functionName(node, sourceFile) {
  if (node.name) return node.name.getText(sourceFile);
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText(sourceFile);
  if (parent && ts.isCallExpression(parent))
    return `(argument of ${parent.expression.getText(sourceFile).slice(0, 40)})`;
  return '(anonymous)';
}

/** Every JavaScript function of one source text with its span: `{ name, line, lines }`. */
export function functionSpans(text, fileName = 'file.mjs') {
  const sourceFile = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const spans = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line;
      const last = sourceFile.getLineAndCharacterOfPosition(node.getEnd()).line;
      spans.push({ name: functionName(node, sourceFile), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return spans;
}

/** Functions over the limit in the shipped JavaScript: `{ file, name, line, lines }`. */
export function longFunctions(files = shippedFiles()) {
  return files
    .filter((file) => JAVASCRIPT.test(file))
    .flatMap((file) =>
      functionSpans(readFileSync(join(ROOT, file), 'utf8'), file)
        .filter(({ lines }) => lines > MAX_FUNCTION_LINES)
        .map((span) => ({ file, ...span })),
    );
}

// import … from '…', export … from '…', import('…') and new URL('…', import.meta.url) with a relative path.
const RELATIVE_SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bnew URL\(\s*)'(\.\.?\/[^'$]+)'/g;
// Files the build writes beside the sources (dist/, the glues), which a source may name.
const BUILT = /^(dist\/|build\/)|\/(wasm-attention-[\w-]+\.(mjs|wasm)|[\w-]+\.worker\.mjs)$/;

// The lines of a source that are not comments (an example in a comment imports nothing).
const codeLines = (text) => text.split('\n').filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line));

/** Relative imports of the shipped JavaScript that name no tracked file: `{ file, specifier }`. */
export function unresolvedImports(files = shippedFiles()) {
  const tracked = new Set(files.concat(execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n')));
  const folders = new Set(
    [...tracked].flatMap((f) =>
      f
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  return files
    .filter((file) => JAVASCRIPT.test(file))
    .flatMap((file) =>
      codeLines(readFileSync(join(ROOT, file), 'utf8'))
        .flatMap((line) => [...line.matchAll(RELATIVE_SPECIFIER)])
        .map((m) => ({ file, specifier: m[1], target: posix.normalize(posix.join(posix.dirname(file), m[1])) }))
        .filter(({ target, specifier }) => {
          if (tracked.has(target) || BUILT.test(target) || BUILT.test(`/${target}`)) return false;
          return !(specifier.endsWith('/') && folders.has(target.replace(/\/$/, '')));
        })
        .map(({ file, specifier }) => ({ file, specifier })),
    );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = longFiles();
  const functions = longFunctions();
  for (const { file, lines } of files) console.log(`file over ${MAX_FILE_LINES} lines: ${file} (${lines})`);
  for (const { file, name, line, lines } of functions)
    console.log(`function over ${MAX_FUNCTION_LINES} lines: ${file}:${line} ${name} (${lines})`);
  const imports = unresolvedImports();
  for (const { file, specifier } of imports) console.log(`import of no tracked file: ${file} → ${specifier}`);
  console.log(
    `${files.length} files and ${functions.length} functions over the limits; ${imports.length} unresolved imports`,
  );
  process.exitCode = files.length + functions.length + imports.length > 0 ? 1 : 0;
}
