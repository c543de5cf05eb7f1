// IEEE half precision (F16) and bfloat16 (BF16) to float32, exactly: every 16-bit value, subnormals,
// ±0, ±Infinity and NaN (payload kept, as PyTorch's conversion keeps it), is a float32 value too,
// so the float32 bit pattern is built directly and nothing is rounded.

/** Float32Array of the F16 values whose bit patterns `halves` holds. */
export function floatsOfF16(halves) {
  const out = new Float32Array(halves.length);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < halves.length; i++) {
    const h = halves[i];
    const sign = (h & 0x8000) << 16;
    const exponent = h & 0x7c00;
    const mantissa = h & 0x03ff;
    if (exponent === 0x7c00)
      bits[i] = sign | 0x7f800000 | (mantissa << 13); // ±Infinity, NaN
    else if (exponent !== 0)
      bits[i] = sign | ((exponent + 0x1c000) << 13) | (mantissa << 13); // rebias 15 → 127
    else if (mantissa === 0)
      bits[i] = sign; // ±0
    else out[i] = (sign ? -mantissa : mantissa) * 2 ** -24; // subnormal: exact in float32 (normal there)
  }
  return out;
}

/** Float32Array of the BF16 values whose bit patterns `halves` holds: the top half of a float32. */
export function floatsOfBf16(halves) {
  const out = new Float32Array(halves.length);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < halves.length; i++) bits[i] = halves[i] << 16;
  return out;
}
