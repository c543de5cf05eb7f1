// Types of the wasm-attention package API. The contract: docs/API.md; extras are marked "extension".

// ---------------------------------------------------------------- Tensors, masks and storage dtypes

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
