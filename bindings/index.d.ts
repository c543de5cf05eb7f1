// Types of the wasm-attention package API. The contract: docs/API.md; extras are marked "extension".

/**
 * Float16Array where the program's TypeScript lib declares it (lib "esnext.float16", or "es2025" and
 * later, as TypeScript 5.7+ ships it), else never: the package accepts one wherever it accepts a
 * Float32Array when the JavaScript engine has it (Chromium 135+, Firefox 129+, Safari 18.2+, Node 24+),
 * its values widened exactly.
 */
export type Float16ArrayIfDeclared = typeof globalThis extends { Float16Array: { prototype: infer T } } ? T : never;

/**
 * A flat, row-major tensor. number[], Float16Array and Float64Array are accepted and converted to
 * float32. Extension: a tensor object { data, shape } (what readSafetensors returns for each tensor)
 * stands for its data, which must then be floating point (or F16 / BF16 bit patterns in a Uint16Array,
 * as readSafetensors(bytes, { widen: false }) gives them); a shape, when given, must hold exactly as
 * many elements as the data.
 */
export type Tensor = Float32Array | Float16ArrayIfDeclared | Float64Array | number[] | TensorObject;
/** Extension: a tensor with its shape, e.g. readSafetensors(…).tensors[name]. */
export type TensorObject =
  | { data: Float32Array | Float16ArrayIfDeclared | Float64Array | number[]; shape?: readonly number[] }
  | SafetensorsTensor;
/**
 * Uint8Array or boolean[]: masked out where 1 / true (as PyTorch's bool masks).
 * Float32Array, Float16Array or Float64Array: added to the scores (e.g. 0 / -Infinity). A number[] is
 * refused as ambiguous.
 */
export type Mask = Uint8Array | boolean[] | Float32Array | Float16ArrayIfDeclared | Float64Array;

/**
 * How a prepared layer or a model stores its weight matrices (arithmetic stays float32): 'f32'
 * (default); 'f16' / 'bf16', each weight rounded to nearest-even once, when the layer is made;
 * 'int8', per output row r a scale s_r = max|w_r| / 127 (1 for a zero row) and q = round-half-even(w / s_r)
 * clamped to ±127, computed with as q·s_r.
 */
export type WeightDtype = 'f32' | 'f16' | 'bf16' | 'int8';
/** How a KV cache stores K (after RoPE) and V: 'f32' (default), or rounded to nearest-even in 'f16' / 'bf16'. */
export type KvDtype = 'f32' | 'f16' | 'bf16';

/** The six builds' files: SIMD, relaxed SIMD or scalar, single-threaded or pthreads (-mt). */
export type WasmFileName =
  | 'wasm-attention-simd.wasm'
  | 'wasm-attention-simd-mt.wasm'
  | 'wasm-attention-relaxed.wasm'
  | 'wasm-attention-relaxed-mt.wasm'
  | 'wasm-attention-scalar.wasm'
  | 'wasm-attention-scalar-mt.wasm';

export interface CreateOptions {
  /**
   * An integer from 1 to 64, or 'auto' (what the environment allows, at most 8). Without
   * SharedArrayBuffer or cross-origin isolation every count means 1. Anything else is a RangeError. Default 1.
   */
  threads?: number | 'auto';
  /**
   * Extension. 'auto' (default): the SIMD build where the engine has WebAssembly SIMD, else the
   * scalar build; false: always the scalar build; true: SIMD required (rejects without it).
   */
  simd?: boolean | 'auto';
  /**
   * Extension. The relaxed build: the SIMD build whose kernels use relaxed SIMD's fused multiply-add
   * (faster; results differ from the SIMD build's in rounding only, within the same tolerance).
   * 'auto' (default): where the engine has relaxed SIMD; false: never; true: required (rejects
   * without it). With simd: false, true is a RangeError.
   */
  relaxedSimd?: boolean | 'auto';
  /**
   * The .wasm bytes of the build that will load, or a map of file name to bytes (the loader takes
   * the entry it needs; files the map lacks load as usual). For bundlers and offline use.
   */
  wasmBinary?: ArrayBuffer | ArrayBufferView | Partial<Record<WasmFileName, ArrayBuffer | ArrayBufferView>>;
  /**
   * Emscripten convention: a file name to its URL (browsers) or path (Node). Asked for the .wasm
   * files and, in browsers, for the pthread workers (wasm-attention-*-mt.worker.mjs).
   */
  locateFile?: (name: string, prefix: string) => string | URL;
}

