'use strict';
// The contract's argument names (docs/API.md), written once for the tests, independently of the
// package's own lists: which arguments make a layer and which a call, and a splitter of one
// argument object into the two (a prepared layer's creation and its forward).

// Tables of names, kept as written (a list a line) rather than one name a line.
// prettier-ignore
const SA_LAYER_ARGS = ['dModel', 'wq', 'wk', 'wv', 'bq', 'bk', 'bv'];
// prettier-ignore
const SA_CALL_ARGS = ['x', 'seqLen', 'batch', 'isCausal', 'attnMask', 'scale', 'needWeights'];
// nn.MultiheadAttention's (v1), then the decoder's (v2).
// prettier-ignore
const MHA_V1_LAYER_ARGS = ['embedDim', 'numHeads', 'kdim', 'vdim', 'inProjWeight', 'qProjWeight', 'kProjWeight',
  'vProjWeight', 'inProjBias', 'outProjWeight', 'outProjBias'];
// prettier-ignore
const MHA_DECODER_LAYER_ARGS = ['numKvHeads', 'headDim', 'qProjBias', 'kProjBias', 'vProjBias', 'rope', 'alibi',
  'slidingWindow'];
const MHA_LAYER_ARGS = [...MHA_V1_LAYER_ARGS, ...MHA_DECODER_LAYER_ARGS];
// prettier-ignore
const MHA_V1_CALL_ARGS = ['query', 'key', 'value', 'batch', 'tgtLen', 'srcLen', 'attnMask', 'keyPaddingMask',
  'isCausal', 'scale', 'needWeights', 'averageAttnWeights'];
const MHA_DECODER_CALL_ARGS = ['positionOffset'];

/** { layer, inputs }: the arguments named in layerKeys, and the rest. */
function splitArgs(args, layerKeys) {
  const layer = {};
  const inputs = {};
  for (const [k, v] of Object.entries(args)) (layerKeys.includes(k) ? layer : inputs)[k] = v;
  return { layer, inputs };
}

module.exports = {
  SA_LAYER_ARGS,
  SA_CALL_ARGS,
  MHA_V1_LAYER_ARGS,
  MHA_DECODER_LAYER_ARGS,
  MHA_LAYER_ARGS,
  MHA_V1_CALL_ARGS,
  MHA_DECODER_CALL_ARGS,
  splitArgs,
};
