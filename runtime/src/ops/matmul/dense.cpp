// SPDX-License-Identifier: MIT
// dense.cpp - dense layers on a device: the executable of the matmul with an ACTIVATE
// epilogue, its operands checked, launched like a matmul (see dense.hpp).
#include "tpurt/ops/dense.hpp"

#include "device/device_state.hpp"
#include "ops/op_checks.hpp"
#include "tpurt/codegen/op_executables.hpp"
#include "tpurt/error.hpp"

#include <array>
#include <cstring>
#include <string>

namespace tpurt {

namespace {

struct OperandBytes {
    std::uint64_t a, w, bias, out;
};

OperandBytes operand_bytes(const DenseLayer &layer, bool with_bias) {
    return {std::uint64_t{layer.m} * layer.k * element_size(layer.in_type),
            std::uint64_t{layer.k} * layer.n * element_size(layer.in_type),
            with_bias ? std::uint64_t{layer.n} * 4 : 0,
            std::uint64_t{layer.m} * layer.n * element_size(layer.out_type)};
}

} // namespace

MatmulProblem dense_problem(const DenseLayer &layer, std::uint64_t a_addr, std::uint64_t w_addr,
                            std::optional<std::uint64_t> bias_addr, std::uint64_t out_addr) {
    MatmulProblem problem;
    problem.type = layer.in_type;
    problem.m = layer.m;
    problem.k = layer.k;
    problem.n = layer.n;
    problem.a_addr = a_addr;
    problem.b_addr = w_addr;
    problem.c_addr = out_addr;
    problem.epilogue = MatmulEpilogue{.function = layer.activation,
                                      .out_type = layer.out_type,
                                      .bias_addr = bias_addr,
                                      .scale = layer.scale};
    return problem;
}

MatmulStats dense(Device &device, const Buffer &a, const Buffer &w, const Buffer *bias, Buffer &out,
                  const DenseLayer &layer, std::chrono::nanoseconds timeout) {
    const DeviceInfo &info = device.info();
    detail::require_matrix_unit(info, layer.in_type);
    if (!info.has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit for ACTIVATE (caps " +
                                                std::to_string(info.caps) + ")");
    // Only whether there is a bias matters for the executable; the address is its argument 3.
    const std::optional<std::uint64_t> bias_addr =
        bias ? std::optional<std::uint64_t>(bias->device_addr()) : std::nullopt;
    const std::shared_ptr<const Executable> exe =
        cached_executable(device, dense_problem(layer, 0, 0, bias_addr, 0));
    const OperandBytes need = operand_bytes(layer, bias != nullptr);
    detail::require_size("dense layer", a.size(), need.a, "A");
    detail::require_size("dense layer", w.size(), need.w, "W");
    if (bias)
        detail::require_size("dense layer", bias->size(), need.bias, "bias");
    detail::require_size("dense layer", out.size(), need.out, "output");
    const std::array<std::uint64_t, 4> bases{a.device_addr(), w.device_addr(), out.device_addr(),
                                             bias ? bias->device_addr() : 0};
    const std::array<const Buffer *, 4> buffers{&a, &w, &out, bias};
    const std::size_t count = bias ? 4 : 3;
    return exe->run(device, std::span<const std::uint64_t>(bases.data(), count),
                    std::span<const Buffer *const>(buffers.data(), count), timeout);
}

MatmulStats dense(Device &device, std::span<const std::byte> a, std::span<const std::byte> w,
                  std::span<const float> bias, std::span<std::byte> out, const DenseLayer &layer) {
    const OperandBytes need = operand_bytes(layer, !bias.empty());
    detail::require_size("dense layer", a.size(), need.a, "A");
    detail::require_size("dense layer", w.size(), need.w, "W");
    detail::require_size("dense layer", bias.size_bytes(), need.bias, "bias");
    detail::require_size("dense layer", out.size(), need.out, "output");
    if (need.a == 0 || need.w == 0)
        throw Error(ErrorCode::InvalidArgument, "dense layer dimensions must be non-zero");

    detail::BufferPool &staging = *detail::state_of(device).staging;
    const detail::PooledBuffer a_buf = staging.acquire_copy(a.data(), need.a);
    const detail::PooledBuffer w_buf = staging.acquire_copy(w.data(), need.w);
    detail::PooledBuffer out_buf = staging.acquire(need.out);
    std::optional<detail::PooledBuffer> bias_buf;
    if (!bias.empty())
        bias_buf.emplace(staging.acquire_copy(bias.data(), need.bias));
    const MatmulStats stats =
        dense(device, a_buf.buffer(), w_buf.buffer(), bias_buf ? &bias_buf->buffer() : nullptr,
              out_buf.buffer(), layer);
    std::memcpy(out.data(), out_buf.buffer().data(), need.out);
    return stats;
}

} // namespace tpurt
