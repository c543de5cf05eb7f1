#include "parallel.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#ifndef WA_NO_THREADS
#include <pthread.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace wa {
namespace {

// How long an idle worker polls for the next job before it sleeps, in time (a count of polls would
// last as long as the machine makes it). A forward posts jobs back to back (one per stage); waking a
// sleeping thread costs tens of microseconds in WebAssembly (a futex through Atomics.wait, more in a
// virtual machine), polling costs nothing but a core that would idle anyway.
constexpr std::chrono::microseconds kPollDuringCall{1000};
// After the last job of a call, workers poll only this long before they sleep: the next call of a
// loop (decode steps, layer after layer, with the wrapper copying a few hundred KB in and out between
// them) finds them awake, and no core keeps spinning long while the caller, or another library's
// threads, run.
constexpr std::chrono::microseconds kPollAfterCall{200};
// With more threads than cores, a polling worker holds a core that the caller or a worker with a
// task needs: workers then poll only this long.
constexpr std::chrono::microseconds kPollOversubscribed{20};
// A caller that waits longer than this, and longer than its own share of the job, for a worker's
// last task saw a stall: the worker was descheduled (a loaded machine). Small jobs then stay on the
// caller for kContendedFor, as if the workers slept: a stall costs a scheduler slice (milliseconds),
// far more than splitting a small job saves.
constexpr std::chrono::microseconds kStallFloor{100};
constexpr std::chrono::milliseconds kContendedFor{250};
// Polls between two readings of the clock (a reading is a call out to JavaScript in WebAssembly).
constexpr int kPollsPerClockReading = 256;

// A polling loop's pause: natively the CPU's spin-wait hint (the core's sibling runs meanwhile, and
// the loop does not flood the memory order buffer); WebAssembly has none.
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

int native_cores() {
#ifdef __EMSCRIPTEN__
  return 0;  // the host says (set_core_count from JavaScript)
#else
  return static_cast<int>(std::thread::hardware_concurrency());
#endif
}
std::atomic<int> cores{native_cores()};

// The job now posted and its next task, in one word: generation (high 32 bits), task index (low 32).
// A task is claimed by one compare-exchange, which fails once the job has changed, so a worker that
// wakes late claims nothing of a job it did not read, and the caller waits only for tasks claimed:
// never for a worker that is still waking up (the caller then runs every task itself).
constexpr int kGenerationShift = 32;
constexpr std::uint64_t kTaskMask = (std::uint64_t{1} << kGenerationShift) - 1;

class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Every worker polls (none asleep, none starting up asleep).
  bool awake() const { return sleepers_.load() == 0; }
  std::size_t naps() const { return naps_.load(); }

  // Sleeping workers start polling now (with the long poll of a call in progress).
  void wake() {
    if (workers_.empty() || sleepers_.load() == 0) return;
    resting_.store(false);
    alarm_.fetch_add(1);
    notify();
  }

