// What a value is, told without running user code: the real class and length of a typed array (read
// through the intrinsic getters of %TypedArray%.prototype, never its own properties) and a short
// description for error messages. Shared by the argument checks and the file readers.

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
/** The intrinsic getter of %TypedArray%.prototype[key] (call it with the view as `this`). */
export const intrinsic = (key) => Reflect.getOwnPropertyDescriptor(TypedArrayPrototype, key).get;
const tagOf = intrinsic(Symbol.toStringTag); // undefined for anything but a real typed array
const lengthOf = intrinsic('length'); // 0 once the buffer is detached or shrunk past the view

/** 'Float32Array', 'Uint8Array', … for a real typed array; undefined otherwise (Proxies included). */
export function typedArrayName(value) {
  return value !== null && typeof value === 'object' ? tagOf.call(value) : undefined;
}

/** The real element count of a typed array (what a copy of it copies). */
export const typedLength = (view) => lengthOf.call(view);

// Never runs user code (no property of the value is read but through intrinsics).
export function describe(value) {
  if (value === null) return 'null';
  const typed = typedArrayName(value);
  if (typed) return `${/^[AEIOU]/.test(typed) ? 'an' : 'a'} ${typed} of length ${lengthOf.call(value)}`;
  if (Array.isArray(value)) return 'an Array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 20 ? value.slice(0, 20) + '…' : value)}`;
  if (typeof value === 'object') {
    // `in` may run a Proxy's trap: harmless here, nothing is held while checks run. (Not
    // instanceof: a typed array of another realm, a vm context or a frame, is no instance here.)
    let poses = false;
    try {
      poses = 'BYTES_PER_ELEMENT' in value;
    } catch {
      poses = true;
    }
    return poses
      ? 'an object posing as a typed array (a Proxy, or an object with a typed array prototype)'
      : 'an object';
  }
  if (typeof value === 'function') return 'a function';
  if (value === undefined) return 'nothing (undefined)';
  return `${typeof value} ${String(value)}`;
}
