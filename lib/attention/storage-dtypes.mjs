// The storage options read and checked: a prepared layer's weightDtype (loadModel's dtype) and a
// KV cache's dtype (createSession's kvDtype). The names are the engine's (bindings/slot-codes.mjs).
import { KV_DTYPES, WEIGHT_DTYPES } from '../../bindings/slot-codes.mjs';

const WEIGHT_DTYPES_TEXT = "'f32', 'f16', 'bf16' or 'int8'";
const KV_DTYPES_TEXT = `one of ${KV_DTYPES.map((d) => `'${d}'`).join(', ')}`;

// A weight dtype option (weightDtype, loadModel's dtype): 'f32' when absent.
export function parseWeightDtype(c, name) {
  const value = c.args[name];
  if (value === undefined) return 'f32';
  if (typeof value !== 'string') throw c.typeError(name, WEIGHT_DTYPES_TEXT, value);
  if (!WEIGHT_DTYPES.includes(value)) throw c.rangeError(name, WEIGHT_DTYPES_TEXT, JSON.stringify(value));
  return value;
}

/** The KV cache storage option `name` of a Checker's arguments ('f32' when absent). */
export function kvDtypeOf(c, name) {
  const value = c.args[name];
  if (value === undefined) return 'f32';
  if (typeof value !== 'string') throw c.typeError(name, KV_DTYPES_TEXT, value);
  if (!KV_DTYPES.includes(value)) throw c.rangeError(name, KV_DTYPES_TEXT, JSON.stringify(value));
  return value;
}
