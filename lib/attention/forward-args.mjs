// Turns a call's public arguments (docs/API.md) into one internal description shared by one-shot
// calls and prepared layers' forwards:
//   forward { batch, tgtLen, srcLen, query, key, value, attnMask, keyPaddingMask, isCausal, scale,
//             needWeights, averageWeights, returnIntermediates, positionOffset, cache }
// Each name is the camelCase twin of the engine's slot (C++'s ForwardArgs field).
import { typedLength as len } from './checks.mjs';

// Positions stay below 2^31 (query positions positionOffset + i travel as 32-bit integers).
export const MAX_POSITION = 2 ** 31;

export const SELF_FORWARD_ARGS = [
  'x',
  'seqLen',
  'batch',
  'isCausal',
  'attnMask',
  'scale',
  'needWeights',
  'returnIntermediates',
];
export const MHA_FORWARD_ARGS = [
  'query',
  'key',
  'value',
  'batch',
  'tgtLen',
  'srcLen',
  'attnMask',
  'keyPaddingMask',
  'isCausal',
  'scale',
  'needWeights',
  'averageAttnWeights',
  'returnIntermediates',
  'positionOffset',
  'cache',
];
function attnMask(c, tgtLen, srcLen, batchHeads) {
  const m = c.mask('attnMask');
  if (m === null) return null;
  const plane = tgtLen * srcLen;
  if (len(m.data) === plane) return { ...m, perHead: false };
  if (batchHeads > 1 && len(m.data) === batchHeads * plane) return { ...m, perHead: true };
  const shapes =
    batchHeads > 1
      ? `[tgtLen, srcLen] = ${plane} or [batch·numHeads, tgtLen, srcLen] = ${batchHeads * plane} elements`
      : `[seqLen, seqLen] = ${plane} elements`;
  throw c.rangeError('attnMask', `of shape ${shapes}`, `length ${len(m.data)}`);
}

export function selfForward(c, layer) {
  const batch = c.size('batch', 1);
  const seqLen = c.size('seqLen');
  const x = c.tensor('x');
  c.length('x', x, batch * seqLen * layer.qIn, () => `batch·seqLen·dModel = ${batch}·${seqLen}·${layer.qIn}`);
  return {
    batch,
    tgtLen: seqLen,
    srcLen: seqLen,
    query: x,
    key: x,
    value: x,
    attnMask: attnMask(c, seqLen, seqLen, 1),
    keyPaddingMask: null,
    isCausal: c.bool('isCausal', false),
    scale: c.float32('scale', 1 / Math.sqrt(layer.headDimQk)),
    needWeights: c.bool('needWeights', true),
    averageWeights: true,
    returnIntermediates: c.bool('returnIntermediates', false),
  };
}

export function mhaForward(c, layer, cache = null) {
  const { qIn: E, kIn: kdim, vIn: vdim, numHeads } = layer;
  if (cache === null && c.has('cache')) {
    throw c.typeError(
      'cache',
      'absent in a one-shot call (a KV cache serves prepared layers: createMultiHeadAttention().forward)',
      c.args.cache,
    );
  }
  const batch = c.size('batch', cache ? cache.batch : 1);
  if (cache && batch !== cache.batch) throw c.rangeError('batch', `${cache.batch}, the batch of the cache`, batch);
  const query = c.tensor('query');
  if (cache) {
    for (const name of ['key', 'value']) {
      if (c.has(name)) throw c.typeError(name, 'absent with a cache (K and V come from query)', c.args[name]);
    }
    if (c.bool('returnIntermediates', false)) {
      throw c.typeError('returnIntermediates', 'false or absent with a cache', true);
    }
  }
  const key = cache ? query : (c.tensor('key', { required: false }) ?? query);
  const value = cache ? query : (c.tensor('value', { required: false }) ?? key);
  const tgtLen = c.inferred('tgtLen', 'query', len(query), batch * E, () => `batch·embedDim = ${batch}·${E}`);
  c.length('query', query, batch * tgtLen * E, () => `batch·tgtLen·embedDim = ${batch}·${tgtLen}·${E}`);
  let srcLen;
  if (cache) {
    srcLen = cache.length + tgtLen;
    if (srcLen > cache.maxLength) {
      throw c.rangeError(
        'query',
        `at most ${cache.maxLength - cache.length} tokens: the cache holds ${cache.length} of maxLength = ${cache.maxLength}`,
        `${tgtLen} tokens`,
      );
    }
    if (c.args.srcLen !== undefined && c.size('srcLen') !== srcLen) {
      throw c.rangeError(
        'srcLen',
        `cache.length + tgtLen = ${cache.length} + ${tgtLen} = ${srcLen} with a cache`,
        c.args.srcLen,
      );
    }
  } else {
    srcLen = c.inferred('srcLen', 'key', len(key), batch * kdim, () => `batch·kdim = ${batch}·${kdim}`);
    c.length('key', key, batch * srcLen * kdim, () => `batch·srcLen·kdim = ${batch}·${srcLen}·${kdim}`);
    c.length('value', value, batch * srcLen * vdim, () => `batch·srcLen·vdim = ${batch}·${srcLen}·${vdim}`);
  }
  const keyPaddingMask = c.mask('keyPaddingMask');
  if (keyPaddingMask) {
    const cols = cache ? `cache.length + tgtLen = ${srcLen}` : 'srcLen';
    c.length('keyPaddingMask', keyPaddingMask.data, batch * srcLen, () => `batch·(${cols}) = ${batch}·${srcLen}`);
  }
  const positionOffset = offset(c, cache ? cache.length : 0, tgtLen);
  return {
    batch,
    tgtLen,
    srcLen,
    query,
    key,
    value,
    attnMask: attnMask(c, tgtLen, srcLen, batch * numHeads),
    keyPaddingMask,
    isCausal: c.bool('isCausal', false),
    scale: c.float32('scale', 1 / Math.sqrt(layer.headDimQk)),
    needWeights: c.bool('needWeights', true),
    averageWeights: c.bool('averageAttnWeights', true),
    returnIntermediates: c.bool('returnIntermediates', false),
    positionOffset,
    cache,
  };
}

// positionOffset: an integer ≥ 0, positions stay below 2^31.
function offset(c, fallback, tgtLen) {
  const v = c.args.positionOffset;
  if (v === undefined) return fallback;
  if (typeof v !== 'number') throw c.typeError('positionOffset', 'a non-negative integer', v);
  if (!Number.isInteger(v) || v < 0 || v + tgtLen > MAX_POSITION) {
    throw c.rangeError('positionOffset', `an integer from 0 to 2^31 − tgtLen = ${MAX_POSITION - tgtLen}`, v);
  }
  return v;
}

// Reads every element of a forward's tensors and masks now (the checker keeps what it read), so a
// getter in a number[] runs before the caller takes any snapshot of engine state.
const FORWARD_TENSORS = ['query', 'key', 'value', 'x'];
const FORWARD_MASKS = ['attnMask', 'keyPaddingMask'];
export function readForwardData(c) {
  for (const name of FORWARD_TENSORS) if (c.has(name)) c.tensor(name);
  for (const name of FORWARD_MASKS) c.mask(name);
}
