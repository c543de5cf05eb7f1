// Turns a layer's public arguments (docs/API.md) into one internal description shared by both
// functions (forward-args.mjs does the same for a call's):
//   layer   { qIn, kIn, vIn, numHeads, numKvHeads, headDimQk, headDimV, outProjection, outDim, rope, alibi,
//             slidingWindow, weights: { wq, wk, wv, bq, bk, bv, wo, bo, packedIn, inBias, alibiSlopes } }
// Each name is the camelCase twin of the engine's slot (C++'s LayerConfig / ForwardArgs field): q_in,
// num_kv_heads, head_dim_qk, sliding_window, average_weights, …
// selfAttention is one head of width dK (dV for values) without an output projection.

import { typedArrayName, typedLength as len } from './checks.mjs';

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
// How a prepared layer (or a model, loadModel's dtype) stores its weight matrices; the index is the
// engine's WeightDtype (src/kernels/weight-dtype.h). One-shot calls read their weights as f32.
export const WEIGHT_DTYPES = ['f32', 'f16', 'bf16', 'int8'];
export const PREPARED_LAYER_ARGS = ['weightDtype'];
const DTYPES_TEXT = "'f32', 'f16', 'bf16' or 'int8'";

// A weight dtype option (weightDtype, loadModel's dtype): 'f32' when absent.
export function parseWeightDtype(c, name) {
  const value = c.args[name];
  if (value === undefined) return 'f32';
  if (typeof value !== 'string') throw c.typeError(name, DTYPES_TEXT, value);
  if (!WEIGHT_DTYPES.includes(value)) throw c.rangeError(name, DTYPES_TEXT, JSON.stringify(value));
  return value;
}

// Positions stay below 2^31 (query positions positionOffset + i travel as 32-bit integers).
export const MAX_POSITION = 2 ** 31;

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

// rope: true, or { dim = headDim, base = 10000, interleaved = false }; null when absent or false.
export function parseRope(c, headDim) {
  const v = c.args.rope;
  if (v === undefined || v === null || v === false) return null;
  if (v === true) {
    if (headDim % 2 !== 0)
      throw c.rangeError(
        'rope',
        `an object with an even dim (rope: true rotates all headDim = ${headDim} entries, which must be even)`,
        true,
      );
    return { dim: headDim, base: 10000, interleaved: false };
  }
  const expected = 'true or an object { dim, base, interleaved }';
  if (typeof v !== 'object' || Array.isArray(v) || typedArrayName(v)) throw c.typeError('rope', expected, v);
  const known = new Set(['dim', 'base', 'interleaved']);
  for (const key of Object.keys(v)) {
    if (!known.has(key)) throw new TypeError(`${c.fn}: unknown rope option ${key} (known: dim, base, interleaved)`);
  }
  const options = { dim: v.dim, base: v.base, interleaved: v.interleaved }; // each read once
  const rc = Object.assign(Object.create(c), {
    args: { 'rope.dim': options.dim, 'rope.base': options.base, 'rope.interleaved': options.interleaved },
  });
  const dim = rc.size('rope.dim', headDim);
  if (dim % 2 !== 0 || dim > headDim) throw c.rangeError('rope.dim', `an even integer ≤ headDim = ${headDim}`, dim);
  // Angles are computed in double precision, so the base travels as a float64 (1e39 is a base too).
  const base = rc.float64('rope.base', 10000);
  if (!(base > 0)) throw c.rangeError('rope.base', 'a positive number', base);
  return { dim, base, interleaved: rc.bool('rope.interleaved', false) };
}

// alibi: true (the paper's slopes), or numHeads slopes; null when absent or false.
function parseAlibi(c, numHeads) {
  const v = c.args.alibi;
  if (v === undefined || v === null || v === false) return null;
  if (v === true) return true;
  if (typeof v !== 'object')
    throw c.typeError(
      'alibi',
      'true or a Float32Array (or Float16Array, Float64Array, number[]) of numHeads slopes',
      v,
    );
  const slopes = c.tensor('alibi');
  c.length('alibi', slopes, numHeads, () => `numHeads = ${numHeads}`);
  return slopes;
}

