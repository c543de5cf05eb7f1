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

// Idle workers poll for the next job for a while before they sleep (jobs of one forward come back
// to back). After the last job of a call, this shortens that to tens of microseconds: enough for
// the next call of a loop, short enough that no core keeps spinning while the caller, or another
// library's threads, run.
void parallel_rest();

// Threads used by parallel_for, including the caller. Returns the count actually in use
// (fewer than asked when the platform cannot start more).
int set_thread_count(int threads);
int thread_count();

}  // namespace wa
