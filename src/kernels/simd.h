// The few SIMD operations the kernels use, in namespace wa::simd, for two builds of one source:
//
//   default     xsimd's own types and functions (aliases and using-declarations): the SIMD build
//               (-msimd128 -msse4.1, xsimd's SSE path) compiles exactly as if it named xsimd.
//   WA_SCALAR   a plain C++ struct of 16 bytes of lanes (4 floats, 4 int32s or 2 doubles) with a
//               loop per operation: no SIMD instruction and no xsimd, for engines without
//               WebAssembly SIMD. Every operation gives the lanes xsimd's SSE path gives, rounding
//               for rounding, so both builds compute the same numbers:
//                 madd(a, b, c) c + a·b, two roundings (SSE has no fused multiply-add)
//                 a / b         per lane, correctly rounded (divps)
//                 max(a, b)     a > b ? a : b per lane (maxps: b when either is NaN)
//                 hadd(v)       (v0 + v1) + (v2 + v3) (SSE3's haddps twice)
//                 a < b         a mask whose true lanes have every bit set (.data, as cmpltps)
//                 bitwise_andnot(a, b)   ~a & b (andnps)
//                 zip_lo/zip_hi          interleave the low / high halves (unpcklps, unpcklpd, …)
#pragma once

#ifndef WA_SCALAR

#include <xsimd/xsimd.hpp>

#if defined(XSIMD_NO_SUPPORTED_ARCHITECTURE)
#error "no SIMD architecture for xsimd: compile with -msimd128 -msse4.1 (wasm) or -msse4.1, or define WA_SCALAR"
#endif

namespace wa::simd {

template <class T>
using batch = xsimd::batch<T>;
template <class T>
using batch_bool = xsimd::batch_bool<T>;

using xsimd::bitwise_andnot;
using xsimd::bitwise_cast;
using xsimd::hadd;
using xsimd::max;
using xsimd::zip_hi;
using xsimd::zip_lo;

// c + a·b: every multiply-add of the kernels (the GEMM's step, exp's polynomial). WA_RELAXED_SIMD
// (the relaxed builds' kernels, compiled by a clang that knows relaxed SIMD) makes it
// f32x4.relaxed_madd, which the engine fuses into one FMA (one rounding) where the CPU has one;
// elsewhere it stays the mul then add of the SIMD build, bit for bit. An engine always picks one of
// the two, so results stay bit-identical across threads.
#if defined(WA_RELAXED_SIMD)
#if !__has_builtin(__builtin_wasm_relaxed_madd_f32x4)
#error "WA_RELAXED_SIMD needs a clang with relaxed SIMD (clang-16 or later, -mrelaxed-simd)"
#endif
inline batch<float> madd(const batch<float>& a, const batch<float>& b, const batch<float>& c) {
  return batch<float>(__builtin_wasm_relaxed_madd_f32x4(a.data, b.data, c.data));
}
#else
inline batch<float> madd(const batch<float>& a, const batch<float>& b, const batch<float>& c) { return c + a * b; }
#endif

}  // namespace wa::simd

