// 16-bit storage of cached K and V: float32 rounded to nearest-even in IEEE binary16 (f16) or
// bfloat16 (bf16), and widened back exactly, by the same conversions as reduced weights
// (f16-convert.h); here the cache's own parts: its non-finite test and a widening loop in wasm SIMD.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f16-convert.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace wa {

// Whether a stored 16-bit value is Inf or NaN (its exponent all ones).
inline bool kv_half_nonfinite(std::uint16_t h, bool bf16) {
  return bf16 ? (h & 0x7f80u) == 0x7f80u : (h & 0x7c00u) == 0x7c00u;
}

inline std::uint16_t kv_round(float f, bool bf16) { return bf16 ? f32_to_bf16(f) : f32_to_f16(f); }
inline float kv_widen(std::uint16_t h, bool bf16) { return bf16 ? bf16_to_f32(h) : f16_to_f32(h); }

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
    for (; i < n; ++i) dst[i] = bf16_to_f32(src[i]);
  } else {
    for (; i < n; ++i) dst[i] = f16_to_f32(src[i]);
  }
}

}  // namespace wa
