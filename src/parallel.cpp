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

class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  int resize(int threads) {
    if (threads < 1) threads = 1;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
#ifndef WA_NO_THREADS
    for (auto& w : workers_) pthread_join(w.thread, nullptr);
#endif
    workers_.clear();
    stop_ = false;
#ifndef WA_NO_THREADS
    // pthread_create rather than std::thread: a failure must give fewer threads, not an exception
    // (which would abort a WebAssembly module built without exceptions).
    workers_.reserve(static_cast<std::size_t>(threads));
    for (int i = 1; i < threads; ++i) {
      // A worker must know the generation it was born in: reading it once started would miss a
      // job posted in between and leave run() waiting for it forever.
      workers_.push_back(Worker{this, generation_, workers_.size() + 1, {}});
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
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      count_ = count;
      next_.store(0);
      busy_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    start_.notify_all();
    drain(fn, count, 0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void drain(const TaskFn& fn, std::size_t count, std::size_t worker) {
    for (std::size_t t = next_.fetch_add(1); t < count; t = next_.fetch_add(1)) fn(t, worker);
  }

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

  void work_loop(std::size_t seen, std::size_t index) {
    for (;;) {
      const TaskFn* job;
      std::size_t count;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
        count = count_;
      }
      drain(*job, count, index);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  std::vector<Worker> workers_;  // reserved up front: threads hold pointers into it
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const TaskFn* job_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0};
  std::size_t generation_ = 0;
  int busy_ = 0;
  bool stop_ = false;
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

void parallel_for(std::size_t count, const TaskFn& fn) { pool().run(count, fn); }

int set_thread_count(int threads) { return pool().resize(threads); }

int thread_count() { return pool().size(); }

}  // namespace wa
