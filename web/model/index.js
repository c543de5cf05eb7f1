// The poem model runtime: environment-agnostic ES modules (Web Worker, page, Node), no DOM.
// Documented in web/README.md ("Model runtime").
export { createPoemModel } from './poem-model.js';
export { topTokens, sampleToken } from './sampling.js';
export { generate } from './generate.js';
