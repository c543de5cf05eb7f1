// float32 ↔ IEEE binary16 (f16) and bfloat16 (bf16), bit by bit: the reduced weights are rounded to
// nearest-even once, when a layer is made, and widened back exactly inside the kernels.
//
// Widening needs no lookup table: bf16 is the high half of a float32 (a shift), and an f16's
// exponent and mantissa, shifted into a float32's place, are its value times 2^-112 (subnormals
// included), so one exact multiply by 2^112 restores it; only Inf and NaN are set apart.
#pragma once

#include <cstdint>
#include <cstring>

namespace wa {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float bf16_to_f32(std::uint16_t h) { return bits_float(static_cast<std::uint32_t>(h) << 16); }

inline float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16, em = h & 0x7fffu;
  const std::uint32_t finite = float_bits(bits_float(em << 13) * 0x1p112f);
  const std::uint32_t special = 0x7f800000u | (em & 0x3ffu) << 13;  // Inf, or NaN with its payload
  return bits_float((em >= 0x7c00u ? special : finite) | sign);
}

// Round to nearest, ties to even; a NaN stays a (quiet) NaN.
inline std::uint16_t f32_to_bf16(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>(u >> 16 | 0x40u);
  return static_cast<std::uint16_t>((u + 0x7fffu + (u >> 16 & 1u)) >> 16);
}

// Round to nearest, ties to even: magnitudes from 65520 up become Inf, below 2^-14 f16 subnormals
// (rounded by the float addition itself, which rounds to nearest-even); a NaN stays a quiet NaN.
inline std::uint16_t f32_to_f16(float f) {
  const std::uint32_t u = float_bits(f), sign = u >> 16 & 0x8000u, a = u & 0x7fffffffu;
  std::uint32_t h;
  if (a >= 0x47800000u) {  // ≥ 65536, Inf or NaN
    h = a > 0x7f800000u ? 0x7e00u | (a >> 13 & 0x3ffu) : 0x7c00u;
  } else if (a < 0x38800000u) {  // below f16's smallest normal: add 0.5 so the ulp is 2^-24
    h = float_bits(bits_float(a) + 0.5f) - 0x3f000000u;
  } else {
    const std::uint32_t odd = a >> 13 & 1u;
    h = (a - 0x38000000u + 0xfffu + odd) >> 13;  // rebias 127 → 15; a carry may reach Inf, rightly
  }
  return static_cast<std::uint16_t>(h | sign);
}

}  // namespace wa
