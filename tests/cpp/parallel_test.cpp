// The pool's split rule (threads_for: by the work, the cores and the pool's size), its wake-ahead
// (parallel_wake), a pool with more threads than cores, and a model large enough for its decode
// steps to split giving the same bits at 1, 2 and 4 threads, with as many cores or fewer.
#include "parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "model/model.h"
#include "model_reference.h"

namespace {

class ParallelTest : public ::testing::Test {
 protected:
  void SetUp() override { cores_ = wa::core_count(); }
  void TearDown() override {
    wa::set_core_count(cores_);
    wa::set_thread_count(1);
  }

 private:
  int cores_ = 0;
};

// Waits up to ten seconds (a loaded machine may not run a woken thread for a while) for `done`.
template <typename Done>
bool eventually(Done done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

TEST_F(ParallelTest, WidthIsThePoolCappedByTheCores) {
  ASSERT_EQ(wa::set_thread_count(4), 4);
  EXPECT_EQ(wa::set_core_count(2), 2);
  EXPECT_EQ(wa::parallel_width(), 2);
  EXPECT_EQ(wa::set_core_count(16), 16);
  EXPECT_EQ(wa::parallel_width(), 4);
  // Unknown cores (0, or nonsense): a core per thread.
  EXPECT_EQ(wa::set_core_count(0), 0);
  EXPECT_EQ(wa::parallel_width(), 4);
  EXPECT_EQ(wa::set_core_count(-3), 0);
  EXPECT_EQ(wa::parallel_width(), 4);
  ASSERT_EQ(wa::set_thread_count(1), 1);
  EXPECT_EQ(wa::parallel_width(), 1);
}

TEST_F(ParallelTest, ThreadsForGivesEachThreadItsMinimumWork) {
  const double per = wa::kMinWorkPerThreadAwake;
  ASSERT_EQ(wa::set_thread_count(4), 4);
  wa::set_core_count(8);
  EXPECT_EQ(wa::planned_threads_for(0), 1u);
  EXPECT_EQ(wa::planned_threads_for(1.9 * per), 1u);
  EXPECT_EQ(wa::planned_threads_for(2 * per), 2u);
  EXPECT_EQ(wa::planned_threads_for(3.5 * per), 3u);
  EXPECT_EQ(wa::planned_threads_for(1e12), 4u);  // never past the pool
  wa::set_core_count(2);
  EXPECT_EQ(wa::planned_threads_for(1e12), 2u);  // never past the cores
  // Sleeping workers ask more of a stage than polling ones.
  EXPECT_GT(wa::kMinWorkPerThreadAsleep, wa::kMinWorkPerThreadAwake);
  const std::size_t now = wa::threads_for(2 * per);
  EXPECT_TRUE(now == 1 || now == 2);
  EXPECT_EQ(wa::threads_for(1e12), 2u);
  ASSERT_EQ(wa::set_thread_count(1), 1);
  EXPECT_EQ(wa::planned_threads_for(1e12), 1u);
  EXPECT_EQ(wa::threads_for(1e12), 1u);
  EXPECT_TRUE(wa::workers_awake());  // no worker to sleep
}

TEST_F(ParallelTest, WakeMakesSleepingWorkersPollAndThenTheySleepAgain) {
  wa::set_core_count(0);
  ASSERT_EQ(wa::set_thread_count(2), 2);
  wa::parallel_rest();
  ASSERT_TRUE(eventually([] { return !wa::workers_awake(); })) << "an idle worker never went to sleep";
  // Asleep, and no job comes: a woken worker polls, then naps again (the count moves only so).
  const std::size_t naps = wa::worker_naps();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(wa::worker_naps(), naps) << "a sleeping worker woke with nothing to wake it";
  wa::parallel_wake();
  EXPECT_TRUE(eventually([&] { return wa::worker_naps() > naps; })) << "parallel_wake left the worker asleep";
  EXPECT_TRUE(eventually([] { return !wa::workers_awake(); })) << "the woken worker never slept again";
  // A job still runs every task once after all this.
  std::vector<std::atomic<int>> runs(100);
  wa::parallel_for(runs.size(), [&](std::size_t t, std::size_t) { runs[t].fetch_add(1); });
  for (std::size_t t = 0; t < runs.size(); ++t) EXPECT_EQ(runs[t].load(), 1) << "task " << t;
}

TEST_F(ParallelTest, MoreThreadsThanCoresRunEveryTaskOnceOnItsWorkersScratch) {
  wa::set_core_count(1);
  ASSERT_EQ(wa::set_thread_count(6), 6);
  EXPECT_EQ(wa::parallel_width(), 1);
  EXPECT_EQ(wa::planned_threads_for(1e12), 1u);
  for (int job = 0; job < 50; ++job) {
    std::vector<std::atomic<int>> runs(37);
    std::atomic<bool> bad_worker{false};
    wa::parallel_for(runs.size(), [&](std::size_t t, std::size_t worker) {
      if (worker >= 6) bad_worker.store(true);
      runs[t].fetch_add(1);
    });
    EXPECT_FALSE(bad_worker.load());
    for (std::size_t t = 0; t < runs.size(); ++t) ASSERT_EQ(runs[t].load(), 1) << "job " << job << " task " << t;
  }
}

// Logits of a prefill, then of decode steps through the cache.
std::vector<float> prefill_then_steps(const wa::Model& model, const std::vector<std::int32_t>& ids,
                                      std::size_t prompt) {
  const std::size_t V = model.config().vocab;
  wa::ModelCache cache;
  EXPECT_EQ(cache.init(model, ids.size()), wa::Status::ok);
  std::vector<float> logits(ids.size() * V);
  for (std::size_t from = 0; from < ids.size();) {
    const std::size_t to = from == 0 ? prompt : from + 1;
    wa::ModelForward f;
    f.ids = ids.data() + from;
    f.tokens = to - from;
    f.cache = &cache;
    f.logits = logits.data() + from * V;
    EXPECT_EQ(model.forward(f), wa::Status::ok);
    from = to;
  }
  return logits;
}

TEST_F(ParallelTest, DecodeStepsSplitByColumnsGiveTheSameBitsAtAnyThreadAndCoreCount) {
  // Wide enough that a one-token step's products and LM head reach threads_for's minimum.
  wa_test::ModelSpec s;
  s.layers = 2;
  s.hidden = 256;
  s.heads = 8;
  s.kv_heads = 2;
  s.head_dim = 32;
  s.rope_dim = 32;
  s.intermediate = 1024;
  s.vocab = 2000;
  s.max_positions = 64;
  s.seed = 5;
  const wa_test::TestModel test(s);
  wa::Model model;
  test.build(model);
  std::vector<std::int32_t> ids(40);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>((i * 37 + 3) % s.vocab);
  wa::set_core_count(0);
  ASSERT_EQ(wa::set_thread_count(1), 1);
  const std::vector<float> one = prefill_then_steps(model, ids, 24);
  for (const auto& [threads, cores] : std::vector<std::pair<int, int>>{{2, 2}, {4, 4}, {4, 2}, {4, 1}}) {
    wa::set_core_count(cores);
    ASSERT_EQ(wa::set_thread_count(threads), threads);
    EXPECT_EQ(prefill_then_steps(model, ids, 24), one) << threads << " threads on " << cores << " cores";
  }
}

}  // namespace
