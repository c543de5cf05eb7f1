// ---------------------------------------------------------------- Weight files: readSafetensors, state dicts

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
