// ---------------------------------------------------------------- Models (docs/models.md)

/** The families loadModel runs, by config.json's model_type (the build writes this union from the family registry). */
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

/** A Hugging Face checkpoint (of a ModelType) as a model that runs in the engine. */
export function loadModel(attn: Attention, source: ModelSource, options?: LoadModelOptions): Promise<Model>;