export interface EngineInfo {
  version: string;
  simd: boolean;
  /** Extension: whether the relaxed-SIMD build runs (its kernels use fused multiply-add). */
  relaxedSimd: boolean;
  /** The threads the engine runs on (1 where threads were asked for but cannot run here). */
  threads: number;
  /**
   * Extension. Why `threads` is 1 although more (or 'auto') was asked for: e.g. "this page is not
   * cross-origin isolated …: serve it with Cross-Origin-Opener-Policy: same-origin and
   * Cross-Origin-Embedder-Policy: require-corp", or no SharedArrayBuffer. null when the threads asked
   * for run, when 1 was asked for, and when 'auto' found one core.
   */
  threadsReason: string | null;
}

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

export interface MemoryStats {
  /** Bytes allocated in the WebAssembly heap now. */ heapInUse: number;
  /** Byte length of WebAssembly memory (it only grows). */ memoryBytes: number;
}

/** What the engine holds, in bytes. */
export interface EngineMemory {
  /** The WebAssembly memory's size (it only grows). */ heapBytes: number;
  /** The weights of its live prepared layers and models, as stored (reduced ones count their reduced bytes). */
  weightBytes: number;
  /** Its live KV caches and model sessions, reserved for their maxLength, as stored. */ cacheBytes: number;
}

export interface Attention {
  readonly info: EngineInfo;
  selfAttention(args: SelfAttentionArgs & { needWeights: false }): WithoutWeights<SelfAttentionResult>;
  selfAttention(args: SelfAttentionArgs & { needWeights?: true }): WithWeights<SelfAttentionResult>;
  selfAttention(args: SelfAttentionArgs): SelfAttentionResult;
  multiHeadAttention(args: MultiHeadAttentionArgs & { needWeights: false }): WithoutWeights<MultiHeadAttentionResult>;
  multiHeadAttention(args: MultiHeadAttentionArgs & { needWeights?: true }): WithWeights<MultiHeadAttentionResult>;
  multiHeadAttention(args: MultiHeadAttentionArgs): MultiHeadAttentionResult;
  createSelfAttention(args: SelfAttentionLayerArgs): PreparedLayer<SelfAttentionLayerForwardArgs, SelfAttentionResult>;
  createMultiHeadAttention(args: MultiHeadAttentionLayerArgs): MultiHeadAttentionLayer;
  /** What the engine holds: its memory, its weights and its caches (bytes). */
  memory(): EngineMemory;
  /** Extension: heap figures, for leak checks and memory budgets. */
  memoryStats(): MemoryStats;
  /**
   * Releases everything the engine holds: its memory, its layers and its worker threads. Any later
   * call on it or its layers throws an Error saying it was disposed; a second dispose does nothing.
   */
  dispose(): void;
  /** Extension: true once dispose() was called. */
  readonly disposed: boolean;
}

export function createAttention(options?: CreateOptions): Promise<Attention>;
export const version: string;

/** Extension: the element types of a .safetensors file that readSafetensors reads. */
export type SafetensorsDtype = 'F16' | 'BF16' | 'F32' | 'F64' | 'I8' | 'U8' | 'I16' | 'U16' | 'I32' | 'U32' | 'I64' | 'U64' | 'BOOL';

/** Extension: one tensor of a .safetensors file, its data a fresh array of its own. */
export interface SafetensorsTensor {
  dtype: SafetensorsDtype;
  /** Outermost first; [] for a scalar. */ shape: number[];
  /**
   * F16, BF16, F32, F64: Float32Array (F16 and BF16 exact, F64 rounded to float32). With { widen: false }:
   * F16 a Float16Array where the JavaScript engine has one, else a Uint16Array of its bit patterns; BF16 a
   * Uint16Array of its bit patterns. I8 Int8Array, U8 and BOOL Uint8Array, I16 Int16Array, U16 Uint16Array,
   * I32 Int32Array, U32 Uint32Array, I64 BigInt64Array, U64 BigUint64Array.
   */
  data:
    | Float32Array
    | Float16ArrayIfDeclared
    | Int8Array
    | Uint8Array
    | Int16Array
    | Uint16Array
    | Int32Array
    | Uint32Array
    | BigInt64Array
    | BigUint64Array;
}

