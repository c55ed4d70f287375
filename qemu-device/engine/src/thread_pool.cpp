// SPDX-License-Identifier: MIT
// Persistent worker pool: batch hand-off under a mutex, tasks claimed with an atomic counter.
#include "thread_pool.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tpu::engine {
namespace {

// Polls of a spin before sleeping: with x86's pause about 50-100 us.
constexpr int kSpinPolls = 2000;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// Spins until done() or kSpinPolls polls have passed.
template <class Done> void spin_until(Done done) {
    for (int i = 0; i < kSpinPolls && !done(); i++)
        cpu_relax();
}

} // namespace

ThreadPool::ThreadPool(unsigned threads) {
    workers_.reserve(threads > 1 ? threads - 1 : 0);
    try {
        for (unsigned i = 1; i < threads; i++)
            workers_.emplace_back([this] { worker_main(); });
    } catch (...) {
        shutdown();
        throw;
    }
}

ThreadPool::~ThreadPool() {
    shutdown();
}

void ThreadPool::shutdown() {
    {
        std::lock_guard<std::mutex> guard(lock_);
        stop_ = true;
    }
    wake_.notify_all();
    for (std::thread &t : workers_)
        t.join();
    workers_.clear();
}

void ThreadPool::work_on_tasks() {
    for (uint32_t i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1)) {
        fn_(ctx_, i);
        if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
            std::lock_guard<std::mutex> guard(lock_);
            idle_.notify_all();
        }
    }
}

void ThreadPool::run(uint32_t count, TaskFn fn, void *ctx) {
    // A worker not yet back from the previous batch (still asleep, or its host CPU busy with
    // another process) would see this batch's state change under it: after a short spin the
    // caller runs the batch alone rather than wait for that worker to be scheduled.
    spin_until([this] { return busy_.load(std::memory_order_acquire) == 0; });
    if (busy_.load(std::memory_order_acquire) != 0) {
        for (uint32_t i = 0; i < count; i++)
            fn(ctx, i);
        return;
    }
    {
        std::lock_guard<std::mutex> guard(lock_);
        fn_ = fn;
        ctx_ = ctx;
        count_ = count;
        next_.store(0);
        done_.store(0);
        busy_ = unsigned(workers_.size());
        batch_++;
    }
    wake_.notify_all();
    work_on_tasks();
    // Only the tasks are waited for: a worker that never got to this batch leaves it later.
    spin_until([this] { return done_.load(std::memory_order_acquire) == count_; });
    std::unique_lock<std::mutex> guard(lock_);
    idle_.wait(guard, [this] { return done_.load(std::memory_order_acquire) == count_; });
}

void ThreadPool::worker_main() {
    uint64_t seen = 0;
    for (;;) {
        spin_until([&] { return batch_.load(std::memory_order_acquire) != seen; });
        {
            std::unique_lock<std::mutex> guard(lock_);
            wake_.wait(guard, [&] { return stop_ || batch_ != seen; });
            if (stop_)
                return;
            seen = batch_;
        }
        work_on_tasks();
        busy_.fetch_sub(1, std::memory_order_release);
    }
}

} // namespace tpu::engine
