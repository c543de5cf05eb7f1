// Turns the public arguments (docs/API.md) into one internal description shared by both functions:
//   layer   { qIn, kIn, vIn, heads, dk, dv, outProjection, weights: { wq, wk, wv, bq, bk, bv, wo, bo } }
//   forward { batch, tgtLen, srcLen, query, key, value, attnMask, keyPaddingMask, isCausal, scale,
//             needWeights, average, returnIntermediates }
// selfAttention is one head of width dK (dV for values) without an output projection.

import { typedLength as len } from './checks.mjs';

export const SELF_LAYER_ARGS = ['dModel', 'wq', 'wk', 'wv', 'bq', 'bk', 'bv'];
export const SELF_FORWARD_ARGS = ['x', 'seqLen', 'batch', 'isCausal', 'attnMask', 'scale', 'needWeights', 'returnIntermediates'];
export const MHA_LAYER_ARGS = ['embedDim', 'numHeads', 'kdim', 'vdim', 'inProjWeight', 'qProjWeight', 'kProjWeight',
  'vProjWeight', 'inProjBias', 'outProjWeight', 'outProjBias'];
export const MHA_FORWARD_ARGS = ['query', 'key', 'value', 'batch', 'tgtLen', 'srcLen', 'attnMask', 'keyPaddingMask',
  'isCausal', 'scale', 'needWeights', 'averageAttnWeights', 'returnIntermediates'];

export function selfLayer(c) {
  const dModel = c.size('dModel');
  const wq = c.tensor('wq');
  const wk = c.tensor('wk');
  const wv = c.tensor('wv');
  const width = (name, t, dim) => {
    if (len(t) === 0 || len(t) % dModel !== 0) {
      throw c.rangeError(name, `of length ${dim}·dModel, a positive multiple of dModel = ${dModel}`, `length ${len(t)}`);
    }
    return len(t) / dModel;
  };
  const dk = width('wq', wq, 'dK');
  const dv = width('wv', wv, 'dV');
  c.length('wk', wk, dk * dModel, `dK·dModel = ${dk}·${dModel}`);
  const bq = c.tensor('bq', { required: false });
  const bk = c.tensor('bk', { required: false });
  const bv = c.tensor('bv', { required: false });
  c.length('bq', bq, dk, 'dK');
  c.length('bk', bk, dk, 'dK');
  c.length('bv', bv, dv, 'dV');
  return {
    qIn: dModel, kIn: dModel, vIn: dModel, heads: 1, dk, dv, outProjection: false,
    weights: { wq, wk, wv, bq, bk, bv, wo: null, bo: null, packedIn: null },
  };
}

export function mhaLayer(c) {
  const embedDim = c.size('embedDim');
  const numHeads = c.size('numHeads');
  if (embedDim % numHeads !== 0) {
    throw c.rangeError('embedDim', `divisible by numHeads = ${numHeads}`, embedDim);
  }
  const kdim = c.size('kdim', embedDim);
  const vdim = c.size('vdim', embedDim);
  const E = embedDim;
  const weights = { wq: null, wk: null, wv: null, bq: null, bk: null, bv: null, wo: null, bo: null, packedIn: null };
  const separate = c.has('qProjWeight') || c.has('kProjWeight') || c.has('vProjWeight');
  if (c.has('inProjWeight') && separate) {
    throw new TypeError(`${c.fn}: give either inProjWeight or qProjWeight + kProjWeight + vProjWeight, not both`);
  }
  if (separate || kdim !== E || vdim !== E) {
    if (c.has('inProjWeight')) {
      throw c.typeError('qProjWeight', `given (with kProjWeight, vProjWeight) when kdim or vdim differs from embedDim (kdim = ${kdim}, vdim = ${vdim}), instead of inProjWeight`, undefined);
    }
    weights.wq = c.tensor('qProjWeight');
    weights.wk = c.tensor('kProjWeight');
    weights.wv = c.tensor('vProjWeight');
    c.length('qProjWeight', weights.wq, E * E, `embedDim·embedDim = ${E}·${E}`);
    c.length('kProjWeight', weights.wk, E * kdim, `embedDim·kdim = ${E}·${kdim}`);
    c.length('vProjWeight', weights.wv, E * vdim, `embedDim·vdim = ${E}·${vdim}`);
  } else {
    weights.packedIn = c.tensor('inProjWeight');
    c.length('inProjWeight', weights.packedIn, 3 * E * E, `3·embedDim·embedDim = 3·${E}·${E}`);
  }
  weights.inBias = c.tensor('inProjBias', { required: false });
  c.length('inProjBias', weights.inBias, 3 * E, `3·embedDim = 3·${E}`);
  weights.wo = c.tensor('outProjWeight');
  c.length('outProjWeight', weights.wo, E * E, `embedDim·embedDim = ${E}·${E}`);
  weights.bo = c.tensor('outProjBias', { required: false });
  c.length('outProjBias', weights.bo, E, `embedDim = ${E}`);
  const headDim = E / numHeads;
  return { qIn: E, kIn: kdim, vIn: vdim, heads: numHeads, dk: headDim, dv: headDim, outProjection: true, weights };
}

