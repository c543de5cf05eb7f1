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

// Smallest product split by columns over threads (a few rows: a decode step), in multiply-adds; also
// the smallest attention call of a block split over threads. Such a product streams its weights once
// (4 bytes a multiply-add, ~0.2 ms a million on one core), and a job of a decode step finds the other
// thread asleep: measured on a SmolLM-135M-shaped step (2 threads, 2-core VM), the worker was asleep
// at ~90% of the jobs posted and the caller waited 0.1-0.3 ms a job for the worker's last task; with
// ~150 jobs a step (every product, every attention call) 2 threads took 50 ms where 1 took 28, with
// ~31 (the fused gate/up products and the LM head) 40 ms. From 5M multiply-adds (20 MB, ~1 ms on one
// core) half the stream pays for that: a decode step of that model splits only its LM head.
constexpr double kMinParallelProduct = 5e6;

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
