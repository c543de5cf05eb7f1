'use strict';
// Compiles a consumer file against the package's declarations as a strict TypeScript user would
// (NodeNext resolution): the compiler's complaints as text ([] when it compiles) and the names of the
// files the program read (which declaration file each resolution mode picked).
const ts = require('typescript');

const CONSUMER_OPTIONS = {
  strict: true,
  noEmit: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2020,
  lib: ['lib.es2020.d.ts', 'lib.dom.d.ts'],
  types: [],
};

// options: compiler options over the consumer's (e.g. another lib).
function typeCheck(file, options = {}) {
  const program = ts.createProgram([file], { ...CONSUMER_OPTIONS, ...options });
  return {
    problems: ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    read: program.getSourceFiles().map((f) => f.fileName),
  };
}

module.exports = { typeCheck };