function attnMask(c, tgtLen, srcLen, batchHeads) {
  const m = c.mask('attnMask');
  if (m === null) return null;
  const plane = tgtLen * srcLen;
  if (len(m.data) === plane) return { ...m, perHead: false };
  if (batchHeads > 1 && len(m.data) === batchHeads * plane) return { ...m, perHead: true };
  const shapes = batchHeads > 1
    ? `[tgtLen, srcLen] = ${plane} or [batch·numHeads, tgtLen, srcLen] = ${batchHeads * plane} elements`
    : `[seqLen, seqLen] = ${plane} elements`;
  throw c.rangeError('attnMask', `of shape ${shapes}`, `length ${len(m.data)}`);
}

export function selfForward(c, layer) {
  const batch = c.size('batch', 1);
  const seqLen = c.size('seqLen');
  const x = c.tensor('x');
  c.length('x', x, batch * seqLen * layer.qIn, `batch·seqLen·dModel = ${batch}·${seqLen}·${layer.qIn}`);
  return {
    batch, tgtLen: seqLen, srcLen: seqLen, query: x, key: x, value: x,
    attnMask: attnMask(c, seqLen, seqLen, 1),
    keyPaddingMask: null,
    isCausal: c.bool('isCausal', false),
    scale: c.float32('scale', 1 / Math.sqrt(layer.dk)),
    needWeights: c.bool('needWeights', true),
    average: true,
    returnIntermediates: c.bool('returnIntermediates', false),
  };
}

export function mhaForward(c, layer) {
  const batch = c.size('batch', 1);
  const { qIn: E, kIn: kdim, vIn: vdim, heads } = layer;
  const query = c.tensor('query');
  const key = c.tensor('key', { required: false }) ?? query;
  const value = c.tensor('value', { required: false }) ?? key;
  const tgtLen = c.inferred('tgtLen', 'query', len(query), batch * E, `batch·embedDim = ${batch}·${E}`);
  c.length('query', query, batch * tgtLen * E, `batch·tgtLen·embedDim = ${batch}·${tgtLen}·${E}`);
  const srcLen = c.inferred('srcLen', 'key', len(key), batch * kdim, `batch·kdim = ${batch}·${kdim}`);
  c.length('key', key, batch * srcLen * kdim, `batch·srcLen·kdim = ${batch}·${srcLen}·${kdim}`);
  c.length('value', value, batch * srcLen * vdim, `batch·srcLen·vdim = ${batch}·${srcLen}·${vdim}`);
  const keyPaddingMask = c.mask('keyPaddingMask');
  if (keyPaddingMask) {
    c.length('keyPaddingMask', keyPaddingMask.data, batch * srcLen, `batch·srcLen = ${batch}·${srcLen}`);
  }
  return {
    batch, tgtLen, srcLen, query, key, value,
    attnMask: attnMask(c, tgtLen, srcLen, batch * heads),
    keyPaddingMask,
    isCausal: c.bool('isCausal', false),
    scale: c.float32('scale', 1 / Math.sqrt(layer.dk)),
    needWeights: c.bool('needWeights', true),
    average: c.bool('averageAttnWeights', true),
    returnIntermediates: c.bool('returnIntermediates', false),
  };
}

// The layer's arguments a forward may repeat (one object may serve both create and forward): each
// is checked for its type and length as at creation, sizes must equal the layer's; the weights in
// use stay the ones given at creation. name → [length, formula].
export function layerTensorLengths(layer) {
  const { qIn, kIn, vIn, dk, dv } = layer;
  if (!layer.outProjection) {
    return {
      wq: [dk * qIn, `dK·dModel = ${dk}·${qIn}`], wk: [dk * qIn, `dK·dModel = ${dk}·${qIn}`],
      wv: [dv * qIn, `dV·dModel = ${dv}·${qIn}`], bq: [dk, 'dK'], bk: [dk, 'dK'], bv: [dv, 'dV'],
    };
  }
  const E = qIn;
  return {
    inProjWeight: [3 * E * E, `3·embedDim·embedDim = 3·${E}·${E}`],
    qProjWeight: [E * E, `embedDim·embedDim = ${E}·${E}`],
    kProjWeight: [E * kIn, `embedDim·kdim = ${E}·${kIn}`],
    vProjWeight: [E * vIn, `embedDim·vdim = ${E}·${vIn}`],
    inProjBias: [3 * E, `3·embedDim = 3·${E}`],
    outProjWeight: [E * E, `embedDim·embedDim = ${E}·${E}`],
    outProjBias: [E, `embedDim = ${E}`],
  };
}

export function layerSizes(layer) {
  return layer.outProjection
    ? { embedDim: layer.qIn, numHeads: layer.heads, kdim: layer.kIn, vdim: layer.vIn }
    : { dModel: layer.qIn };
}