#else  // WA_SCALAR

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace wa::simd {

template <class T>
struct batch {
  static constexpr std::size_t size = 16 / sizeof(T);
  struct register_type {
    T lane[size];
  };
  register_type data;

  batch() = default;
  batch(T x) {  // broadcast; implicit, as xsimd's
    for (std::size_t l = 0; l < size; ++l) data.lane[l] = x;
  }
  batch(register_type r) : data(r) {}

  static batch load_unaligned(const T* p) {
    batch b;
    std::memcpy(b.data.lane, p, sizeof b.data.lane);
    return b;
  }
  static batch load_aligned(const T* p) { return load_unaligned(p); }
  void store_unaligned(T* p) const { std::memcpy(p, data.lane, sizeof data.lane); }
  void store_aligned(T* p) const { store_unaligned(p); }

  batch& operator+=(const batch& o) {
    for (std::size_t l = 0; l < size; ++l) data.lane[l] += o.data.lane[l];
    return *this;
  }
  batch& operator-=(const batch& o) {
    for (std::size_t l = 0; l < size; ++l) data.lane[l] -= o.data.lane[l];
    return *this;
  }
  batch& operator*=(const batch& o) {
    for (std::size_t l = 0; l < size; ++l) data.lane[l] *= o.data.lane[l];
    return *this;
  }
  batch& operator/=(const batch& o) {  // correctly rounded per lane, as divps
    for (std::size_t l = 0; l < size; ++l) data.lane[l] /= o.data.lane[l];
    return *this;
  }
};

// A comparison's result: true lanes have every bit set, false lanes none (SSE's masks).
template <class T>
struct batch_bool {
  typename batch<T>::register_type data;
};

template <class T>
batch<T> operator+(batch<T> a, const batch<T>& b) {
  return a += b;
}
template <class T>
batch<T> operator-(batch<T> a, const batch<T>& b) {
  return a -= b;
}
template <class T>
batch<T> operator*(batch<T> a, const batch<T>& b) {
  return a *= b;
}
template <class T>
batch<T> operator/(batch<T> a, const batch<T>& b) {
  return a /= b;
}

// The same 16 bytes seen as lanes of another type.
template <class To, class T>
To bitwise_cast(const batch<T>& x) {
  static_assert(sizeof(To) == sizeof(x), "a batch is 16 bytes");
  To r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}

namespace detail {
using words = batch<std::uint32_t>;  // bitwise operations and shifts work on unsigned 32-bit words
}  // namespace detail

template <class T>
batch_bool<T> operator<(const batch<T>& a, const batch<T>& b) {
  static_assert(sizeof(T) == 4, "masks of 32-bit lanes only");
  detail::words m;
  for (std::size_t l = 0; l < m.size; ++l) m.data.lane[l] = a.data.lane[l] < b.data.lane[l] ? ~0u : 0u;
  return {bitwise_cast<batch<T> >(m).data};
}

template <class T>
batch<T> bitwise_andnot(const batch<T>& a, const batch<T>& b) {
  const auto wa = bitwise_cast<detail::words>(a), wb = bitwise_cast<detail::words>(b);
  detail::words r;
  for (std::size_t l = 0; l < r.size; ++l) r.data.lane[l] = ~wa.data.lane[l] & wb.data.lane[l];
  return bitwise_cast<batch<T> >(r);
}

// Shifted as unsigned words: the bits move out as in pslld, with no signed-overflow UB.
inline batch<std::int32_t> operator<<(const batch<std::int32_t>& x, std::int32_t shift) {
  auto w = bitwise_cast<detail::words>(x);
  for (auto& lane : w.data.lane) lane <<= shift;
  return bitwise_cast<batch<std::int32_t> >(w);
}

// Two operator calls, two roundings: never contracted into a fused multiply-add.
inline batch<float> madd(const batch<float>& a, const batch<float>& b, const batch<float>& c) { return c + a * b; }

template <class T>
batch<T> max(const batch<T>& a, const batch<T>& b) {
  batch<T> r;
  for (std::size_t l = 0; l < r.size; ++l)
    r.data.lane[l] = a.data.lane[l] > b.data.lane[l] ? a.data.lane[l] : b.data.lane[l];
  return r;
}

inline float hadd(const batch<float>& v) {
  const float* l = v.data.lane;
  return (l[0] + l[1]) + (l[2] + l[3]);
}

template <class T>
batch<T> zip_lo(const batch<T>& a, const batch<T>& b) {
  batch<T> r;
  for (std::size_t l = 0; l < r.size / 2; ++l) {
    r.data.lane[2 * l] = a.data.lane[l];
    r.data.lane[2 * l + 1] = b.data.lane[l];
  }
  return r;
}

template <class T>
batch<T> zip_hi(const batch<T>& a, const batch<T>& b) {
  batch<T> r;
  constexpr std::size_t half = batch<T>::size / 2;
  for (std::size_t l = 0; l < half; ++l) {
    r.data.lane[2 * l] = a.data.lane[half + l];
    r.data.lane[2 * l + 1] = b.data.lane[half + l];
  }
  return r;
}

}  // namespace wa::simd

#endif  // WA_SCALAR
