// A fixed pool of worker threads for parallel_for. Work is split into tasks whose results do not
// depend on which thread runs them, so any thread count gives bit-identical results.
#pragma once

#include <cstddef>
#include <functional>

namespace wa {

// Runs fn(task) for task in [0, count); returns when all are done. Serial with one thread.
void parallel_for(std::size_t count, const std::function<void(std::size_t)>& fn);

// Threads used by parallel_for, including the caller. Returns the count actually in use
// (fewer than asked when the platform cannot start more).
int set_thread_count(int threads);
int thread_count();

}  // namespace wa
