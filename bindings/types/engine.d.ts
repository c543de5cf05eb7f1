// ---------------------------------------------------------------- The engine object (Attention) and createAttention

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
