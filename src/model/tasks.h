// How the model's stages split over threads. A stage is a set of independent tasks, each writing
// only its own outputs with arithmetic that does not depend on which tasks exist (a product's
// output is summed in input order by one kernel call; norms and activations work row by row,
// element by element), so the split, and with it the thread count, never changes a bit.
#pragma once

#include <cstddef>
#include <functional>

#include "../parallel.h"

namespace wa {

// How many threads a stage uses is parallel.h's rule (threads_for: by its work, the cores and
// whether the workers poll). A model step wakes the workers at its start (Model::forward), so that a
// decode step's products, a few hundred thousand multiply-adds each, find them polling.

// Runs fn(task, worker) for every task, on every thread when the stage's work pays for it
// (threads_for).
void run_tasks(std::size_t count, double work, const TaskFn& fn);

// The tiles of a product out[rows, cols] (each output `depth` multiply-adds): row chunks of at most
// 64 rows (a chunk of the input stays in L2 while the weight panels stream), and when that leaves
// the threads it pays to use (threads_for) short of tasks (few rows: a decode step), column groups
// of whole 16-wide panels: each output keeps its own sum, in input order, whatever the groups.
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
