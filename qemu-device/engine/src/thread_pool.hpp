// SPDX-License-Identifier: MIT
// ThreadPool: a small persistent pool for the fast MXU and the vector unit's large element-wise
// instructions (vpu/vpu_split.hpp). parallel_for() hands out task indices to the calling thread
// and the workers and returns when all have run. One parallel_for at a time
// (the engine runs one job at a time); nothing is allocated per call. Threads are never pinned
// or re-prioritised (QEMU's sandbox may forbid it). Between batches a worker spins a little
// before it sleeps, and so does the caller waiting for the last task: a job's MATMULs and large
// vector instructions hand out batches tens of microseconds apart, and a futex wake-up costs as
// much in a VM. The caller never waits for a worker that has not started: on a host whose CPUs
// are busy with other processes, a batch that finds a worker still away runs on the caller.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace tpu::engine {

class ThreadPool {
  public:
    // threads >= 1 participants: the caller of parallel_for plus threads - 1 workers.
    explicit ThreadPool(unsigned threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool &) = delete;
    ThreadPool &operator=(const ThreadPool &) = delete;

    unsigned size() const { return unsigned(workers_.size()) + 1; }

    // Runs body(i) for every i in [0, count), spread over the pool; returns when all are done.
    template <class Body> void parallel_for(uint32_t count, Body &body) {
        run(
            count, [](void *ctx, uint32_t i) { (*static_cast<Body *>(ctx))(i); }, &body);
    }

  private:
    using TaskFn = void (*)(void *ctx, uint32_t index);

    void run(uint32_t count, TaskFn fn, void *ctx);
    void work_on_tasks();
    void worker_main();
    void shutdown(); // stops and joins the workers

    std::vector<std::thread> workers_;
    std::mutex lock_;
    std::condition_variable wake_; // a new batch or shutdown
    std::condition_variable idle_; // the last task of the batch finished
    // Written under lock_; also read without it by threads that spin before they sleep.
    std::atomic<uint64_t> batch_{0}; // generation of the current batch
    std::atomic<unsigned> busy_{0};  // workers not yet back from the current batch
    bool stop_ = false;

    TaskFn fn_ = nullptr;
    void *ctx_ = nullptr;
    uint32_t count_ = 0;
    std::atomic<uint32_t> next_{0}; // the next task to claim
    std::atomic<uint32_t> done_{0}; // tasks finished
};

} // namespace tpu::engine
