// SPDX-License-Identifier: MIT
// matmul.cpp - runs matmuls on a device through cached executables: checks the operands and
// launches the executable of the shape; the host-span overloads stage through the device's
// staging pool.
#include "tpurt/ops/matmul.hpp"

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
MatmulStats matmul_host(Device &device, std::span<const In> a, std::span<const In> b,
                        std::span<Out> c, std::uint32_t m, std::uint32_t k, std::uint32_t n,
                        DType type) {
    const std::uint64_t a_bytes = std::uint64_t{m} * k * sizeof(In);
    const std::uint64_t b_bytes = std::uint64_t{k} * n * sizeof(In);
    const std::uint64_t c_bytes = std::uint64_t{m} * n * sizeof(Out);
    detail::require_size("matmul", a.size_bytes(), a_bytes, "A");
    detail::require_size("matmul", b.size_bytes(), b_bytes, "B");
    detail::require_size("matmul", c.size_bytes(), c_bytes, "C");
    if (a_bytes == 0 || b_bytes == 0)
        throw Error(ErrorCode::InvalidArgument, "matmul dimensions must be non-zero");

    detail::BufferPool &staging = *detail::state_of(device).staging;
    const detail::PooledBuffer a_buf = staging.acquire_copy(a.data(), a_bytes);
    const detail::PooledBuffer b_buf = staging.acquire_copy(b.data(), b_bytes);
    detail::PooledBuffer c_buf = staging.acquire(c_bytes);
    const MatmulStats stats =
        matmul(device, a_buf.buffer(), b_buf.buffer(), c_buf.buffer(), m, k, n, type);
    std::memcpy(c.data(), c_buf.buffer().data(), c_bytes);
    return stats;
}

} // namespace

MatmulStats matmul(Device &device, const Buffer &a, const Buffer &b, Buffer &c, std::uint32_t m,
                   std::uint32_t k, std::uint32_t n, DType type, std::chrono::nanoseconds timeout) {
    detail::require_matrix_unit(device.info(), type);
    MatmulProblem problem;
    problem.type = type;
    problem.m = m;
    problem.k = k;
    problem.n = n;
    const std::shared_ptr<const Executable> exe = cached_executable(device, problem);
    const std::uint64_t elem = element_size(type);
    detail::require_size("matmul", a.size(), std::uint64_t{m} * k * elem, "A");
    detail::require_size("matmul", b.size(), std::uint64_t{k} * n * elem, "B");
    detail::require_size("matmul", c.size(),
                         std::uint64_t{m} * n * element_size(accumulator_type(type)), "C");
    const std::array<std::uint64_t, 3> bases{a.device_addr(), b.device_addr(), c.device_addr()};
    const std::array<const Buffer *, 3> buffers{&a, &b, &c};
    return exe->run(device, bases, buffers, timeout);
}

MatmulStats matmul(Device &device, std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                   std::span<std::int32_t> c, std::uint32_t m, std::uint32_t k, std::uint32_t n) {
    return matmul_host(device, a, b, c, m, k, n, DType::Int8);
}

MatmulStats matmul(Device &device, std::span<const Bf16> a, std::span<const Bf16> b,
                   std::span<float> c, std::uint32_t m, std::uint32_t k, std::uint32_t n) {
    return matmul_host(device, a, b, c, m, k, n, DType::Bf16);
}

MatmulStats matmul(Device &device, std::span<const float> a, std::span<const float> b,
                   std::span<float> c, std::uint32_t m, std::uint32_t k, std::uint32_t n) {
    return matmul_host(device, a, b, c, m, k, n, DType::Fp32);
}

} // namespace tpurt
