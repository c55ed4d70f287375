// SPDX-License-Identifier: MIT
// batcher.hpp - dynamic batching: requests of a few samples each are queued and one worker thread
// runs them on the card together, as one batch of at most max_batch samples, once the queue holds
// that many or the oldest request has waited queue_delay. Each request gets its own rows of the
// logits back (or the batch's exception) through a future, or a callback on the worker thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace tpu_serve {

class Batcher {
  public:
    // run(samples, rows) -> rows x classes logits, called on the worker thread only;
    // on_batch(rows) for each batch as it goes to the card, before its requests get their
    // results (metrics).
    using RunFn = std::function<std::vector<float>(const float *, std::size_t)>;
    Batcher(RunFn run, std::function<void(std::size_t)> on_batch, std::size_t features,
            std::size_t classes, std::size_t max_batch, std::chrono::microseconds queue_delay);
    ~Batcher();
    Batcher(const Batcher &) = delete;
    Batcher &operator=(const Batcher &) = delete;

    // done(logits, nullptr) with rows x classes logits, or done({}, the batch's exception).
    using Done = std::function<void(std::vector<float>, std::exception_ptr)>;

    // Queues rows (1..max_batch) samples; the future gives rows x classes logits.
    std::future<std::vector<float>> submit(std::vector<float> samples, std::size_t rows);
    // The same, with the result handed to `done` on the worker thread (it must not block).
    void submit(std::vector<float> samples, std::size_t rows, Done done);
    // Finishes the queued requests, then stops the worker; later submits throw.
    void stop();

  private:
    struct Pending {
        std::vector<float> samples;
        std::size_t rows;
        std::chrono::steady_clock::time_point queued;
        Done done;
    };
    void worker();

    RunFn run_;
    std::function<void(std::size_t)> on_batch_;
    std::size_t features_, classes_, max_batch_;
    std::chrono::microseconds delay_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Pending> queue_;
    std::size_t queued_rows_ = 0;
    bool stopping_ = false;
    std::thread thread_;
};

} // namespace tpu_serve
