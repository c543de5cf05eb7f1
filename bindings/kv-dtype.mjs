// How a KV cache stores K and V: createKvCache's dtype and createSession's kvDtype. The index of a
// name is the engine's code for it (wa::KvDtype in src/attention.h).
export const KV_DTYPES = ['f32', 'f16', 'bf16'];
const ALLOWED = `one of ${KV_DTYPES.map((d) => `'${d}'`).join(', ')}`;

/** The storage option `name` of a Checker's arguments ('f32' when absent). */
export function kvDtypeOf(c, name) {
  const value = c.args[name];
  if (value === undefined) return 'f32';
  if (typeof value !== 'string') throw c.typeError(name, ALLOWED, value);
  if (!KV_DTYPES.includes(value)) throw c.rangeError(name, ALLOWED, JSON.stringify(value));
  return value;
}

export const kvDtypeCode = (dtype) => KV_DTYPES.indexOf(dtype);
