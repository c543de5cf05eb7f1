// ---------------------------------------------------------------- Attention calls, prepared layers and KV caches

export interface SelfAttentionLayerArgs {
  dModel: number;
  /** [dK, dModel] */ wq: Tensor;
  /** [dK, dModel] */ wk: Tensor;
  /** [dV, dModel] */ wv: Tensor;
  /** [dK] */ bq?: Tensor;
  /** [dK] */ bk?: Tensor;
  /** [dV] */ bv?: Tensor;
  /** createSelfAttention: how the layer stores wq, wk and wv. Default 'f32'. */ weightDtype?: WeightDtype;
}

export interface SelfAttentionForwardArgs {
  /** [batch, seqLen, dModel] */ x: Tensor;
  seqLen: number;
  /** Default 1. */ batch?: number;
  /** Key j > query i is masked. Default false. */ isCausal?: boolean;
  /** [seqLen, seqLen] */ attnMask?: Mask;
  /** Default 1 / sqrt(dK). */ scale?: number;
  /** Default true. */ needWeights?: boolean;
  /** Extension: also return the engine's intermediate tensors. Default false. */
  returnIntermediates?: boolean;
}

export type SelfAttentionArgs = SelfAttentionLayerArgs & SelfAttentionForwardArgs;

/** Rotary position embedding of Q and K (after their bias). */
export interface RopeOptions {
  /** Entries of each head vector that rotate, even, ≤ headDim. Default headDim. */ dim?: number;
  /** φ = position·base^(−2k/dim). Default 10000. */ base?: number;
  /** Pairs (x_2k, x_2k+1) as GPT-J; default false: (x_k, x_k+dim/2) as LLaMA / GPT-NeoX. */ interleaved?: boolean;
}

export interface MultiHeadAttentionLayerArgs {
  embedDim: number;
  /** embedDim % numHeads must be 0 unless headDim is given. */ numHeads: number;
  /** Default embedDim. */ kdim?: number;
  /** Default embedDim. */ vdim?: number;
  /** K/V heads (grouped-query; 1 = multi-query); divides numHeads. Default numHeads. */ numKvHeads?: number;
  /** Width of one head. Default embedDim / numHeads. */ headDim?: number;
  /** [3·embedDim, embedDim], rows Q then K then V (not with numKvHeads / headDim). */ inProjWeight?: Tensor;
  /** [numHeads·headDim, embedDim] */ qProjWeight?: Tensor;
  /** [numKvHeads·headDim, kdim] */ kProjWeight?: Tensor;
  /** [numKvHeads·headDim, vdim] */ vProjWeight?: Tensor;
  /** [(numHeads + 2·numKvHeads)·headDim] (3·embedDim without the decoder arguments) */ inProjBias?: Tensor;
  /** [numHeads·headDim], instead of inProjBias. */ qProjBias?: Tensor;
  /** [numKvHeads·headDim], instead of inProjBias. */ kProjBias?: Tensor;
  /** [numKvHeads·headDim], instead of inProjBias. */ vProjBias?: Tensor;
  /** [embedDim, numHeads·headDim] */ outProjWeight: Tensor;
  /** [embedDim] */ outProjBias?: Tensor;
  /** Rotary embedding of Q and K by position. */ rope?: boolean | RopeOptions;
  /** true: the ALiBi paper's slopes; or numHeads slopes. Adds slope_h·(j − pos(i)) to the scores. */
  alibi?: boolean | Tensor;
  /** Key j is masked for query i when pos(i) − j ≥ slidingWindow (an integer ≥ 1). */ slidingWindow?: number;
  /**
   * createMultiHeadAttention: how the layer stores its projection matrices (biases stay float32).
   * Default 'f32'.
   */
  weightDtype?: WeightDtype;
}

export interface MultiHeadAttentionForwardArgs {
  /** [batch, tgtLen, embedDim] */ query: Tensor;
  /** [batch, srcLen, kdim]; default query. */ key?: Tensor;
  /** [batch, srcLen, vdim]; default key. */ value?: Tensor;
  /** Default 1. */ batch?: number;
  /** Inferred from query's length when omitted. */ tgtLen?: number;
  /** Inferred from key's length when omitted. */ srcLen?: number;
  /** [tgtLen, srcLen] or [batch·numHeads, tgtLen, srcLen] */ attnMask?: Mask;
  /** [batch, srcLen] (cache.length columns with a cache): Uint8Array (1 = ignore this key) or Float32Array (added). */
  keyPaddingMask?: Mask;
  /** Key j > pos(i) = positionOffset + i is masked. Default false. */ isCausal?: boolean;
  /** Default 1 / sqrt(headDim). */ scale?: number;
  /** Default true. */ needWeights?: boolean;
  /** Default true. */ averageAttnWeights?: boolean;
  /** Extension: also return the engine's intermediate tensors (not with a cache). Default false. */
  returnIntermediates?: boolean;
  /** Position of the first query token (keys are at 0 … srcLen−1). Default 0, or the cache's length. */
  positionOffset?: number;
  /**
   * Prepared layers only: a cache of this layer. Then key and value are absent: the call appends the K
   * and V of its own tokens and attends over every cached token (srcLen = cache.length after the call).
   */
  cache?: KvCache;
}

