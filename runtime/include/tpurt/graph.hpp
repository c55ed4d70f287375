// SPDX-License-Identifier: MIT
// graph.hpp - tpurt::Graph: a sequence of op launches captured on a stream once (a training
// step, an inference batch) and replayed as few jobs, with one patch pass per replay.
//
//     stream.begin_capture();
//     tpurt::dense(stream, x, w, &b, h, tpurt::Activation::Relu);  // recorded, not run
//     tpurt::softmax(stream, h, y);
//     tpurt::Graph step = stream.end_capture("step");
//     for (...) { stream.copy_from_host(x, batch, bytes); step.replay(stream); }
//
// While a stream captures, enqueue() (every op's stream form) records the launch after its
// usual checks instead of submitting it; host work (copies, collectives, enqueue_host) and
// waits for other streams' events are refused (Error(InvalidArgument)): queue them before or
// after the captured part. end_capture() joins the captured programs, in order, into programs
// of at most TPU_PROGRAM_MAX_BYTES (1 MiB, the driver's and the card's limit per job), with a
// reset of the on-chip state between two that share a job, so that each runs as it would in a
// job of its own (program_fusion.hpp) and the results are bit for bit the eager ones. A replay
// patches that executable once and submits job_count() jobs; a job is split only where the next
// op's program would take it past 1 MiB.
//
// Between replays the contents of every captured tensor may change (the next batch copied into
// the input tensors, a parameter); the tensors themselves, their shapes and the ops stay. A
// parameter is a tensor the captured ops read, declared with add_parameter(): set_parameter()
// keeps a value and the next replay writes it in stream order before its jobs (a learning rate
// in the optimiser's hyperparameters). The graph holds every captured buffer: a buffer released
// (Buffer::release()) after capture makes replay() throw Error(InvalidArgument) naming the
// graph, before anything is queued. Another shape needs another capture. A card reset does not
// invalidate a graph (the card keeps nothing between jobs); the replay whose job it hits ends
// with JobError (CANCELED) at the next synchronize, like any launch, and may be replayed again.
// Errors of a replay's jobs are JobError naming the graph; error_pc counts in the joined program.
#pragma once

#include "tpurt/tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace tpurt {

class Stream;

namespace detail {
struct GraphState;
}

class Graph {
  public:
    Graph() = default; // no capture: replay() refuses

    const std::string &name() const;
    std::size_t launch_count() const;        // ops captured
    std::size_t eager_job_count() const;     // jobs the same launches submit one by one
    std::size_t job_count() const;           // jobs one replay submits
    std::uint64_t instruction_count() const; // of one replay, resets included

    // Declares `slot` (a tensor the captured ops read) as the parameter `name`.
    void add_parameter(const std::string &name, const Tensor &slot);
    // The value the next replay writes into parameter `name` first (its bytes, exactly the
    // slot's size; the float form for an fp32 slot).
    void set_parameter(const std::string &name, const void *data, std::size_t bytes);
    void set_parameter(const std::string &name, std::span<const float> values);

    // Queues the captured launches on `stream` (of the device they were captured on).
    void replay(Stream &stream);

  private:
    friend class Stream;
    explicit Graph(std::shared_ptr<detail::GraphState> state) : state_(std::move(state)) {}
    detail::GraphState &state() const;

    std::shared_ptr<detail::GraphState> state_;
};

} // namespace tpurt
