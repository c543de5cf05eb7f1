// Argument checks of the views: a TypeError or RangeError that names the option, what was
// expected and what was given, thrown before anything is drawn or changed.

/** A short description of a value for error messages (never its whole contents). */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of length ${value.length}`;
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return `${typeof value} ${String(value)}`;
}

export function checkElement(view, element) {
  if (!element || typeof element !== 'object' || element.nodeType !== 1 || typeof element.append !== 'function')
    throw new TypeError(`${view}: element must be a DOM element to draw into, got ${describe(element)}`);
}

export function checkOptions(view, options) {
  if (!options || typeof options !== 'object' || Array.isArray(options))
    throw new TypeError(`${view}: options must be an object, got ${describe(options)}`);
}

export function checkTokens(view, name, tokens) {
  if (!Array.isArray(tokens) || tokens.length === 0)
    throw new TypeError(`${view}: ${name} must be a non-empty array of strings, got ${describe(tokens)}`);
  const bad = tokens.findIndex((t) => typeof t !== 'string');
  if (bad >= 0) throw new TypeError(`${view}: ${name}[${bad}] must be a string, got ${describe(tokens[bad])}`);
}

export function checkFloat32(view, name, array, length) {
  if (!(array instanceof Float32Array))
    throw new TypeError(`${view}: ${name} must be a Float32Array, got ${describe(array)}`);
  if (length !== undefined && array.length !== length)
    throw new RangeError(`${view}: ${name} must have ${length} elements, got ${array.length}`);
}

export function checkBoolean(view, name, value) {
  if (value !== undefined && typeof value !== 'boolean')
    throw new TypeError(`${view}: ${name} must be true or false, got ${describe(value)}`);
}

export function checkString(view, name, value) {
  if (value !== undefined && typeof value !== 'string')
    throw new TypeError(`${view}: ${name} must be a string, got ${describe(value)}`);
}

export function checkFunction(view, name, value) {
  if (value !== undefined && typeof value !== 'function')
    throw new TypeError(`${view}: ${name} must be a function, got ${describe(value)}`);
}

/** An integer in [min, max], or undefined when allowed. */
export function checkIndex(view, name, value, min, max) {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new TypeError(`${view}: ${name} must be an integer, got ${describe(value)}`);
  if (value < min || value > max) throw new RangeError(`${view}: ${name} must be from ${min} to ${max}, got ${value}`);
}

/** Throws on option names the view does not know (a typo would otherwise be ignored silently). */
export function checkKnown(view, options, known) {
  for (const key of Object.keys(options))
    if (!known.includes(key))
      throw new TypeError(`${view}: unknown option ${JSON.stringify(key)}; expected one of ${known.join(', ')}`);
}

/**
 * `attention` as the model returns it: an array over layers of Float32Array [numHeads, T, T]
 * with T = tokens.length, null for a layer that was not asked for (at least one is there).
 * Returns numHeads (the same in every layer).
 */
export function checkAttention(view, attention, tokens) {
  if (!Array.isArray(attention) || !attention.some((a) => a != null))
    throw new TypeError(
      `${view}: attention must be an array over layers of Float32Array [numHeads, T, T] (null for a layer not computed), got ${describe(attention)}`,
    );
  const cells = tokens.length * tokens.length;
  let heads = 0;
  attention.forEach((layer, l) => {
    if (layer == null) return;
    checkFloat32(view, `attention[${l}]`, layer);
    if (layer.length === 0 || layer.length % cells !== 0)
      throw new RangeError(
        `${view}: attention[${l}] must hold numHeads × ${tokens.length} × ${tokens.length} weights (tokens.length = ${tokens.length}), got ${layer.length}`,
      );
    const h = layer.length / cells;
    if (heads > 0 && h !== heads)
      throw new RangeError(`${view}: attention[${l}] has ${h} heads, expected ${heads} as the layers before it`);
    heads = h;
  });
  return heads;
}

/** Extension numberFrom: visible layer and head numbers from 0 (as attention is indexed) or 1. */
export function checkNumberFrom(view, value) {
  if (value !== undefined && value !== 0 && value !== 1)
    throw new RangeError(`${view}: numberFrom must be 0 or 1, got ${describe(value)}`);
}
