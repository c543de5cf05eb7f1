// The one rule for which keys a query sees. Causality ends a query's keys after its position, the
// sliding window starts them w − 1 before it (visible_keys); the masks then take out single keys.
// Every masked-key question of the forward (the fill of a score row, the test of one key, the range
// of keys a block visits) is answered from these.
#pragma once

#include <cstddef>

#include "../attention.h"

namespace wa {

// The keys [first, end) that causality and the window leave to query i: key j is visible when
// j ≤ pos(i) (causal) and pos(i) − j < w (windowed), with pos(i) = position_offset + i.
KeyRange visible_keys(const ForwardArgs& args, const LayerConfig& config, std::size_t i);

// Whether every key of [j0, j0 + n) is masked for query i of head h, batch element b (what
// mask_scores sets to −inf whatever the score).
bool keys_masked(const ForwardArgs& args, const LayerConfig& config, std::size_t b, std::size_t h, std::size_t i,
                 std::size_t j0, std::size_t n);
inline bool key_masked(const ForwardArgs& args, const LayerConfig& config, std::size_t b, std::size_t h, std::size_t i,
                       std::size_t j) {
  return keys_masked(args, config, b, h, i, j, 1);
}

// Query i's scores against keys [j0, j0 + n), in place: scaled, ALiBi's slope·(j − pos(i)) added,
// then the attention mask, the key padding mask, causality and the window applied: bool → −inf,
// float → added.
void mask_scores(const ForwardArgs& args, const LayerConfig& config, double slope, std::size_t b, std::size_t h,
                 std::size_t i, std::size_t j0, float* row, std::size_t n, float scale);

}  // namespace wa
