// SPDX-License-Identifier: MIT
// reference.hpp - a network evaluated on the CPU step for step in the card's arithmetic (bf16 or
// int8 layers as docs/hardware.md defines them, through tpurt's golden models:
// tpu_nn::reference_logits), which the card's logits must equal bit for bit; and the labels of
// logits.
#pragma once

#include "tpu_infer/network.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpu_infer {

// The logits (batch x outputs) of `batch` raw samples.
std::vector<float> reference_logits(const Network &net, const float *raw, std::size_t batch);

// argmax of each row (the first maximum).
std::vector<std::uint32_t> argmax_rows(const std::vector<float> &logits, std::size_t classes);

} // namespace tpu_infer
