// SPDX-License-Identifier: MIT
// toy_cnn.hpp - random CNN checkpoints in workloads/README.md's CNN format, for the host's and
// the guest's inference tests: He-scaled uniform weights, small random biases.
#pragma once

#include <tpu_model/checkpoint.hpp>

#include <cstddef>
#include <vector>

namespace tpu_test {

// A random CNN: images height x width x channels, 3x3 convolution blocks of `filters`, then
// dense layers of the sizes in `dense` (the last is the classes).
struct RandomCnn {
    std::size_t height, width, channels;
    std::vector<std::size_t> filters, dense;
};
tpu_model::Checkpoint random_cnn_checkpoint(const RandomCnn &shape, unsigned seed);

// random_cnn_checkpoint({9, 8, 2, {4, 6}, {10, 3}}, 1).
tpu_model::Checkpoint toy_checkpoint();

} // namespace tpu_test