/** Extension: readSafetensors' options. */
export interface ReadSafetensorsOptions {
  /**
   * true (default): F16 and BF16 tensors become Float32Array, exactly. false: they keep their 16-bit
   * values (F16 as a Float16Array where the JavaScript engine has one, else a Uint16Array of its bit
   * patterns; BF16 as a Uint16Array of its bit patterns), half the memory.
   */
  widen?: boolean;
}

/** Extension: what readSafetensors returns. Both records have no prototype (a name may be "__proto__"). */
export interface SafetensorsFile {
  /** Tensor name → tensor. */ tensors: Record<string, SafetensorsTensor>;
  /** The file's __metadata__ (string → string), {} when it has none. */ metadata: Record<string, string>;
}

/**
 * Extension: reads a .safetensors file (pure JavaScript, no engine needed). A malformed file is a
 * RangeError that names what is wrong and where; bytes of another type are a TypeError.
 */
export function readSafetensors(
  bytes: ArrayBuffer | SharedArrayBuffer | ArrayBufferView,
  options?: ReadSafetensorsOptions,
): SafetensorsFile;

/** Extension: a tensor of a state dict: a flat array, or an object with its data (and shape). */
export type StateDictTensor = Tensor | { data: Tensor; shape?: number[] } | SafetensorsTensor;

/** Extension: the weight arguments attentionArgsFromStateDict found (only those present; outProjWeight always). */
export type StateDictAttentionArgs = {
  [K in 'inProjWeight' | 'inProjBias' | 'qProjWeight' | 'kProjWeight' | 'vProjWeight' | 'qProjBias' | 'kProjBias' | 'vProjBias' |
    'outProjBias']?: Float32Array;
} & { outProjWeight: Float32Array };

/**
 * Extension: the weights of one attention module of a PyTorch state_dict (or readSafetensors(…).tensors),
 * from the names that start with `prefix`, as createMultiHeadAttention's arguments: nn.MultiheadAttention's
 * names (in_proj_weight, in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight, out_proj.weight,
 * out_proj.bias) and Hugging Face / LLaMA's (q_proj, k_proj, v_proj, o_proj or out_proj, each .weight and
 * optional .bias). Add embedDim, numHeads, numKvHeads, rope, … yourself. A Float32Array is returned as it
 * is (not copied); Float64Array and number[] are converted. Any other name under the prefix, bias_k /
 * bias_v, no name under it, or no output projection is a TypeError.
 */
export function attentionArgsFromStateDict(stateDict: Record<string, StateDictTensor>, prefix?: string): StateDictAttentionArgs;

/** The masking arguments of a call, as multiHeadAttention takes them. */
export interface MaskRule {
  isCausal?: boolean;
  slidingWindow?: number;
  positionOffset?: number;
}
/** Extension. The K/V head query head `head` reads: ⌊head · numKvHeads / numHeads⌋. */
export function kvHeadOf(head: number, numHeads: number, numKvHeads: number): number;
/**
 * Extension. Whether key j is hidden from query row i, with pos = positionOffset + i: when isCausal
 * and j > pos, or when slidingWindow and pos − j ≥ slidingWindow. The engine's weights are 0 exactly there.
 */
export function isKeyMasked(rule: MaskRule, i: number, j: number): boolean;
/**
 * Extension. mulberry32, the seeded generator the sampler draws from (createSampler's and generate's
 * `seed`): a function returning floats in [0, 1), the same sequence for a seed in every host.
 */
export function mulberry32(seed: number): () => number;

// ---------------------------------------------------------------- Models (docs/models.md)

/** The families loadModel runs, by config.json's model_type. */
export type ModelType = 'llama' | 'mistral' | 'qwen2' | 'gpt2' | 'bert';

/** Extension: every ModelType, as an array (a page can refuse a config.json before loading it). */
export const SUPPORTED_MODEL_TYPES: readonly ModelType[];

/** model.config: normalised from config.json (these keys and no others). */
export interface ModelConfig {
  readonly modelType: ModelType;
  readonly numLayers: number;
  readonly hiddenSize: number;
  /** Query heads. */ readonly numHeads: number;
  /** K/V heads (grouped-query attention); numHeads for gpt2 and bert. */ readonly numKvHeads: number;
  readonly headDim: number;
  /** Rows of the embedding and the LM head (may exceed the tokenizer's vocabulary). */ readonly vocabSize: number;
  /** max_position_embeddings (n_positions for gpt2). */ readonly maxPositions: number;
  /** true for the decoders, false for bert. */ readonly causal: boolean;
}