/** K and V of earlier tokens of a prepared layer, for incremental decoding. */
export interface KvCache {
  /** Tokens held. */ readonly length: number;
  readonly maxLength: number;
  readonly batch: number;
  /** How it stores K and V. */ readonly dtype: KvDtype;
  /** Keeps the first n tokens (0 ≤ n ≤ length). */ truncate(n: number): void;
  /** Frees its memory; a forward with it afterwards throws. */ dispose(): void;
  readonly disposed: boolean;
}

export interface KvCacheArgs {
  /** Most tokens it holds (memory reserved once). */ maxLength: number;
  /** Default 1. */ batch?: number;
  /** How K and V are stored: 'f32' (default), 'f16' or 'bf16' (rounded to nearest-even). */ dtype?: KvDtype;
}

export type MultiHeadAttentionArgs = MultiHeadAttentionLayerArgs & MultiHeadAttentionForwardArgs;

/** Extension: what happens inside, computed by the engine (for teaching and debugging). */
export interface SelfAttentionIntermediates {
  /** [batch, seqLen, dK] */ q: Float32Array;
  /** [batch, seqLen, dK] */ k: Float32Array;
  /** [batch, seqLen, dV] */ v: Float32Array;
  /** [batch, seqLen, seqLen]: Q·Kᵀ, unscaled and unmasked. */ scores: Float32Array;
  /** [batch, seqLen, seqLen]: scores·scale + masks, -Infinity where masked. */ scaledScores: Float32Array;
}

export interface MultiHeadAttentionIntermediates {
  /** [batch, tgtLen, numHeads·headDim]; head h is columns h·headDim … (h+1)·headDim−1 (rotated with rope). */
  q: Float32Array;
  /** [batch, srcLen, numKvHeads·headDim] */ k: Float32Array;
  /** [batch, srcLen, numKvHeads·headDim] */ v: Float32Array;
  /** [batch, numHeads, tgtLen, srcLen]: Q·Kᵀ, unscaled and unmasked. */ scores: Float32Array;
  /** [batch, numHeads, tgtLen, srcLen]: scaled and masked, -Infinity where masked. */ scaledScores: Float32Array;
  /** [batch, tgtLen, numHeads·headDim]: heads concatenated, before the output projection. */ attnOutput: Float32Array;
}

export interface SelfAttentionResult {
  /** [batch, seqLen, dV] */ output: Float32Array;
  /** [batch, seqLen, seqLen], or null when needWeights is false. */ weights: Float32Array | null;
  intermediates?: SelfAttentionIntermediates;
}

export interface MultiHeadAttentionResult {
  /** [batch, tgtLen, embedDim] */ output: Float32Array;
  /** [batch, tgtLen, srcLen] averaged, [batch, numHeads, tgtLen, srcLen], or null. */
  weights: Float32Array | null;
  intermediates?: MultiHeadAttentionIntermediates;
}

/** A result whose weights were asked for (needWeights absent or true), or not (needWeights: false). */
export type WithWeights<Result> = Result & { weights: Float32Array };
export type WithoutWeights<Result> = Result & { weights: null };

export interface PreparedLayer<Args, Result> {
  forward(args: Args & { needWeights: false }): WithoutWeights<Result>;
  forward(args: Args & { needWeights?: true }): WithWeights<Result>;
  forward(args: Args): Result;
  /** Frees the layer's WebAssembly memory; forward afterwards throws. */
  dispose(): void;
  /** True once the layer or its engine was disposed. */
  readonly disposed: boolean;
}

/**
 * What a prepared layer's forward takes: its own arguments, and the layer's creation arguments again if
 * the caller likes (one object may serve both calls); a repeated one must agree with the layer, else a
 * RangeError, and the weights in use stay the ones given at creation.
 */
export type SelfAttentionLayerForwardArgs = SelfAttentionForwardArgs & Partial<SelfAttentionLayerArgs>;
export type MultiHeadAttentionLayerForwardArgs = MultiHeadAttentionForwardArgs & Partial<MultiHeadAttentionLayerArgs>;

export interface MultiHeadAttentionLayer extends PreparedLayer<MultiHeadAttentionLayerForwardArgs, MultiHeadAttentionResult> {
  /** A KV cache of this layer (needs kdim = vdim = embedDim). */ createKvCache(args: KvCacheArgs): KvCache;
}
