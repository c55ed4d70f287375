// SPDX-License-Identifier: MIT
// conv2d.hpp - 2-D convolutions on the card: input NHWC [N][H][W][C], weights HWIO
// [KH][KW][C][F], output NHWC [N][OH][OW][F] (int8 -> int32, bf16 -> fp32, fp32 -> fp32), with
// strides and zero padding, OH = (H + 2 pad_h - KH) / stride_h + 1 (OW likewise).
//
// Compilation: each image's output rows are cut into blocks whose pixels fit one MATMUL
// (<= 65535 rows) and the accumulators, and whose padded input rows fit the unified buffer.
// A block is one program (one job, so its unified buffer starts zeroed and the padding needs no
// writes): one DMA of the input rows into their place inside the zero-padded image, then per
// tile of F filters, per kernel tap (ky, kx) in row-major order, per tile of C channels: a
// LOAD_W of that tap's C x F weights straight from host memory and one row_group MATMUL over
// all the block's output pixels (the first overwriting the accumulators, the rest
// accumulating), and finally a DMA of the accumulators into the output. When a whole image is
// one block, images are stacked: as many as the unified buffer, the accumulators and one MATMUL
// hold lie one below the other in the buffer (each in a slot of its padded height rounded up to
// stride_h), and every MATMUL walks them as one tall image; the output rows that straddle two
// images are computed (the card's MAC count includes them) and never written out. Every stack
// writes the same part of the buffer, so as many stacks as a program holds share one.
//
// The order of the reduction is therefore: taps (ky, kx) in row-major order, every tap
// included (padding taps multiply zeros), and within a tap the channels as one MATMUL sums them
// (docs/hardware.md, Numerics), starting from +0.0: fp32 acc = fmaf(x[iy][ix][c],
// w[ky][kx][c][f], acc) for c ascending; bf16 blocks of 32 channels from the tap's first, each
// summed in an even-channel and an odd-channel chain of bf16 MATMUL steps (DAZ, exact product,
// one rounding, FTZ) from +0 and then added to acc once (bf16 channel tiles are multiples of 32
// but for the last, so tiling never splits a block); int8 exact sums.
// reference_conv2d() (golden/reference_conv2d.hpp) computes exactly this.
//
// With an epilogue (a convolution layer), each finished filter tile of a block goes through
// ACTIVATE on the card instead of leaving as accumulators: int32 accumulators converted to fp32,
// + bias[f], x scale, the function, conversion to the epilogue's output type (docs/hardware.md,
// Numerics; dense.hpp's epilogue), staged in the top of the unified buffer and written out.
// reference_conv2d_layer() (golden/reference_conv2d.hpp) computes exactly this.
#pragma once

#include "tpurt/card/buffer.hpp"
#include "tpurt/codegen/matmul_compiler.hpp"
#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/ops/matmul.hpp"
#include "tpurt/types/bf16.hpp"
#include "tpurt/types/dtype.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tpurt {

struct Conv2dShape {
    std::uint32_t batch = 1;
    std::uint32_t height = 0;
    std::uint32_t width = 0;
    std::uint32_t channels = 0;
    std::uint32_t kernel_h = 1;
    std::uint32_t kernel_w = 1;
    std::uint32_t filters = 0;
    std::uint32_t stride_h = 1;
    std::uint32_t stride_w = 1;
    std::uint32_t pad_h = 0; // zero rows above and below
    std::uint32_t pad_w = 0; // zero columns left and right

    std::uint32_t out_height() const { return (height + 2 * pad_h - kernel_h) / stride_h + 1; }
    std::uint32_t out_width() const { return (width + 2 * pad_w - kernel_w) / stride_w + 1; }
    std::uint64_t input_elements() const {
        return std::uint64_t{batch} * height * width * channels;
    }
    std::uint64_t weight_elements() const {
        return std::uint64_t{kernel_h} * kernel_w * channels * filters;
    }
    std::uint64_t output_elements() const {
        return std::uint64_t{batch} * out_height() * out_width() * filters;
    }
};

struct Conv2dProblem {
    DType type = DType::Int8; // Int8, Bf16 or Fp32 input and weights
    Conv2dShape shape;
    std::uint64_t input_addr = 0; // device virtual addresses, densely packed
    std::uint64_t weight_addr = 0;
    std::uint64_t output_addr = 0;
    // Bytes between the weights of two taps (ky KW + kx) and of two input channels; 0: densely
    // packed HWIO (C F and F elements). A convolution's weight gradient reads dy [N, OH, OW, F]
    // in place as its weights [OH, OW, N, F].
    std::uint64_t weight_tap_stride = 0;
    std::uint64_t weight_channel_stride = 0;
    // ACTIVATE on the accumulators (bias fp32[F] at its bias_addr); none: the accumulators.
    std::optional<MatmulEpilogue> epilogue = std::nullopt;
};

struct Conv2dPlan {
    std::uint32_t block_rows = 0;  // output rows per program
    std::vector<Program> programs; // one job each, in any order
};

// The programs computing `problem` on a card with `limits`. Throws Error (InvalidArgument) for
// bad shapes, (Unsupported) when even one output row does not fit the card.
Conv2dPlan compile_conv2d(const Conv2dProblem &problem, const ArrayLimits &limits,
                          std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

// Operands in device buffers: runs every program of the plan and waits for them.
MatmulStats conv2d(Device &device, const Buffer &input, const Buffer &weights, Buffer &output,
                   DType type, const Conv2dShape &shape,
                   std::chrono::nanoseconds timeout = Job::default_timeout);

// Host arrays, staged through device buffers.
MatmulStats conv2d(Device &device, std::span<const std::int8_t> input,
                   std::span<const std::int8_t> weights, std::span<std::int32_t> output,
                   const Conv2dShape &shape);
MatmulStats conv2d(Device &device, std::span<const Bf16> input, std::span<const Bf16> weights,
                   std::span<float> output, const Conv2dShape &shape);
MatmulStats conv2d(Device &device, std::span<const float> input, std::span<const float> weights,
                   std::span<float> output, const Conv2dShape &shape);

} // namespace tpurt
