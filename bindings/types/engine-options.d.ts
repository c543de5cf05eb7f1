// ---------------------------------------------------------------- createAttention's options and the engine's info

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
