// SPDX-License-Identifier: MIT
// AbortWhenRunning: calls tpu_engine_abort() from another thread once the next job is known to
// be under way, i.e. tpu_engine_progress() has moved by a given number of instructions since
// construction — not after a fixed sleep, which on a loaded host can land before the job started
// (or, on a fast one, after it ended). The tests give it jobs far longer than any host takes to
// notice the progress, so the abort lands inside them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "tpu_engine.h"

namespace tpu::test {

class AbortWhenRunning {
  public:
    // Aborts once `started` more instructions (or fused groups) have started on eng.
    AbortWhenRunning(tpu_engine *eng, uint64_t started)
        : base_(tpu_engine_progress(eng)), thread_([this, eng, started] {
              while (!job_ended_.load() && tpu_engine_progress(eng) - base_ < started)
                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
              if (job_ended_.load())
                  return;
              abort_time_ = std::chrono::steady_clock::now();
              tpu_engine_abort(eng);
              aborted_ = true;
          }) {}
    ~AbortWhenRunning() { job_ended(); }
    AbortWhenRunning(const AbortWhenRunning &) = delete;
    AbortWhenRunning &operator=(const AbortWhenRunning &) = delete;

    // Call when the job's tpu_engine_run() returned: stops waiting and joins the thread.
    void job_ended() {
        job_ended_ = true;
        if (thread_.joinable())
            thread_.join();
    }
    // After job_ended(): whether the abort was requested (false: the job ended first), and when.
    bool aborted() const { return aborted_; }
    std::chrono::steady_clock::time_point abort_time() const { return abort_time_; }

  private:
    const uint64_t base_;
    std::atomic<bool> job_ended_{false};
    bool aborted_ = false;
    std::chrono::steady_clock::time_point abort_time_;
    std::thread thread_;
};

} // namespace tpu::test
