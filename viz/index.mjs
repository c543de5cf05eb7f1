// wasm-attention/viz: views of attention weights for any page, framework-free and without the
// engine (they take plain arrays, e.g. what model.forward(…, { attention: true }) returns).
export { createHeatmap } from './heatmap.mjs';
export { createHeadView } from './head-view.mjs';
export { createModelView } from './model-view.mjs';
export { weightRGB } from './colour-scale.mjs';
