// The forward's tuning constants and the arithmetic of sizes that the plan, the scratch and the
// attention share.
#pragma once

#include <cstddef>

namespace wa {

// Query rows per attention task: the scores of a block (rows × keys) stay in L2 and the
// block is the unit of work for threads.
constexpr std::size_t kRowBlock = 32;
// Rows per projection task: at most 64 (a chunk of A stays in L2 while the panels stream), fewer
// when that leaves threads without work; always a multiple of 16, the K panel width.
constexpr std::size_t kProjRows = 64;
// Keys per tile of the fused attention: a 32 × 256 score tile (32 KiB) stays in L1 while the
// K and V tiles (dk or dv × 256) come from L2.
constexpr std::size_t kKeyTile = 256;
// Most scratch (floats) for projecting every head before attending: beyond it, one head at a time
// keeps the scratch small (long sequences). Below it, one parallel pass per stage (projections, then
// attention) gives threads a task per head and row block, where one head at a time gives a few
// tokens nothing to share and costs two waits per head.
constexpr double kAllHeadsFloats = 4e6;
// Fewest tasks a grouped-query attention step aims for: its heads are stacked per K/V head, and a
// few K/V heads (one, multi-query) would leave threads idle.
constexpr std::size_t kMinStackTasks = 8;
// Most scratch (floats) for keeping each head's weights apart before averaging them.
constexpr double kMaxHeadRowsFloats = 1 << 20;

struct LayerConfig;
struct ForwardShape;
// Multiply-adds of a forward: projections, scores and P·V, out projection.
double forward_macs(const LayerConfig& config, const ForwardShape& shape);

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// 64-byte alignment of each piece of an arena.
inline std::size_t aligned_floats(std::size_t n) { return (n + 15) / 16 * 16; }

}  // namespace wa
