// The decode rows' layer shapes (bench/decode.mjs, bench/reduced-rows.mjs): MHA (embedDim 768, 12
// heads) and GQA (embedDim 2048, 32 heads, 8 K/V heads, headDim 64), with their random weights.
import { randArray, rng } from './util.mjs';

export const DECODE_SHAPES = [
  { name: 'MHA 768/12', d: 768, h: 12, kvHeads: 12, headDim: 64 },
  { name: 'GQA 2048/32/8', d: 2048, h: 32, kvHeads: 8, headDim: 64 },
];
/** A shape with its random projection weights (nn.Linear's [out, in]), the same for every run. */
export function weightsOf(s) {
  const rand = rng(s.d * 31 + s.h);
  const ws = 1 / Math.sqrt(s.d);
  return {
    ...s,
    wq: randArray(s.h * s.headDim * s.d, ws, rand),
    wk: randArray(s.kvHeads * s.headDim * s.d, ws, rand),
    wv: randArray(s.kvHeads * s.headDim * s.d, ws, rand),
    wo: randArray(s.d * s.h * s.headDim, 1 / Math.sqrt(s.h * s.headDim), rand),
  };
}

/** createMultiHeadAttention's arguments for weightsOf's layer. */
export const layerArgs = (p) => ({
  embedDim: p.d,
  numHeads: p.h,
  numKvHeads: p.kvHeads,
  headDim: p.headDim,
  qProjWeight: p.wq,
  kProjWeight: p.wk,
  vProjWeight: p.wv,
  outProjWeight: p.wo,
});
