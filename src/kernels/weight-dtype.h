// How a layer stores its weight matrices: float32, or reduced (the contract's weightDtype / dtype).
#pragma once

#include <cstddef>

namespace wa {

enum class WeightDtype : int { f32 = 0, f16 = 1, bf16 = 2, int8 = 3 };

// Whether d is one of the values above (a dtype handed over from JavaScript is checked once).
inline bool valid_weight_dtype(WeightDtype d) {
  return static_cast<unsigned>(d) <= static_cast<unsigned>(WeightDtype::int8);
}

// Bytes of one stored weight.
inline std::size_t weight_element_bytes(WeightDtype d) {
  return d == WeightDtype::f32 ? 4 : d == WeightDtype::int8 ? 1 : 2;
}

}  // namespace wa
