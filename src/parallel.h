// A fixed pool of worker threads for parallel_for, and the one rule for how much work is worth
// splitting over it. Work is split into tasks whose results do not depend on which thread runs them,
// so any thread count (and any split) gives bit-identical results.
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

// A call about to post jobs wakes the sleeping workers now, so that they poll by the time its first
// jobs come (a model step's embedding and first norm run meanwhile). Returns
// at once; does nothing with one thread, or when the workers are awake already.
void parallel_wake();

// Whether every worker is polling for jobs now (a job posted now starts on all threads within
// microseconds) rather than asleep (waking one takes tens to hundreds of microseconds). True with
// one thread. A hint: a worker may fall asleep right after.
bool workers_awake();

// Whether a job lately waited for a worker that had been descheduled holding a task (the machine
// has more runnable threads than cores): small stages then stay on the caller for a while.
bool pool_contended();

// How many times a worker has gone to sleep since the pool started (tests and diagnostics: a woken
// worker that gets no job sleeps again, so the count moves).
std::size_t worker_naps();

// Threads used by parallel_for, including the caller. Returns the count actually in use
// (fewer than asked when the platform cannot start more).
int set_thread_count(int threads);
int thread_count();

// The cores of the machine as the host reports them (navigator.hardwareConcurrency,
// os.availableParallelism; natively std::thread::hardware_concurrency). 0 = unknown: then the pool
// is taken to have a core per thread. Returns the count now in use.
int set_core_count(int cores);
int core_count();

// Threads that can run at once: the pool's, but no more than the cores. With more threads than
// cores, workers barely poll (a polling worker would hold a core that another one needs).
int parallel_width();

// ---- How much work is worth splitting: the one place where the thresholds live.
//
// A stage's `work` is counted in multiply-adds (or element operations for norms). Handing work to
// another thread costs, per job: posting it and collecting the last task (a few microseconds when
// the workers poll), or waking a sleeping worker (tens to hundreds of microseconds in WebAssembly, a
// futex through Atomics.wait, more in a virtual machine). A stage uses as many threads as each gets
// at least the minimum work per thread for that cost, never more than parallel_width(): the split
// follows the machine's cores and the pool's size, not a fixed count of two.
//
// Minimum work per thread while the workers poll (~50 µs of streamed weights on one core, ten times
// the cost of a job on a quiet machine): a decode step's MLP, attention and LM head split, its
// narrow projections (a few hundred thousand multiply-adds, one job each) stay on the caller. Lower
// minimums measured worse on a shared 2-core VM: every split job risks a stall (the worker
// descheduled holding a task) that costs more than a small job saves.
constexpr double kMinWorkPerThreadAwake = 2.5e5;
// Minimum work per thread when the workers sleep (~0.5 ms on one core): the wake is then paid once
// and recovered within the job.
constexpr double kMinWorkPerThreadAsleep = 2.5e6;

// Threads worth giving `work` now: 1 to parallel_width(), by the workers' state (asleep, or the pool
// contended: the higher minimum).
std::size_t threads_for(double work);
// Threads `work` would get once the workers poll (whether to wake them for it).
std::size_t threads_once_awake(double work);
// The same for a plan made ahead of the call (its scratch is sized by it): by the cost of a job
// whose workers poll (a forward's jobs come back to back; the first one wakes them).
std::size_t planned_threads_for(double work);

}  // namespace wa
