#include "tasks.h"

#include <algorithm>

#include "../attention/plan.h"
#include "../kernels/f32-gemm.h"

namespace wa {

void run_tasks(std::size_t count, double work, const TaskFn& fn) {
  if (count > 1 && threads_for(work) > 1) {
    parallel_for(count, fn);
    return;
  }
  for (std::size_t t = 0; t < count; ++t) fn(t, 0);
}

Tiles tile_product(std::size_t rows, std::size_t cols, std::size_t depth) {
  Tiles t;
  t.rows = rows;
  t.cols = cols;
  t.work = static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(depth);
  t.row_chunk = std::min(rows, kProjRows);
  t.row_tasks = ceil_div(rows, t.row_chunk);
  const std::size_t panels = ceil_div(cols, kPanelWidth);
  const std::size_t workers = threads_for(t.work);
  // About four tasks per thread, so that an uneven last one costs little.
  const std::size_t wanted = workers > 1 ? std::min(panels, ceil_div(4 * workers, t.row_tasks)) : 1;
  t.group = ceil_div(panels, wanted) * kPanelWidth;
  t.groups = ceil_div(cols, t.group);
  return t;
}

Tiles::Tile Tiles::operator[](std::size_t t) const {
  const std::size_t r0 = (t / groups) * row_chunk, c0 = (t % groups) * group;
  return {r0, std::min(rows, r0 + row_chunk) - r0, c0, std::min(cols, c0 + group) - c0};
}

void for_rows(std::size_t rows, std::size_t width, const std::function<void(std::size_t, std::size_t)>& fn) {
  const double work = static_cast<double>(rows) * static_cast<double>(width);
  const std::size_t workers = threads_for(work);
  if (rows < 2 || workers < 2) {
    fn(0, rows);
    return;
  }
  const std::size_t chunk = ceil_div(rows, 4 * workers), count = ceil_div(rows, chunk);
  parallel_for(count, [&](std::size_t t, std::size_t) { fn(t * chunk, std::min(rows, (t + 1) * chunk)); });
}

}  // namespace wa
