// The engine's inputs for a set of settings: embeddings of the tokens and the projection
// weights (the last few weight sets are kept, as making them is the slow part).
import { embed } from './embeddings.js';
import { multiHeadWeights, selfAttentionWeights } from './projection-weights.js';

export function createInputBuilder({ keep = 4 } = {}) {
  const cache = new Map();
  const cached = (key, make) => {
    if (!cache.has(key)) {
      if (cache.size >= keep) cache.delete(cache.keys().next().value);
      cache.set(key, make());
    }
    return cache.get(key);
  };

  /** → { self, mhaHeads, mhaAverage }: the arguments of the three engine calls. */
  return function buildArgs(s, tokens) {
    const n = tokens.length;
    const x = embed(tokens, s.dModel);
    const sw = cached(`self|${s.dModel}|${s.seed}|${s.preset}`, () =>
      selfAttentionWeights({ dModel: s.dModel, seed: s.seed, preset: s.preset }),
    );
    const headsKey = s.preset === 'identity' ? s.numHeads : '*';
    const mw = cached(`mha|${s.dModel}|${headsKey}|${s.seed}|${s.preset}`, () =>
      multiHeadWeights({ embedDim: s.dModel, numHeads: s.numHeads, seed: s.seed, preset: s.preset }),
    );
    const mha = {
      query: x,
      embedDim: s.dModel,
      numHeads: s.numHeads,
      inProjWeight: mw.inProjWeight,
      outProjWeight: mw.outProjWeight,
      isCausal: s.isCausal,
      needWeights: true,
    };
    return {
      self: {
        x,
        seqLen: n,
        dModel: s.dModel,
        wq: sw.wq,
        wk: sw.wk,
        wv: sw.wv,
        isCausal: s.isCausal,
        needWeights: true,
        returnIntermediates: true,
      },
      mhaHeads: { ...mha, averageAttnWeights: false, returnIntermediates: true },
      mhaAverage: { ...mha, averageAttnWeights: true },
    };
  };
}

/** The engine calls for a set of arguments, grouped as engine.run expects. */
export function engineGroups(args) {
  return [
    { label: 'Self-attention', calls: [{ key: 'self', method: 'selfAttention', args: args.self }] },
    {
      label: 'Multi-head attention',
      calls: [
        { key: 'mhaHeads', method: 'multiHeadAttention', args: args.mhaHeads },
        { key: 'mhaAverage', method: 'multiHeadAttention', args: args.mhaAverage },
      ],
    },
  ];
}
