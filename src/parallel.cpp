#include "parallel.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#ifndef WA_NO_THREADS
#include <pthread.h>
#endif

namespace wa {
namespace {

// How long an idle worker polls for the next job before it sleeps. A forward posts jobs back to
// back (two per head); waking a sleeping thread costs tens of microseconds in WebAssembly (a
// futex through Atomics.wait), polling costs nothing but a core that would idle anyway.
constexpr int kSpinsBeforeSleep = 1 << 16;

class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

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
      // job posted in between and leave run() waiting for it forever.
      workers_.push_back(Worker{this, generation_.load(), workers_.size() + 1, {}});
      if (pthread_create(&workers_.back().thread, nullptr, &Pool::start, &workers_.back()) != 0) {
        workers_.pop_back();
        break;
      }
    }
#endif
    return size();
  }

  void run(std::size_t count, const TaskFn& fn) {
    if (workers_.empty() || count <= 1) {
      for (std::size_t t = 0; t < count; ++t) fn(t, 0);
      return;
    }
    resting_.store(false);
    job_ = &fn;
    count_ = count;
    next_.store(0);
    busy_.store(static_cast<int>(workers_.size()));
    generation_.fetch_add(1);  // publishes the job (seq_cst) ...
    if (sleepers_.load() > 0) {  // ... before this read: a worker going to sleep sees one or the other
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
    drain(fn, count, 0);
    // The stragglers finish tasks already started: short, so poll.
    while (busy_.load() != 0) {
    }
  }

 private:
  struct Worker {
    Pool* pool;
    std::size_t born;
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

  void drain(const TaskFn& fn, std::size_t count, std::size_t worker) {
    for (std::size_t t = next_.fetch_add(1); t < count; t = next_.fetch_add(1)) fn(t, worker);
  }

  // Waits for a generation other than `seen` (or stop); returns false on stop.
  bool await_job(std::size_t seen) {
    for (int spin = 0; spin < kSpinsBeforeSleep && !resting_.load(); ++spin) {
      if (generation_.load() != seen) return true;
      if (stop_.load()) return false;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
    sleepers_.fetch_sub(1);
    return !stop_.load();
  }

  void work_loop(std::size_t seen, std::size_t index) {
    while (await_job(seen)) {
      seen = generation_.load();
      drain(*job_, count_, index);
      busy_.fetch_sub(1);
    }
  }

  std::vector<Worker> workers_;  // reserved up front: threads hold pointers into it
  std::mutex mutex_;
  std::condition_variable wake_;
  const TaskFn* job_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> generation_{0};
  std::atomic<int> busy_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> resting_{false};

 public:
  void rest() { resting_.store(true); }
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

void parallel_for(std::size_t count, const TaskFn& fn) { pool().run(count, fn); }

void parallel_rest() { pool().rest(); }

int set_thread_count(int threads) { return pool().resize(threads); }

int thread_count() { return pool().size(); }

}  // namespace wa
