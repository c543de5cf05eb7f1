// How the model's stages split over threads. A stage is a set of independent tasks, each writing
// only its own outputs with arithmetic that does not depend on which tasks exist (a product's
// output is summed in input order by one kernel call; norms and activations work row by row,
// element by element), so the split, and with it the thread count, never changes a bit.
#pragma once

#include <cstddef>
#include <functional>

#include "../parallel.h"

namespace wa {

// Smallest stage, in multiply-adds (or element operations), worth handing to other threads: a job
// costs a few microseconds to post and collect.
constexpr double kMinParallelWork = 2e5;

// Smallest product split by columns over threads (a few rows: a decode step), in multiply-adds. Such
// a product streams its weights once (4 bytes a multiply-add, ~0.2 ms a million on one core), and a
// job of a decode step often finds the other thread asleep: measured on a SmolLM-135M-shaped step
// (2 threads, shared 2-core VM), ~150 jobs a step, the worker asleep at 128 of them, and the caller
// waiting ~0.2 ms a job for the worker's last task; the step took as long as, or (quiet machine)
// twice as long as, on 1 thread. From 1.5M multiply-adds (6 MB) half the stream pays for that: a
// decode step of that model splits only the fused gate/up product and the LM head (~31 jobs).
constexpr double kMinParallelProduct = 1.5e6;
// Jobs an attention call posts (projections, attention, out projection): its forward is split over
// threads when each job averages kMinParallelProduct.
constexpr double kAttentionJobs = 3;

// Runs fn(task, worker) for every task, on every thread when the stage's work pays for it.
void run_tasks(std::size_t count, double work, const TaskFn& fn);

// The tiles of a product out[rows, cols] (each output `depth` multiply-adds): row chunks of at most
// 64 rows (a chunk of the input stays in L2 while the weight panels stream), and when that leaves
// threads short of tasks (few rows: a decode step) and the product reaches kMinParallelProduct,
// column groups of whole 16-wide panels.
struct Tiles {
  std::size_t rows = 0, cols = 0, row_chunk = 1, group = 16, row_tasks = 0, groups = 0;
  double work = 0;
  std::size_t count() const { return row_tasks * groups; }
  struct Tile {
    std::size_t r0, rows, c0, cols;
  };
  Tile operator[](std::size_t t) const;
};
Tiles tile_product(std::size_t rows, std::size_t cols, std::size_t depth);

// fn(r0, r1) over chunks of rows [0, rows), each row `width` floats of element work.
void for_rows(std::size_t rows, std::size_t width, const std::function<void(std::size_t, std::size_t)>& fn);

}  // namespace wa
