// Turns a layer's public arguments (docs/API.md) into one internal description shared by both
// functions (forward-args.mjs does the same for a call's):
//   layer   { qIn, kIn, vIn, numHeads, numKvHeads, headDimQk, headDimV, outProjection, outDim, rope, alibi,
//             slidingWindow, weights: { wq, wk, wv, bq, bk, bv, wo, bo, packedIn, inBias, alibiSlopes } }
// Each name is the camelCase twin of the engine's slot (C++'s LayerConfig / ForwardArgs field): q_in,
// num_kv_heads, head_dim_qk, sliding_window, average_weights, …
// selfAttention is one head of width dK (dV for values) without an output projection.
// Its options (RoPE, ALiBi) are read by layer-options.mjs, its weights' lengths come from
// weight-lengths.mjs.
import { typedLength as len } from './checks.mjs';
import { parseAlibi, parseRope } from './layer-options.mjs';
import { layerTensorLengths } from './weight-lengths.mjs';

export const SELF_LAYER_ARGS = ['dModel', 'wq', 'wk', 'wv', 'bq', 'bk', 'bv'];
export const MHA_LAYER_ARGS = [
  'embedDim',
  'numHeads',
  'kdim',
  'vdim',
  'inProjWeight',
  'qProjWeight',
  'kProjWeight',
  'vProjWeight',
  'inProjBias',
  'outProjWeight',
  'outProjBias',
  'numKvHeads',
  'headDim',
  'qProjBias',
  'kProjBias',
  'vProjBias',
  'rope',
  'alibi',
  'slidingWindow',
];
// A prepared layer's own option (how it stores its weights: storage-dtypes.mjs).
export const PREPARED_LAYER_ARGS = ['weightDtype'];

// A layer's weights checked against its table of lengths: checked(name, tensor) returns the tensor
// once its length is right; optional(name) reads one that may be absent.
function weightChecks(c, layer) {
  const lengths = layerTensorLengths(layer);
  const checked = (name, t) => (c.length(name, t, ...lengths[name]), t);
  return { checked, optional: (name) => checked(name, c.tensor(name, { required: false })) };
}

export function selfLayer(c) {
  const dModel = c.size('dModel');
  const wq = c.tensor('wq');
  const wk = c.tensor('wk');
  const wv = c.tensor('wv');
  const width = (name, t, dim) => {
    if (len(t) === 0 || len(t) % dModel !== 0) {
      throw c.rangeError(
        name,
        `of length ${dim}·dModel, a positive multiple of dModel = ${dModel}`,
        `length ${len(t)}`,
      );
    }
    return len(t) / dModel;
  };
  const dk = width('wq', wq, 'dK');
  const dv = width('wv', wv, 'dV');
  const layer = {
    qIn: dModel,
    kIn: dModel,
    vIn: dModel,
    numHeads: 1,
    numKvHeads: 1,
    headDimQk: dk,
    headDimV: dv,
    outProjection: false,
    outDim: dv,
    rope: null,
    alibi: false,
    slidingWindow: 0,
    weights: null,
  };
  const { checked, optional } = weightChecks(c, layer);
  layer.weights = {
    wq,
    wk: checked('wk', wk),
    wv,
    bq: optional('bq'),
    bk: optional('bk'),
    bv: optional('bv'),
    wo: null,
    bo: null,
    packedIn: null,
  };
  return layer;
}

export function mhaLayer(c) {
  const embedDim = c.size('embedDim');
  const numHeads = c.size('numHeads');
  const decoder = c.has('numKvHeads') || c.has('headDim');
  if (!c.has('headDim') && embedDim % numHeads !== 0) {
    throw c.rangeError('embedDim', `divisible by numHeads = ${numHeads}`, embedDim);
  }
  const kdim = c.size('kdim', embedDim);
  const vdim = c.size('vdim', embedDim);
  const numKvHeads = c.size('numKvHeads', numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw c.rangeError('numKvHeads', `a divisor of numHeads = ${numHeads}`, numKvHeads);
  }
  const headDim = c.size('headDim', embedDim / numHeads);
  const layer = {
    qIn: embedDim,
    kIn: kdim,
    vIn: vdim,
    numHeads,
    numKvHeads,
    headDimQk: headDim,
    headDimV: headDim,
    outProjection: true,
    outDim: embedDim,
    decoder,
  };
  const { checked, optional } = weightChecks(c, layer);
  const weights = { wq: null, wk: null, wv: null, bq: null, bk: null, bv: null, wo: null, bo: null, packedIn: null };
  const separate = c.has('qProjWeight') || c.has('kProjWeight') || c.has('vProjWeight');
  if (c.has('inProjWeight') && separate) {
    throw new TypeError(`${c.fn}: give either inProjWeight or qProjWeight + kProjWeight + vProjWeight, not both`);
  }
  if (separate || kdim !== embedDim || vdim !== embedDim || decoder) {
    if (c.has('inProjWeight')) {
      const why = decoder
        ? 'numKvHeads or headDim is given'
        : `kdim or vdim differs from embedDim (kdim = ${kdim}, vdim = ${vdim})`;
      throw c.typeError(
        'qProjWeight',
        `given (with kProjWeight, vProjWeight) when ${why}, instead of inProjWeight`,
        undefined,
      );
    }
    weights.wq = checked('qProjWeight', c.tensor('qProjWeight'));
    weights.wk = c.tensor('kProjWeight');
    weights.wv = c.tensor('vProjWeight');
    if (!c.has('numKvHeads')) missingKvHeads(c, layer, weights.wk);
    checked('kProjWeight', weights.wk);
    checked('vProjWeight', weights.wv);
  } else {
    weights.packedIn = checked('inProjWeight', c.tensor('inProjWeight'));
  }
  const separateBias = c.has('qProjBias') || c.has('kProjBias') || c.has('vProjBias');
  if (c.has('inProjBias') && separateBias) {
    throw new TypeError(`${c.fn}: give either inProjBias or qProjBias / kProjBias / vProjBias, not both`);
  }
  weights.inBias = optional('inProjBias');
  weights.bq = optional('qProjBias');
  weights.bk = optional('kProjBias');
  weights.bv = optional('vProjBias');
  weights.wo = checked('outProjWeight', c.tensor('outProjWeight'));
  weights.bo = optional('outProjBias');
  const alibi = parseAlibi(c, numHeads);
  weights.alibiSlopes = alibi === true ? null : alibi;
  layer.weights = weights;
  layer.rope = parseRope(c, headDim);
  layer.alibi = alibi !== null;
  layer.slidingWindow = c.has('slidingWindow') ? c.size('slidingWindow') : 0;
  return layer;
}

// A kProjWeight sized for fewer K/V heads than numHeads, without numKvHeads: the likely mistake is
// the forgotten numKvHeads (a grouped-query checkpoint), so the error names it.
function missingKvHeads(c, layer, wk) {
  const perHead = layer.headDimQk * layer.kIn;
  const given = len(wk);
  const heads = given / perHead;
  if (Number.isInteger(heads) && heads >= 1 && heads < layer.numHeads && layer.numHeads % heads === 0) {
    throw c.rangeError(
      'numKvHeads',
      `given for a kProjWeight of ${heads} K/V heads (length ${given} = ${heads}·headDim·kdim = ` +
        `${heads}·${layer.headDimQk}·${layer.kIn}; grouped-query attention): numKvHeads: ${heads}`,
      'nothing (undefined), which means numKvHeads = numHeads = ' + layer.numHeads,
    );
  }
}
