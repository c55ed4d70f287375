// SPDX-License-Identifier: MIT
// stream.hpp - tpurt::Stream and tpurt::Event: asynchronous, in-order queues of ops on a device.
//
// A stream owns one timeline syncobj of the driver. Its k-th job signals point k (SUBMIT's
// out-sync) and waits for point k - 1 (its in-sync) unless that point is the stream's own
// previous job's: the driver queues one file's jobs of one priority in order on one card
// queue, which runs them one after the other, so the card runs a stream's jobs in order
// while the host goes on at once: queueing an op never waits for the card. Different streams
// are not ordered against each other unless one waits for another's event. An event is a
// point of a stream's timeline: the host waits for it (with a timeout) or queries it, and
// another stream can wait for it on the card (the point is transferred into that stream's
// timeline, the host does not block).
//
// Host <-> device copies of tensors on a stream are ordered after the stream's earlier jobs
// and before its later ones: a copy queued behind unfinished jobs is done by the stream's
// helper thread once they end (the host memory must stay valid until then), and later jobs
// are submitted after it.
//
// Errors of queued work (a job the card ended with an error, a failed submission) are kept
// and thrown, naming the op, by the next synchronize() of the stream or wait() on one of its
// events. Buffers of queued ops stay alive until their jobs end; program buffers go back to
// their pool only then. With the profiler on, each op is recorded once its jobs have ended.
//
// Jobs are submitted with ids so that their completion records (status, failing
// instruction, cycles, MACs) can be collected: once the timeline shows a job's point
// signalled, a non-blocking DRM_IOCTL_TPU_WAIT retires it. Queueing never waits; a host
// wait for a point that one of the stream's jobs signals sleeps in DRM_IOCTL_TPU_WAIT on
// that job (absolute deadline), which returns its record in the same call; other points are
// waited for on the syncobj.
//
// Threads: a Stream may be used from several threads (it takes its own lock); ops queued
// from different threads are ordered as their enqueue calls were. Events are values (copies
// refer to the same point) and may be used from any thread.
#pragma once

#include "tpurt/card/job.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/device.hpp"
#include "tpurt/graph.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace tpurt {

namespace detail {
class StreamState;
}

struct StreamOptions {
    // Scheduling priority of the stream's jobs, 0 (low, the default) to 3 (high): SUBMIT's
    // priority, which the driver maps onto the card's queues and their PRIORITY registers
    // (docs/architecture.md, "Queues and priorities"); a card with one queue serves every
    // priority from it. Other values are refused with InvalidArgument. Priorities above 0
    // take CAP_SYS_NICE: without it the stream's jobs fail (Error(SystemCall), EACCES, at
    // synchronize or an event wait).
    int priority = 0;
};

class Event {
  public:
    Event() = default; // an event that has already happened

    // True once every op queued on the stream before record() has ended (errors or not).
    bool query() const;
    // Waits until then; throws Error(Timeout) if that takes longer than `timeout`, and the
    // first error of the stream's work so far (JobError naming the op) if there was one.
    void wait(std::chrono::nanoseconds timeout = Job::default_timeout) const;

  private:
    friend class Stream;
    Event(std::shared_ptr<detail::StreamState> stream, std::uint64_t point)
        : stream_(std::move(stream)), point_(point) {}

    std::shared_ptr<detail::StreamState> stream_;
    std::uint64_t point_ = 0;
};

class Stream {
  public:
    explicit Stream(Device &device, StreamOptions options = {});
    Stream(Stream &&) noexcept = default;
    Stream &operator=(Stream &&) noexcept = default;
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;
    // Waits for the stream's work (errors ignored) and releases its syncobj.
    ~Stream();

    Device &device() { return device_; }
    const StreamOptions &options() const { return options_; }

    // Queues a prepared op (launch.hpp) and returns at once.
    void enqueue(OpLaunch launch);
    // Queues a sequence's launches one after the other (launch.hpp's OpSequence).
    void enqueue(OpSequence sequence);
    // Queues `work` to run on the host after the stream's earlier jobs and before its later
    // ones; `buffers` stay alive until it has run. Errors it throws surface like a job's.
    void enqueue_host(std::string name, std::function<void()> work,
                      std::vector<std::shared_ptr<Buffer>> buffers = {});

    // Host -> device and device -> host copies of a tensor's elements (Tensor::copy_from_host /
    // copy_to_host) in stream order. `data` must stay valid until the copy has run.
    void copy_from_host(const Tensor &tensor, const void *data, std::size_t bytes);
    void copy_to_host(const Tensor &tensor, void *data, std::size_t bytes);

    // Capture (graph.hpp): until end_capture(), the ops queued here are recorded, not run;
    // host work and waits for events are refused. end_capture() returns them joined as a Graph
    // named `name` (Error(InvalidArgument) if none was queued).
    void begin_capture();
    Graph end_capture(std::string name = "graph");
    // True between begin_capture() and end_capture().
    bool capturing() const;

    // An event at the stream's current end.
    Event record() const;
    // Makes the stream's later work wait for `event` (on the card; the host goes on).
    void wait(const Event &event);
    // Waits for everything queued so far; throws the first error of the stream's work (see
    // above) or Error(Timeout).
    void synchronize(std::chrono::nanoseconds timeout = Job::default_timeout);
    // True if everything queued so far has ended.
    bool idle() const { return record().query(); }

  private:
    Device device_;
    StreamOptions options_;
    std::shared_ptr<detail::StreamState> state_;
};

} // namespace tpurt
