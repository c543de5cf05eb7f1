'use strict';
// lib/model/sampling.mjs's createSampler as it was before it stopped sorting the vocabulary (commit
// 9110871), kept word for word (its checks left out) so that model-sampling.test.js can show the
// new one draws the same token from every row for every seed: a seeded generation keeps its tokens.

/** The old next(logits) over a [0, 1) generator `random` (mulberry32 of a seed, as the sampler). */
function samplerBefore({ temperature = 0, topK = 0, topP = 1 }, random, greedy) {
  return function next(row) {
    if (temperature === 0) return greedy(row);
    // Candidates by descending logit, ties by ascending id: one order on every engine.
    let ids = [];
    for (let i = 0; i < row.length; i++) if (row[i] > -Infinity) ids.push(i);
    if (ids.length === 0) return greedy(row);
    ids.sort((a, b) => row[b] - row[a] || a - b);
    // top-k keeps every id tied with the k-th logit, as transformers' TopKLogitsWarper does.
    if (topK > 0 && topK < ids.length) {
      const kth = row[ids[topK - 1]];
      ids = ids.filter((id) => row[id] >= kth);
    }
    // Softmax of logits / temperature in float64, less the largest (so exp never overflows); +Infinity
    // logits share all the probability.
    const max = row[ids[0]] / temperature;
    const weights = ids.map((id) =>
      max === Infinity ? Number(row[id] === Infinity) : Math.exp(row[id] / temperature - max),
    );
    const total = weights.reduce((a, b) => a + b, 0);
    // top-p: the shortest prefix whose probability reaches topP (at least one token).
    let keep = ids.length;
    if (topP < 1) {
      let cumulative = 0;
      keep = ids.findIndex((_, i) => (cumulative += weights[i] / total) >= topP) + 1 || ids.length;
    }
    const kept = weights.slice(0, keep).reduce((a, b) => a + b, 0);
    let u = random() * kept;
    for (let i = 0; i < keep; i++) {
      u -= weights[i];
      if (u < 0) return ids[i];
    }
    return ids[keep - 1]; // u landed on the rounding of the sum
  };
}

module.exports = { samplerBefore };
