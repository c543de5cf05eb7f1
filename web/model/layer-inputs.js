// The input of one layer's attention for every token of a sequence: the hidden state after the
// layers before it, through the layer's input RMSNorm. The head steps (head-steps.js) recompute one
// head from it. loadModel's forward gives the hidden state after the final norm only, so layer l gets
// a model of its own, loaded on first use from the same tensors: the first l layers, with layer l's
// input norm in place of the final norm, so that its `hidden` is layer l's attention input. Layer 0
// has no layer before it: its model has one layer whose output projections (o_proj, down_proj) are
// zero, which adds exactly 0 to the residual, so its `hidden` is the norm of the embeddings.

const layerName = (l, rest) => `model.layers.${l}.${rest}`;

/** config.json and tensors (by transformers' names) of the model whose hidden state is layer `layer`'s input. */
function probeFiles(configJson, tensors, layer) {
  const count = Math.max(layer, 1);
  const keep = {};
  for (const [name, t] of Object.entries(tensors)) {
    const m = /^model\.layers\.(\d+)\./.exec(name);
    if (m ? Number(m[1]) < count : name === 'model.embed_tokens.weight') keep[name] = t;
  }
  if (layer === 0) {
    for (const proj of ['self_attn.o_proj.weight', 'mlp.down_proj.weight']) {
      const t = tensors[layerName(0, proj)];
      keep[layerName(0, proj)] = { dtype: 'F32', shape: t.shape.slice(), data: new Float32Array(t.data.length) };
    }
  }
  keep['model.norm.weight'] = tensors[layerName(layer, 'input_layernorm.weight')];
  return { config: { ...configJson, num_hidden_layers: count }, weights: { tensors: keep } };
}

/**
 * { of(layer, ids) → Promise<Float32Array [ids.length, hiddenSize]>, dispose() }: layer `layer`'s
 * attention input for the tokens `ids` at positions 0 … ids.length − 1.
 */
export function createLayerInputs(loadModel, attn, configJson, tensors) {
  const loaded = new Map(); // layer → its model
  const loading = new Map(); // layer → the Promise of its model
  let disposed = false;
  const gone = () => new Error('layer inputs: the poem model was disposed');

  function modelOf(layer) {
    if (loaded.has(layer)) return loaded.get(layer);
    if (!loading.has(layer)) {
      const promise = loadModel(attn, probeFiles(configJson, tensors, layer)).then(
        (model) => {
          loading.delete(layer);
          if (disposed) {
            model.dispose(); // the poem model went while this one loaded
            throw gone();
          }
          loaded.set(layer, model);
          return model;
        },
        (e) => {
          loading.delete(layer); // a failed load is tried again next time
          throw e;
        },
      );
      loading.set(layer, promise);
    }
    return loading.get(layer);
  }

  return {
    async of(layer, ids) {
      if (disposed) throw gone();
      const model = await modelOf(layer);
      if (disposed) throw gone();
      return model.forward(ids, { logits: 'none' }).hidden;
    },
    /** Frees every model loaded so far, at once; one still loading is freed when it arrives. */
    dispose() {
      disposed = true;
      for (const model of loaded.values()) model.dispose();
      loaded.clear();
    },
  };
}
