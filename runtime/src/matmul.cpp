// SPDX-License-Identifier: MIT
// matmul.cpp - runs compiled matmuls on a device: checks the operands, submits every program of
// the plan and waits for all of them; the host-span overloads stage through device buffers.
#include "tpurt/matmul.hpp"

#include "op_checks.hpp"
#include "plan_runner.hpp"
#include "tpurt/error.hpp"
#include "tpurt/matmul_compiler.hpp"

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

    const Buffer a_buf = device.allocate_copy(a.data(), a_bytes);
    const Buffer b_buf = device.allocate_copy(b.data(), b_bytes);
    Buffer c_buf = device.allocate(c_bytes);
    const MatmulStats stats = matmul(device, a_buf, b_buf, c_buf, m, k, n, type);
    std::memcpy(c.data(), c_buf.data(), c_bytes);
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
    problem.a_addr = a.device_addr();
    problem.b_addr = b.device_addr();
    problem.c_addr = c.device_addr();
    const MatmulPlan plan = compile_matmul(problem, device.info().limits);
    const std::uint64_t elem = element_size(type);
    detail::require_size("matmul", a.size(), std::uint64_t{m} * k * elem, "A");
    detail::require_size("matmul", b.size(), std::uint64_t{k} * n * elem, "B");
    detail::require_size("matmul", c.size(),
                         std::uint64_t{m} * n * element_size(accumulator_type(type)), "C");
    const std::array<const Buffer *, 3> buffers{&a, &b, &c};
    return detail::run_programs(device, plan.programs, buffers, timeout);
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
