// 16-bit storage of cached K and V: float32 rounded to nearest-even in IEEE binary16 (f16) or
// bfloat16 (bf16), and widened back exactly. Bit arithmetic only: no lookup table, no dependence on
// the compiler's _Float16 (wasm has no f16 arithmetic), and loops simple enough to vectorize.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace wa {

inline std::uint32_t kv_bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float kv_float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// float32 → binary16, round to nearest, ties to even; overflow → ±Inf, NaN stays NaN (quiet).
inline std::uint16_t kv_f32_to_f16(float f) {
  std::uint32_t x = kv_bits_of(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x47800000u)  // ≥ 2^16 (always past the largest half, 65504): Inf, or NaN
    return static_cast<std::uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x < 0x38800000u) {
    // Below 2^-14: a subnormal half. Adding 0.5 puts its 10 bits at the bottom of the mantissa, and
    // the float addition rounds them to nearest-even.
    const std::uint32_t r = kv_bits_of(kv_float_of(x) + 0.5f) - 0x3f000000u;
    return static_cast<std::uint16_t>(sign | r);
  }
  // Normal: rebias the exponent and round the 13 dropped bits to nearest-even (a carry into the
  // exponent is right: it rounds up to the next binade, or to Inf past 65504).
  const std::uint32_t odd = (x >> 13) & 1u;
  x += 0xc8000fffu + odd;  // (15 − 127) << 23, + 0xfff + odd
  return static_cast<std::uint16_t>(sign | (x >> 13));
}

// binary16 → float32, exact: the 15 magnitude bits moved into place and the exponent rebiased
// (+112); an all-ones exponent rebiased once more to the float's Inf/NaN; a subnormal half (exponent 0)
// made the normal float 2^-14 · (1 + m/1024), less 2^-14 (exact, and no subnormal float arithmetic,
// which costs some CPUs a microcode trap).
inline float kv_f16_to_f32(std::uint16_t h) {
  const std::uint32_t m = h & 0x7fffu, e = m & 0x7c00u;
  std::uint32_t u = (m << 13) + 0x38000000u;
  if (e == 0x7c00u) u += 0x38000000u;
  if (e == 0) u = kv_bits_of(kv_float_of(u + 0x00800000u) - kv_float_of(0x38800000u));
  return kv_float_of(u | (static_cast<std::uint32_t>(h & 0x8000u) << 16));
}

// float32 → bfloat16, round to nearest, ties to even; NaN stays NaN (quiet).
inline std::uint16_t kv_f32_to_bf16(float f) {
  const std::uint32_t x = kv_bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// bfloat16 → float32: the upper half of the float.
inline float kv_bf16_to_f32(std::uint16_t h) { return kv_float_of(static_cast<std::uint32_t>(h) << 16); }

// Whether a stored 16-bit value is Inf or NaN (its exponent all ones).
inline bool kv_half_nonfinite(std::uint16_t h, bool bf16) {
  return bf16 ? (h & 0x7f80u) == 0x7f80u : (h & 0x7c00u) == 0x7c00u;
}

inline std::uint16_t kv_round(float f, bool bf16) { return bf16 ? kv_f32_to_bf16(f) : kv_f32_to_f16(f); }
inline float kv_widen(std::uint16_t h, bool bf16) { return bf16 ? kv_bf16_to_f32(h) : kv_f16_to_f32(h); }

#if defined(__wasm_simd128__)
// The f16 widening's constants: magnitude mask, 2^112, the largest finite magnitude, the Inf exponent.
alignas(16) inline const std::uint32_t kKvF16Constants[16] = {
    0x7fffu, 0x7fffu, 0x7fffu, 0x7fffu, 0x77800000u, 0x77800000u, 0x77800000u, 0x77800000u,
    0x7bffu, 0x7bffu, 0x7bffu, 0x7bffu, 0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u};
#endif

// n stored values → floats. With wasm SIMD, four at a time (the loop is what a reduced cache's
// decode step spends beyond an f32 cache's, so it must not run scalar). f16: the magnitude moved
// into place and scaled by 2^112 (exact; a subnormal half is a subnormal float before the scaling,
// which some CPUs multiply slowly, but such values are rare), Inf/NaN given the all-ones exponent.
inline void kv_widen_n(const std::uint16_t* src, std::size_t n, bool bf16, float* dst) {
  std::size_t i = 0;
#if defined(__wasm_simd128__)
  if (bf16) {
    for (; i + 4 <= n; i += 4) wasm_v128_store(dst + i, wasm_i32x4_shl(wasm_u32x4_load16x4(src + i), 16));
  } else {
    // Read through a volatile pointer, so the constants are loaded once into locals: as v128.const,
    // clang rematerializes them in the loop and V8 builds each one anew every iteration (measured
    // 3× slower).
    const std::uint32_t* volatile table = kKvF16Constants;
    const std::uint32_t* c = table;
    const v128_t magnitude = wasm_v128_load(c), scale = wasm_v128_load(c + 4);
    const v128_t largest = wasm_v128_load(c + 8), inf = wasm_v128_load(c + 12);
    for (; i + 4 <= n; i += 4) {
      const v128_t h = wasm_u32x4_load16x4(src + i);
      const v128_t m = wasm_v128_and(h, magnitude);
      v128_t f = wasm_f32x4_mul(wasm_i32x4_shl(m, 13), scale);
      f = wasm_v128_or(f, wasm_v128_and(wasm_i32x4_gt(m, largest), inf));
      wasm_v128_store(dst + i, wasm_v128_or(f, wasm_i32x4_shl(wasm_v128_xor(h, m), 16)));
    }
  }
#endif
  if (bf16) {
    for (; i < n; ++i) dst[i] = kv_bf16_to_f32(src[i]);
  } else {
    for (; i < n; ++i) dst[i] = kv_f16_to_f32(src[i]);
  }
}

}  // namespace wa
