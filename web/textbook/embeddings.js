// Input vectors for the demo: x[pos] = tokenVector(token) + positionalEncoding(pos).
//
// Each distinct token gets a fixed pseudo-random vector (standard normal entries, seeded by
// the token's text, so 我 is the same vector in every sentence and at every position);
// the sinusoidal position code of "Attention Is All You Need" is added:
//   PE(pos, 2i) = sin(pos / 10000^(2i/d)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d)).
import { gaussian, rngFor } from '../shared/random.js';

const EMBEDDING_SEED = 'token-embedding';

/** The vector of one token: dModel standard-normal values, a function of the token text only. */
export function tokenVector(token, dModel) {
  const rng = rngFor(EMBEDDING_SEED, token);
  const v = new Float32Array(dModel);
  for (let i = 0; i < dModel; i++) v[i] = gaussian(rng);
  return v;
}

/** Sinusoidal position codes, [seqLen, dModel] row-major. */
export function positionalEncoding(seqLen, dModel) {
  const pe = new Float32Array(seqLen * dModel);
  for (let pos = 0; pos < seqLen; pos++) {
    for (let i = 0; i < dModel; i += 2) {
      const angle = pos / Math.pow(10000, i / dModel);
      pe[pos * dModel + i] = Math.sin(angle);
      if (i + 1 < dModel) pe[pos * dModel + i + 1] = Math.cos(angle);
    }
  }
  return pe;
}

/** Embeds a token list: [seqLen, dModel] row-major Float32Array. */
export function embed(tokens, dModel) {
  const seqLen = tokens.length;
  const x = positionalEncoding(seqLen, dModel);
  const cache = new Map();
  tokens.forEach((token, pos) => {
    if (!cache.has(token)) cache.set(token, tokenVector(token, dModel));
    const v = cache.get(token);
    for (let i = 0; i < dModel; i++) x[pos * dModel + i] += v[i];
  });
  return x;
}
