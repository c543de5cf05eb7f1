// The storage options read and checked: a prepared layer's weightDtype (loadModel's dtype) and a
// KV cache's dtype (createSession's kvDtype). The names are the engine's (bindings/slot-codes.mjs).
import { KV_DTYPES, WEIGHT_DTYPES } from '../../bindings/slot-codes.mjs';

const WEIGHT_DTYPES_TEXT = "'f32', 'f16', 'bf16' or 'int8'";
const KV_DTYPES_TEXT = `one of ${KV_DTYPES.map((d) => `'${d}'`).join(', ')}`;

// A storage dtype option of a Checker's arguments: 'f32' when absent, else one of `allowed`.
function dtypeOption(c, name, allowed, text) {
  const value = c.args[name];
  if (value === undefined) return 'f32';
  if (typeof value !== 'string') throw c.typeError(name, text, value);
  if (!allowed.includes(value)) throw c.rangeError(name, text, JSON.stringify(value));
  return value;
}

/** A weight dtype option (weightDtype, loadModel's dtype): 'f32' when absent. */
export const parseWeightDtype = (c, name) => dtypeOption(c, name, WEIGHT_DTYPES, WEIGHT_DTYPES_TEXT);

/** The KV cache storage option `name` of a Checker's arguments ('f32' when absent). */
export const kvDtypeOf = (c, name) => dtypeOption(c, name, KV_DTYPES, KV_DTYPES_TEXT);
