// SPDX-License-Identifier: MIT
// recovering_runner.hpp - runs the batcher's batches on a model the card can lose. When a batch
// fails with an error the card recovers from (a job that hung or was reset, a banned file:
// tpurt::is_retryable), the runner reports not ready, opens the device and loads the model again,
// and runs the batch once more; if that fails too, or the model cannot be loaded, the batch's
// requests are answered 503 with Retry-After (a ProtocolError). While the model is not loaded, a
// thread of the runner tries to load it again every second (and so does the next batch), and
// ready() says false until it is. No request is dropped or left waiting. Other errors pass
// through (500).
#pragma once

#include "tpu_serve/batcher.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace tpu_serve {

class RecoveringRunner {
  public:
    // Opens the device and loads the model on it (dropping any earlier one first); returns the
    // function that runs a batch on it. Throws if it cannot.
    using Open = std::function<Batcher::RunFn()>;
    // Whether an error of a batch is one the card recovers from.
    using Retryable = std::function<bool(const std::exception &)>;

    // Opens the model once (its errors reach the caller: a server that cannot start says why).
    RecoveringRunner(Open open, Retryable retryable);
    ~RecoveringRunner();
    RecoveringRunner(const RecoveringRunner &) = delete;
    RecoveringRunner &operator=(const RecoveringRunner &) = delete;

    // The batcher's run function (its worker thread only).
    std::vector<float> run(const float *x, std::size_t rows);
    // Whether the model is loaded and the last batch did not lose it (GET /v2/health/ready).
    bool ready() const { return ready_.load(); }
    // The runner's Prometheus counters: card failures and model reloads.
    std::string metrics() const;

  private:
    // Loads the model again after `why` (mutex_ held); returns "" or why it could not.
    std::string reopen(const std::string &why);
    // The thread that loads a lost model again every second.
    void reloader();

    Open open_;
    Retryable retryable_;
    std::mutex mutex_; // run_, and the device under it
    std::condition_variable lost_;
    bool stopping_ = false;
    Batcher::RunFn run_; // empty while the model is not loaded
    std::atomic<bool> ready_{false};
    std::atomic<std::uint64_t> failures_{0}, reloads_{0}, unavailable_{0};
    std::thread thread_;
};

} // namespace tpu_serve