/** Token ids: an Int32Array (what encode returns) or an array of integers. */
export type TokenIds = Int32Array | readonly number[];

/** A checkpoint's weights: one .safetensors file's bytes, its shards, or what readSafetensors returned. */
export type ModelWeights =
  | ArrayBuffer
  | ArrayBufferView
  | SafetensorsFile
  | ReadonlyArray<ArrayBuffer | ArrayBufferView | SafetensorsFile>;

/** A checkpoint given as its parsed files. */
export interface ModelFiles {
  /** The parsed config.json. */ config: object;
  weights: ModelWeights;
  /** The parsed tokenizer.json; without one, encode/decode throw and generate's text is null. */
  tokenizer?: object | null;
}

/**
 * Where a checkpoint is: a URL or URL path of its folder (fetched; a relative one resolves against the
 * page or worker), a folder path (Node), or the parsed files.
 */
export type ModelSource = string | URL | ModelFiles;

/** Extension: loadModel's progress while it reads a file (bytes of that file). */
export interface LoadProgress {
  /** The file's name in the checkpoint's folder, e.g. 'model-00001-of-00002.safetensors'. */ file: string;
  loaded: number;
  /** null when the server does not say (a compressed response, no Content-Length). */ total: number | null;
}

export interface LoadModelOptions {
  /**
   * How the engine stores every 2-D weight matrix of the projections, the MLPs and an untied LM head:
   * 'f32' (default), 'f16', 'bf16' or 'int8' (see WeightDtype). Embeddings (and a tied head), norms and
   * biases stay as the checkpoint stores them.
   */
  dtype?: WeightDtype;
  /** Extension: called as each file's bytes arrive. */ onProgress?: (progress: LoadProgress) => void;
  /** Extension: cancels loading (the promise rejects with the signal's reason). */ signal?: AbortSignal;
  /** Extension: the fetch to use for URL sources (default globalThis.fetch). */
  fetch?: (url: string, init?: RequestInit) => Promise<Response>;
  /** Extension: options given to every fetch (headers such as Authorization, credentials, cache). */
  fetchOptions?: RequestInit;
}

/**
 * Which attention to return: true (every layer and head), false (none), or some layers and heads
 * (either list may be left out: every layer / every head; each index at most once).
 */
export type AttentionSelection = boolean | { layers?: readonly number[]; heads?: readonly number[] };

/** Attention by layer: [heads, T, keys] for a listed layer, null for the others. */
export type LayerAttention = (Float32Array | null)[];

/**
 * Extension. Which hidden states to return: true (every entry), false (none), or some entries
 * (`layers` left out: every one; each index 0 … numLayers at most once).
 */
export type HiddenStatesSelection = boolean | { layers?: readonly number[] };

/**
 * Extension. Hidden states [T, hiddenSize] by entry, numLayers + 1 of them, as transformers'
 * output_hidden_states: entry 0 the embedding output (bert: after its embedding LayerNorm), entry l
 * the input of layer l (the residual stream before its input norm), entry numLayers the final hidden
 * states (the same values as `hidden`: after the final norm; bert: the last layer's output). null for
 * an entry not asked.
 */
export type HiddenStates = (Float32Array | null)[];

export interface ForwardOptions {
  /** A session of this model: the tokens are appended to it and positions continue from its length. */
  session?: ModelSession;
  /** Default false. */ attention?: AttentionSelection;
  /** 'all' [T, vocabSize] (default), 'last' [vocabSize]; extension: 'none' (no LM head: null). */
  logits?: 'all' | 'last' | 'none';
  /** bert only: one token type per id (default zeros). */ tokenTypeIds?: TokenIds;
  /** Extension, default false: the residual stream at every layer's input (see HiddenStates). */
  hiddenStates?: HiddenStatesSelection;
}

export interface ForwardResult {
  /** [T, vocabSize] or [vocabSize]; null for 'none' and for a bert checkpoint without its MLM head. */
  logits: Float32Array | null;
  /** null unless asked for. */ attention: LayerAttention | null;
  /** [T, hiddenSize]: the final hidden states (after the last norm; bert: the last layer's output). */
  hidden: Float32Array;
  /** Extension: null unless asked for. */ hiddenStates: HiddenStates | null;
}

