// The poem model's runtime around loadModel: environment-agnostic ES modules (Web Worker, page,
// Node), no DOM. Documented in web/README.md ("Model runtime").
export { openPoemModel, POEM_START } from './poem-model.js';
export { topTokens } from './sampling.js';
export { generate } from './generate.js';
