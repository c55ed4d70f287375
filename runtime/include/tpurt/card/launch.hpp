// SPDX-License-Identifier: MIT
// launch.hpp - tpurt::OpLaunch: an op whose operands were checked and whose executable was
// compiled (or fetched from the device's cache), ready to run. Every op on tensors is written
// as prepare_<op>() returning an OpLaunch; its blocking form runs it (run()) and its
// asynchronous form queues it on a stream (Stream::enqueue()), so both are one line each. An op
// of several executables (a TRANSPOSE into a scratch tensor, then the matmul that reads it)
// returns an OpSequence of launches, run or queued in order the same way.
#pragma once

#include "tpurt/card/buffer.hpp"
#include "tpurt/card/job.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/ops/matmul.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace tpurt {

class Device;

struct OpLaunch {
    std::shared_ptr<const Executable> executable;
    std::vector<std::uint64_t> bases; // argument i's device address
    // Every buffer the op touches, shared: a queued op keeps them alive until its jobs retire.
    std::vector<std::shared_ptr<Buffer>> buffers;

    const std::string &name() const { return executable->name(); }
    std::vector<const Buffer *> buffer_pointers() const;
    // Runs the op's jobs and waits for them (Executable::run()).
    MatmulStats run(Device &device, std::chrono::nanoseconds timeout = Job::default_timeout) const;
};

// Launches run in order, each after the previous one has ended: an op made of several
// executables. Each launch holds the buffers its jobs touch, scratch tensors included, so a
// queued sequence keeps them alive until those jobs retire.
struct OpSequence {
    std::vector<OpLaunch> launches;

    // Runs each launch and waits for it, in order; the stats summed (jobs too).
    MatmulStats run(Device &device, std::chrono::nanoseconds timeout = Job::default_timeout) const;
};

// The launch of `exe` on tensors given in its argument order (null ones skipped: an optional
// operand such as a bias), holding their buffers.
OpLaunch launch_of(std::shared_ptr<const Executable> exe,
                   std::initializer_list<const Tensor *> operands);
OpLaunch launch_of(std::shared_ptr<const Executable> exe, std::span<const Tensor *const> operands);

} // namespace tpurt
