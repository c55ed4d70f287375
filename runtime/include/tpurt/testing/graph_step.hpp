// SPDX-License-Identifier: MIT
// graph_step.hpp - the capture tests' training-like step on one device (host and guest tests of
// tpurt::Graph): a convolution layer with zero padding, max pooling, a dense layer, the fused
// cross-entropy, backward matmuls through scratch, column sums and an SGD update, with its
// inputs per seed and its results as bits, so that a captured step and eager launches can be
// compared bit for bit.
#pragma once

#include "tpurt/device.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"

#include <cstdint>
#include <vector>

namespace tpurt {

struct GraphStep {
    static constexpr std::size_t N = 4, H = 8, W = 8, C = 3, F = 8, CLASSES = 10;

    Device dev;
    Tensor x, cw, cb, s, p, dw, db, logits, targets, loss, grad, ddw, ddb, dh, m, hp;
    // The inputs' host copies: write_inputs() queues copies from them, run in stream order, so
    // they must not change before the stream has run them.
    std::vector<float> host_batch, host_targets;

    explicit GraphStep(Device d);

    // The ops of one step, queued (or captured) on `stream`: the update by the last step's
    // gradients first, so that the convolution's zero padding follows a program that used the
    // unified buffer.
    void queue(Stream &stream);
    // The batch with seed `seed` and its one-hot targets, copied in in stream order (wait for the
    // stream before the next call).
    void write_inputs(Stream &stream, std::uint64_t seed);
    // Every tensor the step writes, as fp32 bit patterns.
    std::vector<std::uint32_t> result_bits() const;
};

} // namespace tpurt
