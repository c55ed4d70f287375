// SPDX-License-Identifier: MIT
// conv2d.cpp - runs convolutions on a device through cached executables; the host-span
// overloads stage through the device's staging pool (see conv2d.hpp).
#include "tpurt/ops/conv2d.hpp"

#include "device/device_state.hpp"
#include "ops/op_checks.hpp"
#include "tpurt/codegen/op_executables.hpp"
#include "tpurt/error.hpp"

#include <array>
#include <cstring>
#include <string>

namespace tpurt {

namespace {

template <typename In, typename Out>
MatmulStats conv2d_host(Device &device, std::span<const In> input, std::span<const In> weights,
                        std::span<Out> output, const Conv2dShape &shape, DType type) {
    const std::uint64_t in_bytes = shape.input_elements() * sizeof(In);
    const std::uint64_t w_bytes = shape.weight_elements() * sizeof(In);
    const std::uint64_t out_bytes = shape.output_elements() * sizeof(Out);
    detail::require_size("conv2d", input.size_bytes(), in_bytes, "input");
    detail::require_size("conv2d", weights.size_bytes(), w_bytes, "weights");
    detail::require_size("conv2d", output.size_bytes(), out_bytes, "output");
    if (in_bytes == 0 || w_bytes == 0)
        throw Error(ErrorCode::InvalidArgument, "conv2d dimensions must be non-zero");

    detail::BufferPool &staging = *detail::state_of(device).staging;
    const detail::PooledBuffer in_buf = staging.acquire_copy(input.data(), in_bytes);
    const detail::PooledBuffer w_buf = staging.acquire_copy(weights.data(), w_bytes);
    detail::PooledBuffer out_buf = staging.acquire(out_bytes);
    const MatmulStats stats =
        conv2d(device, in_buf.buffer(), w_buf.buffer(), out_buf.buffer(), type, shape);
    std::memcpy(output.data(), out_buf.buffer().data(), out_bytes);
    return stats;
}

} // namespace

MatmulStats conv2d(Device &device, const Buffer &input, const Buffer &weights, Buffer &output,
                   DType type, const Conv2dShape &shape, std::chrono::nanoseconds timeout) {
    detail::require_matrix_unit(device.info(), type);
    const std::shared_ptr<const Executable> exe =
        cached_executable(device, Conv2dProblem{.type = type, .shape = shape});
    const std::uint64_t elem = element_size(type);
    detail::require_size("conv2d", input.size(), shape.input_elements() * elem, "input");
    detail::require_size("conv2d", weights.size(), shape.weight_elements() * elem, "weights");
    detail::require_size("conv2d", output.size(),
                         shape.output_elements() * element_size(accumulator_type(type)), "output");
    const std::array<std::uint64_t, 3> bases{input.device_addr(), weights.device_addr(),
                                             output.device_addr()};
    const std::array<const Buffer *, 3> buffers{&input, &weights, &output};
    return exe->run(device, bases, buffers, timeout);
}

MatmulStats conv2d(Device &device, std::span<const std::int8_t> input,
                   std::span<const std::int8_t> weights, std::span<std::int32_t> output,
                   const Conv2dShape &shape) {
    return conv2d_host(device, input, weights, output, shape, DType::Int8);
}

MatmulStats conv2d(Device &device, std::span<const Bf16> input, std::span<const Bf16> weights,
                   std::span<float> output, const Conv2dShape &shape) {
    return conv2d_host(device, input, weights, output, shape, DType::Bf16);
}

MatmulStats conv2d(Device &device, std::span<const float> input, std::span<const float> weights,
                   std::span<float> output, const Conv2dShape &shape) {
    return conv2d_host(device, input, weights, output, shape, DType::Fp32);
}

} // namespace tpurt
