// SPDX-License-Identifier: MIT
// tensor_ops.cpp - checks tensor operands against an op's shapes and types and turns them
// into the op's device addresses and row strides (see tensor_ops.hpp).
#include "tpurt/tensor_ops.hpp"

#include "op_checks.hpp"
#include "tpurt/error.hpp"
#include "tpurt/op_executables.hpp"

#include <array>
#include <string>

namespace tpurt {

namespace {

[[noreturn]] void refuse(const std::string &op, const std::string &message) {
    throw Error(ErrorCode::InvalidArgument, op + ": " + message);
}

// A rank-2 operand of `type` whose rows are unit-strided; returns its row stride in bytes.
std::uint64_t matrix_row_stride(const std::string &op, const char *name, const Tensor &t,
                                DType type) {
    if (t.rank() != 2)
        refuse(op, std::string(name) + " is " + t.layout().describe() + ", not a matrix");
    if (t.dtype() != type)
        refuse(op,
               std::string(name) + " is " + t.layout().describe() + ", needs " + dtype_name(type));
    if (t.strides()[1] != 1 && t.size(1) > 1)
        refuse(op, std::string(name) + " " + t.layout().describe() +
                       " does not have adjacent elements in its rows (a transposed view?): "
                       "copy it into a contiguous tensor first");
    if (t.strides()[0] < t.size(1) && t.size(0) > 1)
        refuse(op, std::string(name) + " " + t.layout().describe() + " has overlapping rows");
    return std::uint64_t{t.size(0) > 1 ? t.strides()[0] : t.size(1)} * element_size(type);
}

} // namespace

MatmulStats matmul(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                   std::chrono::nanoseconds timeout) {
    const std::string op = "matmul";
    if (!is_matmul_input(a.dtype()))
        refuse(op, "A is " + a.layout().describe() + ": the card multiplies int8, bf16 or fp32");
    const DType type = a.dtype();
    detail::require_matrix_unit(device.info(), type);
    MatmulProblem problem;
    problem.type = type;
    problem.a_stride = matrix_row_stride(op, "A", a, type);
    problem.b_stride = matrix_row_stride(op, "B", b, type);
    problem.c_stride = matrix_row_stride(op, "C", c, accumulator_type(type));
    problem.m = static_cast<std::uint32_t>(a.size(0));
    problem.k = static_cast<std::uint32_t>(a.size(1));
    problem.n = static_cast<std::uint32_t>(b.size(1));
    if (b.size(0) != a.size(1) || c.size(0) != a.size(0) || c.size(1) != b.size(1))
        refuse(op, "shapes do not chain: A " + a.layout().describe() + " x B " +
                       b.layout().describe() + " -> C " + c.layout().describe());
    if (a.size(0) > UINT32_MAX || a.size(1) > UINT32_MAX || b.size(1) > UINT32_MAX)
        refuse(op, "dimensions beyond 2^32 - 1");
    const std::shared_ptr<const Executable> exe = matmul_executable(device, problem);
    const std::array<std::uint64_t, 3> bases{a.device_addr(), b.device_addr(), c.device_addr()};
    const std::array<const Buffer *, 3> buffers{&a.buffer(), &b.buffer(), &c.buffer()};
    return exe->run(device, bases, buffers, timeout);
}

} // namespace tpurt
