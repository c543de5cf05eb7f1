// A fixed pool of worker threads for parallel_for. Work is split into tasks whose results do not
// depend on which thread runs them, so any thread count gives bit-identical results.
#pragma once

#include <cstddef>
#include <functional>

namespace wa {

// Runs fn(task, worker) for task in [0, count); returns when all are done. Tasks are handed out
// dynamically; `worker` (0 = the caller, < thread_count()) lets a task use per-thread scratch.
// Serial with one thread.
using TaskFn = std::function<void(std::size_t task, std::size_t worker)>;
void parallel_for(std::size_t count, const TaskFn& fn);

// Threads used by parallel_for, including the caller. Returns the count actually in use
// (fewer than asked when the platform cannot start more).
int set_thread_count(int threads);
int thread_count();

}  // namespace wa
