// Plain-data copies of the page's numbers for tests and the console: typed arrays become
// { $typed, base64 } with their exact bytes (tests/browser/harness.js revives them).

function bytesToBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function serialize(value) {
  if (ArrayBuffer.isView(value)) {
    return {
      $typed: value.constructor.name,
      base64: bytesToBase64(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)),
    };
  }
  if (Array.isArray(value)) return value.map(serialize);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, serialize(v)]));
  }
  return value;
}
