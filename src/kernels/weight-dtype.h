// How a layer stores its weight matrices: float32, or reduced (the contract's weightDtype / dtype).
#pragma once

#include <cstddef>

namespace wa {

enum class WeightDtype : int { f32 = 0, f16 = 1, bf16 = 2, int8 = 3 };

// Bytes of one stored weight.
inline std::size_t weight_element_bytes(WeightDtype d) {
  return d == WeightDtype::f32 ? 4 : d == WeightDtype::int8 ? 1 : 2;
}

}  // namespace wa
