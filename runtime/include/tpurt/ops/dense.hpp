// SPDX-License-Identifier: MIT
// dense.hpp - a dense (fully connected) layer on the card: out = f(scale * (A x W + bias)),
// A[M x K] and W[K x N] row-major int8, bf16 or fp32, bias fp32[N], out[M x N] int8, bf16,
// int32 or fp32. The matmul runs as tpurt::matmul does (exact, k ascending into the
// accumulators); each finished accumulator block then goes through ACTIVATE (bias, scale,
// function, conversion, as docs/hardware.md defines them) and out to memory, so the fp32
// intermediate never leaves the card. For int8 inputs the int32 accumulators are converted to
// fp32 first and `scale` requantises them.
#pragma once

#include "tpurt/card/buffer.hpp"
#include "tpurt/card/vpu_ops.hpp"
#include "tpurt/codegen/matmul_compiler.hpp"
#include "tpurt/device.hpp"
#include "tpurt/ops/matmul.hpp"
#include "tpurt/types/bf16.hpp"
#include "tpurt/types/dtype.hpp"
#include "tpurt/types/dtype_of.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace tpurt {

struct DenseLayer {
    std::uint32_t m = 0;
    std::uint32_t k = 0;
    std::uint32_t n = 0;
    DType in_type = DType::Bf16;  // A and W: Int8, Bf16 or Fp32
    DType out_type = DType::Fp32; // Int8, Bf16, Int32 or Fp32
    Activation activation = Activation::None;
    float scale = 1.0f; // applied after the bias
};

// The matmul problem of a dense layer with its operands at these device addresses (densely
// packed), for compile_matmul(); no bias address means no bias.
MatmulProblem dense_problem(const DenseLayer &layer, std::uint64_t a_addr, std::uint64_t w_addr,
                            std::optional<std::uint64_t> bias_addr, std::uint64_t out_addr);

// Operands in device buffers, densely packed: A holds M*K and W K*N elements of in_type, bias
// (nullptr: none) N fp32, out receives M*N elements of out_type.
MatmulStats dense(Device &device, const Buffer &a, const Buffer &w, const Buffer *bias, Buffer &out,
                  const DenseLayer &layer, std::chrono::nanoseconds timeout = Job::default_timeout);

// Host arrays (raw bytes of the layer's types), staged through device buffers; an empty bias
// means none.
MatmulStats dense(Device &device, std::span<const std::byte> a, std::span<const std::byte> w,
                  std::span<const float> bias, std::span<std::byte> out, const DenseLayer &layer);

// Typed host arrays: the input and output types come from the element types.
template <typename In, typename Out>
MatmulStats dense(Device &device, std::span<const In> a, std::span<const In> w,
                  std::span<const float> bias, Activation activation, std::span<Out> out,
                  std::uint32_t m, std::uint32_t k, std::uint32_t n, float scale = 1.0f) {
    return dense(device, std::as_bytes(a), std::as_bytes(w), bias, std::as_writable_bytes(out),
                 DenseLayer{.m = m,
                            .k = k,
                            .n = n,
                            .in_type = DTypeOf<In>::value,
                            .out_type = DTypeOf<Out>::value,
                            .activation = activation,
                            .scale = scale});
}

} // namespace tpurt
