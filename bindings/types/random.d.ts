// ---------------------------------------------------------------- The sampler's seeded generator (mulberry32)

/**
 * Extension. mulberry32, the seeded generator the sampler draws from (createSampler's and generate's
 * `seed`): a function returning floats in [0, 1), the same sequence for a seed in every host.
 */
export function mulberry32(seed: number): () => number;