// The length of every weight tensor of a layer, with the formula its error shows: name → [length,
// formula]. Creation checks the tensors given against it, and so does a forward that repeats a
// layer's argument (one object may serve both create and forward; the weights in use stay the ones
// given at creation).
export function layerTensorLengths(layer) {
  const { qIn, kIn, vIn, headDimQk: dk, headDimV: dv } = layer;
  if (!layer.outProjection) {
    return {
      wq: [dk * qIn, () => `dK·dModel = ${dk}·${qIn}`],
      wk: [dk * qIn, () => `dK·dModel = ${dk}·${qIn}`],
      wv: [dv * qIn, () => `dV·dModel = ${dv}·${qIn}`],
      bq: [dk, 'dK'],
      bk: [dk, 'dK'],
      bv: [dv, 'dV'],
    };
  }
  const { numHeads, numKvHeads, decoder } = layer;
  const E = qIn;
  const qWidth = numHeads * dk,
    kvWidth = numKvHeads * dk;
  return {
    inProjWeight: [3 * E * E, () => `3·embedDim·embedDim = 3·${E}·${E}`],
    qProjWeight: [
      qWidth * E,
      () => (decoder ? `numHeads·headDim·embedDim = ${numHeads}·${dk}·${E}` : `embedDim·embedDim = ${E}·${E}`),
    ],
    kProjWeight: [
      kvWidth * kIn,
      () => (decoder ? `numKvHeads·headDim·kdim = ${numKvHeads}·${dk}·${kIn}` : `embedDim·kdim = ${E}·${kIn}`),
    ],
    vProjWeight: [
      kvWidth * vIn,
      () => (decoder ? `numKvHeads·headDim·vdim = ${numKvHeads}·${dk}·${vIn}` : `embedDim·vdim = ${E}·${vIn}`),
    ],
    inProjBias: decoder
      ? [qWidth + 2 * kvWidth, () => `(numHeads + 2·numKvHeads)·headDim = (${numHeads} + 2·${numKvHeads})·${dk}`]
      : [3 * E, () => `3·embedDim = 3·${E}`],
    qProjBias: [qWidth, () => `numHeads·headDim = ${numHeads}·${dk}`],
    kProjBias: [kvWidth, () => `numKvHeads·headDim = ${numKvHeads}·${dk}`],
    vProjBias: [kvWidth, () => `numKvHeads·headDim = ${numKvHeads}·${dk}`],
    outProjWeight: [
      E * qWidth,
      () => (decoder ? `embedDim·numHeads·headDim = ${E}·${numHeads}·${dk}` : `embedDim·embedDim = ${E}·${E}`),
    ],
    outProjBias: [E, `embedDim = ${E}`],
  };
}

export function layerSizes(layer) {
  return layer.outProjection
    ? {
        embedDim: layer.qIn,
        numHeads: layer.numHeads,
        kdim: layer.kIn,
        vdim: layer.vIn,
        numKvHeads: layer.numKvHeads,
        headDim: layer.headDimQk,
      }
    : { dModel: layer.qIn };
}

// The sliding window travels as a 32-bit integer. Positions stay below 2^31 + 2^31 (an offset and a
// length), so a window of 2^32 − 1 masks no key, exactly as any larger one: it stands for them all.
export const stagedWindow = (window) => Math.min(window, 2 ** 32 - 1);

// A forward may repeat the layer's own arguments (one object may serve both create and forward):
// each is checked as at creation and must agree with the layer, else a RangeError — a setting the
// layer was made without (a window, RoPE, ALiBi) is never silently ignored.
export function checkRepeatedLayerArgs(c, layer, sizes, tensorLengths) {
  for (const name in c.args) {
    if (c.args[name] === undefined) continue;
    if (Object.hasOwn(sizes, name) && c.size(name) !== sizes[name]) {
      throw c.rangeError(name, `${sizes[name]} as when the layer was created`, c.args[name]);
    }
    if (Object.hasOwn(tensorLengths, name) && c.has(name)) c.length(name, c.tensor(name), ...tensorLengths[name]);
  }
  if (c.args.weightDtype !== undefined) {
    const dtype = parseWeightDtype(c, 'weightDtype');
    if (dtype !== layer.weightDtype)
      throw c.rangeError('weightDtype', `'${layer.weightDtype}' as when the layer was created`, `'${dtype}'`);
  }
  if (!layer.outProjection) return;
  const differs = (name, given, made) => {
    throw c.rangeError(name, `${made} as when the layer was created (a forward cannot change it)`, given);
  };
  if (c.args.slidingWindow !== undefined) {
    const window = c.has('slidingWindow') ? c.size('slidingWindow') : 0;
    if (window !== layer.slidingWindow)
      differs('slidingWindow', window || String(c.args.slidingWindow), layer.slidingWindow || 'absent (no window)');
  }
  if (c.args.rope !== undefined) {
    const rope = parseRope(c, layer.headDimQk);
    const text = (r) => (r ? `{ dim: ${r.dim}, base: ${r.base}, interleaved: ${r.interleaved} }` : 'absent (no RoPE)');
    if (text(rope) !== text(layer.rope)) differs('rope', text(rope), text(layer.rope));
  }
  if (c.args.alibi !== undefined) {
    const alibi = parseAlibi(c, layer.numHeads);
    const made = layer.alibi ? (layer.weights.alibiSlopes ?? true) : null;
    const same =
      alibi === made ||
      (alibi !== null &&
        typeof alibi === 'object' &&
        made !== null &&
        typeof made === 'object' &&
        Float32Array.from(alibi).every((x, h) => Object.is(x, Math.fround(made[h]))));
    const text = (a) =>
      a === null
        ? 'absent (no ALiBi)'
        : a === true
          ? "true (the paper's slopes)"
          : `slopes [${Array.from(a).join(', ')}]`;
    if (!same) differs('alibi', text(alibi), text(made));
  }
}
