// The specification in plain scalar loops, in double precision: the test oracle for the kernels.
#pragma once

#include <vector>

#include "attention.h"

namespace wa {

// Same arguments as Layer::init + Layer::forward; writes float results where args point.
void reference_forward(const LayerConfig& config, const LayerWeights& weights, const ForwardArgs& args);

}  // namespace wa