/** A decoder's KV caches (every layer, inside the engine) for incremental decoding. */
export interface ModelSession {
  /** Tokens held. */ readonly length: number;
  readonly maxLength: number;
  /** Keeps the first n tokens (0 ≤ n ≤ length). */ truncate(n: number): void;
  /** Frees its memory; using it afterwards throws. */ dispose(): void;
  /** Extension: true once it, its model or its engine was disposed. */ readonly disposed: boolean;
}

export interface SessionOptions {
  /** Most tokens it holds (memory reserved once). Default config.maxPositions. */ maxLength?: number;
  /** How cached K and V are stored: 'f32' (default), 'f16' or 'bf16'. */ kvDtype?: KvDtype;
}

/** What onToken receives for each new token. */
export interface GeneratedToken {
  id: number;
  /** This token's piece of the text (pieces join to the result's text); null without a tokenizer. */
  text: string | null;
  /** [vocabSize]: the logits this token was chosen from. */ logits: Float32Array;
  /**
   * Extension, with generate's `attention` option: per listed layer, [heads, keys] — how the position
   * that chose this token (the last one fed) attends to every token up to it; null for other layers.
   */
  attention?: LayerAttention;
}

export interface GenerateOptions {
  /** Default 32. */ maxNewTokens?: number;
  /** 0 (default) is greedy: the first maximal logit. */ temperature?: number;
  /** 0 (default): every token. */ topK?: number;
  /** 1 (default): every token. */ topP?: number;
  /** An integer: sampling with a seed is reproducible. */ seed?: number;
  /** Default true: an end-of-sequence token (config.json's eos_token_id) ends generation (and is kept). */
  stopAtEos?: boolean;
  /** Continue in this session: it ends holding the prompt and every new token. */ session?: ModelSession;
  /** Called per new token; returning false (or a promise of false) stops after it. */
  onToken?: (token: GeneratedToken) => boolean | void | Promise<boolean | void>;
  /** Extension: attention to hand to onToken with each token (as forward's option). */
  attention?: AttentionSelection;
}

/** Extension: what model.createSampler takes (generate's sampling options). */
export interface SamplerOptions {
  /** 0 (default) is greedy: the first maximal logit. */ temperature?: number;
  /** 0 (default): every token. */ topK?: number;
  /** 1 (default): every token. */ topP?: number;
  /** An integer: the same tokens as generate with this seed, given the same logits. */ seed?: number;
}

export interface GenerateResult {
  /** The new tokens only (not the prompt). */ ids: Int32Array;
  /** Their decoded text (special tokens skipped); null without a tokenizer. */ text: string | null;
}

export interface Model {
  readonly config: ModelConfig;
  /** Text → ids with tokenizer.json's pipeline; a TypeError without a tokenizer. */
  encode(text: string, options?: { addSpecialTokens?: boolean }): Int32Array;
  /** Ids → text; ids the tokenizer does not know decode to nothing. A TypeError without a tokenizer. */
  decode(ids: TokenIds, options?: { skipSpecialTokens?: boolean }): string;
  forward(
    ids: TokenIds,
    options: ForwardOptions & { attention: true | { layers?: readonly number[]; heads?: readonly number[] } },
  ): ForwardResult & { attention: LayerAttention };
  forward(ids: TokenIds, options?: ForwardOptions): ForwardResult;
  /** Decoders only (a TypeError for bert). */ createSession(options?: SessionOptions): ModelSession;
  /** prompt: text (encoded with special tokens) or ids. Resolves to the new tokens. */
  generate(prompt: string | TokenIds, options?: GenerateOptions): Promise<GenerateResult>;
  /** Extension: generate's token chooser, logits → a token id (for a decoding loop of one's own). */
  createSampler(
    options?: SamplerOptions,
  ): (logits: Float32Array | Float16ArrayIfDeclared | Float64Array | readonly number[]) => number;
  /** Frees the model's memory and its sessions'; later calls throw. A second dispose does nothing. */
  dispose(): void;
  /** Extension: true once it or its engine was disposed. */ readonly disposed: boolean;
}

/** A Hugging Face checkpoint (llama, mistral, qwen2, gpt2, bert) as a model that runs in the engine. */
export function loadModel(attn: Attention, source: ModelSource, options?: LoadModelOptions): Promise<Model>;
