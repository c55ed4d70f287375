// SPDX-License-Identifier: MIT
// stream_state.hpp - internal: what a tpurt::Stream and its events share: the stream's
// timeline syncobj, the points handed out and submitted, the jobs not yet retired, work
// deferred behind unfinished jobs (host copies and what was queued after them, run by a
// helper thread), and the first error of the stream's work (see stream.hpp).
#pragma once

#include "backend/backend.hpp"
#include "memory/buffer_pool.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/device.hpp"
#include "tpurt/stream.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tpurt::detail {

// An op queued on a stream, alive until its last job retires.
struct StreamOp {
    OpLaunch launch;
    std::size_t jobs_left = 0;
    MatmulStats stats;
    std::chrono::steady_clock::time_point start;
};

// A submitted job not yet retired: it signals `point` of the stream's timeline.
struct StreamJob {
    std::uint64_t point = 0;
    std::uint64_t id = 0;
    PooledBuffer program; // patched for this job, back to the device's pool at retirement
    std::shared_ptr<StreamOp> op;
    bool waited_on = false; // a host wait sleeps in the backend's job wait on it (unlocked)
    bool ended = false;     // `record` holds its completion record
    JobRecord record = {};
};

// Work queued behind a host copy that has not run yet; it takes points first..last.
struct DeferredWork {
    std::uint64_t first = 0, last = 0;
    std::shared_ptr<StreamOp> op;              // an op's jobs, or
    std::function<void()> host;                // host work (with its name and buffers), or
    std::string host_name;                     //
    std::vector<std::shared_ptr<Buffer>> keep; //
    std::shared_ptr<StreamState> other;        // a wait for another stream's point
    std::uint64_t other_point = 0;
};

class StreamState {
  public:
    StreamState(Device device, StreamOptions options);
    ~StreamState();
    StreamState(const StreamState &) = delete;
    StreamState &operator=(const StreamState &) = delete;

    void enqueue(OpLaunch launch);
    void enqueue_host(std::string name, std::function<void()> work,
                      std::vector<std::shared_ptr<Buffer>> buffers);
    void wait_for(const std::shared_ptr<StreamState> &other, std::uint64_t point);
    std::uint64_t end_point();
    bool reached(std::uint64_t point) const;
    // Waits on the host until `point` has signalled, retires the jobs up to it and throws the
    // stream's first error.
    void wait(std::uint64_t point, std::chrono::nanoseconds timeout);
    // Waits for everything, errors ignored (the Stream's destructor).
    void drain() noexcept;

    std::uint32_t syncobj() const { return syncobj_; }

    // Capture (graph.hpp): enqueue() records launches instead of submitting them, host work and
    // waits for other streams are refused, until end_capture() hands the launches out.
    void begin_capture();
    std::vector<OpLaunch> end_capture();
    bool capturing() const;

  private:
    using Lock = std::unique_lock<std::mutex>;
    void submit_op(Lock &lock, const std::shared_ptr<StreamOp> &op, std::uint64_t first);
    std::uint64_t submit_job(Lock &lock, const StreamOp &op, std::size_t index, std::uint64_t point,
                             Buffer &program);
    void run_host(const DeferredWork &work) noexcept;
    void transfer(const StreamState &other, std::uint64_t other_point, std::uint64_t point);
    void signal(std::uint64_t point);
    void retire(std::uint64_t upto) noexcept;
    void fail(std::exception_ptr error) noexcept;
    bool wait_point(std::uint64_t point, std::int64_t deadline_ns) const;
    bool wait_job(Lock &lock, std::uint64_t point, std::int64_t deadline_ns);
    void worker_loop();
    // Throws Error(InvalidArgument) naming `what` while the stream captures (locked).
    void refuse_in_capture(const std::string &what) const;
    void start_worker(Lock &lock);

    Device device_;
    StreamOptions options_;
    std::shared_ptr<Backend> backend_;
    std::uint32_t syncobj_ = 0;
    mutable std::mutex mutex_;
    std::condition_variable work_ready_, drained_;
    std::uint64_t assigned_ = 0;  // the last point handed out
    std::uint64_t signalled_ = 0; // every point up to this one is known to have signalled
    std::uint64_t own_point_ = 0; // the latest point a job of this stream signals
    std::deque<StreamJob> in_flight_;
    std::vector<std::uint32_t> handles_; // the buffer handles of the job being submitted
    std::deque<DeferredWork> deferred_;
    std::exception_ptr error_;
    std::optional<std::vector<OpLaunch>> captured_;
    std::thread worker_;
    bool stopping_ = false;
};

} // namespace tpurt::detail