  int resize(int threads) {
    if (threads < 1) threads = 1;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
    }
    wake_.notify_all();
#ifndef WA_NO_THREADS
    for (auto& w : workers_) pthread_join(w.thread, nullptr);
#endif
    workers_.clear();
    stop_.store(false);
#ifndef WA_NO_THREADS
    // pthread_create rather than std::thread: a failure must give fewer threads, not an exception
    // (which would abort a WebAssembly module built without exceptions).
    workers_.reserve(static_cast<std::size_t>(threads));
    for (int i = 1; i < threads; ++i) {
      // A worker must know the generation it was born in: reading it once started would miss a
      // job posted in between.
      workers_.push_back(Worker{this, generation(), workers_.size() + 1, {}});
      if (pthread_create(&workers_.back().thread, nullptr, &Pool::start, &workers_.back()) != 0) {
        workers_.pop_back();
        break;
      }
    }
#endif
    return size();
  }

  void run(std::size_t count, const TaskFn& fn) {
    if (workers_.empty() || count <= 1 || count > kTaskMask) {
      for (std::size_t t = 0; t < count; ++t) fn(t, 0);
      return;
    }
    resting_.store(false);
    job_.store(&fn);
    count_.store(count);
    finished_.store(0);
    const std::uint64_t gen = (generation() + 1) & kTaskMask;
    ticket_.store(gen << kGenerationShift);  // publishes the job (seq_cst) ...
    if (sleepers_.load() > 0) notify();      // ... before this read: a worker going to sleep sees one or the other
    const auto posted = std::chrono::steady_clock::now();
    drain(gen, fn, count, 0);
    if (finished_.load() == count) return;
    // Tasks still running on workers: short, so poll. A wait longer than the caller's own share of
    // the job means a worker was descheduled holding a task (more runnable threads than cores):
    // small jobs are then not worth splitting for a while (contended()).
    const auto drained = std::chrono::steady_clock::now();
    while (finished_.load() != count) relax();
    const auto waited = std::chrono::steady_clock::now() - drained;
    if (waited > kStallFloor && waited > drained - posted) {
      const auto until = std::chrono::steady_clock::now() + kContendedFor;
      contended_until_.store(until.time_since_epoch().count());
    }
  }

  // A stall was seen lately (run); reads the clock only then.
  bool contended() {
    const auto until = contended_until_.load();
    if (until == 0) return false;
    if (std::chrono::steady_clock::now().time_since_epoch().count() < until) return true;
    contended_until_.store(0);
    return false;
  }

  void rest() { resting_.store(true); }

  // Wakes the sleepers, under the mutex so that none is between its check and its sleep. When a
  // worker holds the mutex, it is checking what to wait for (and sees the new job or alarm) or has
  // just woken: the caller then does not block on it (a worker descheduled there would stall the
  // caller for a scheduler slice). A sleeper missed so misses one job, which the caller runs.
  void notify() {
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) wake_.notify_all();
  }

 private:
  struct Worker {
    Pool* pool;
    std::uint64_t born;
    std::size_t index;
#ifndef WA_NO_THREADS
    pthread_t thread;
#endif
  };

  static void* start(void* arg) {
    auto* w = static_cast<Worker*>(arg);
    w->pool->work_loop(w->born, w->index);
    return nullptr;
  }

  std::uint64_t generation() const { return ticket_.load() >> kGenerationShift; }

  // Claims the next task of generation gen; false when none is left or the job has changed.
  bool claim(std::uint64_t gen, std::size_t count, std::size_t& task) {
    std::uint64_t ticket = ticket_.load();
    for (;;) {
      if (ticket >> kGenerationShift != gen || (ticket & kTaskMask) >= count) return false;
      if (ticket_.compare_exchange_weak(ticket, ticket + 1)) {
        task = static_cast<std::size_t>(ticket & kTaskMask);
        return true;
      }
    }
  }

  void drain(std::uint64_t gen, const TaskFn& fn, std::size_t count, std::size_t worker) {
    for (std::size_t t = 0; claim(gen, count, t);) {
      fn(t, worker);
      finished_.fetch_add(1);
    }
  }

  std::chrono::microseconds poll_limit() const {
    const int c = cores.load();
    if (c > 0 && size() > c) return kPollOversubscribed;
    return resting_.load() ? kPollAfterCall : kPollDuringCall;
  }

  // Waits for a generation other than `seen` (or stop), polling, then asleep until a job, a stop or
  // an alarm (parallel_wake: poll again); returns false on stop.
  bool await_job(std::uint64_t seen) {
    for (;;) {
      const auto start = std::chrono::steady_clock::now();
      for (int poll = 1;; ++poll) {
        if (generation() != seen) return true;
        if (stop_.load()) return false;
        relax();
        if (poll % kPollsPerClockReading != 0) continue;
        if (std::chrono::steady_clock::now() - start > poll_limit()) break;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      const std::uint64_t alarm = alarm_.load();
      sleepers_.fetch_add(1);
      naps_.fetch_add(1);
      wake_.wait(lock, [&] { return stop_.load() || generation() != seen || alarm_.load() != alarm; });
      sleepers_.fetch_sub(1);
      if (stop_.load()) return false;
      if (generation() != seen) return true;
    }
  }

  void work_loop(std::uint64_t seen, std::size_t index) {
    while (await_job(seen)) {
      seen = generation();
      // Read after the generation: if they already belong to a newer job, every claim fails.
      const TaskFn* job = job_.load();
      const std::size_t count = count_.load();
      drain(seen, *job, count, index);
    }
  }

  std::vector<Worker> workers_;  // reserved up front: threads hold pointers into it
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<const TaskFn*> job_{nullptr};
  std::atomic<std::size_t> count_{0};
  std::atomic<std::uint64_t> ticket_{0};
  std::atomic<std::size_t> finished_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<std::uint64_t> alarm_{0};  // counts parallel_wake calls that found a sleeper
  std::atomic<std::size_t> naps_{0};
  // steady_clock ticks until which jobs are split only as if the workers slept; 0: not contended.
  std::atomic<std::chrono::steady_clock::rep> contended_until_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> resting_{false};
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

void parallel_for(std::size_t count, const TaskFn& fn) { pool().run(count, fn); }

void parallel_rest() { pool().rest(); }

void parallel_wake() { pool().wake(); }

bool workers_awake() { return pool().awake(); }

std::size_t worker_naps() { return pool().naps(); }

bool pool_contended() { return pool().contended(); }

int set_thread_count(int threads) { return pool().resize(threads); }

int thread_count() { return pool().size(); }

int set_core_count(int c) {
  cores.store(c > 0 ? c : 0);
  return core_count();
}

int core_count() { return cores.load(); }

int parallel_width() {
  const int threads = thread_count(), c = core_count();
  return c > 0 && c < threads ? c : threads;
}

namespace {
std::size_t threads_by(double work, double per_thread) {
  const int width = parallel_width();
  if (width < 2 || !(work >= 2 * per_thread)) return 1;
  const double n = work / per_thread;
  return n >= width ? static_cast<std::size_t>(width) : static_cast<std::size_t>(n);
}
}  // namespace

std::size_t threads_for(double work) {
  const bool cheap = workers_awake() && !pool_contended();
  return threads_by(work, cheap ? kMinWorkPerThreadAwake : kMinWorkPerThreadAsleep);
}

std::size_t threads_once_awake(double work) {
  return threads_by(work, pool_contended() ? kMinWorkPerThreadAsleep : kMinWorkPerThreadAwake);
}

std::size_t planned_threads_for(double work) { return threads_by(work, kMinWorkPerThreadAwake); }

}  // namespace wa
