// SPDX-License-Identifier: MIT
// op_checks.hpp - the argument checks every op entry point (matmul, dense, conv2d) shares: an
// operand refused with the op's name, the card has a matrix or vector unit, a caller's array or
// buffer holds as many bytes as the op reads or writes there, a matrix operand's rows are
// unit-strided.
#pragma once

#include "tpurt/device_info.hpp"
#include "tpurt/error.hpp"
#include "tpurt/types/dtype.hpp"
#include "tpurt/types/tensor_layout.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tpurt::detail {

// Throws InvalidArgument "<op>: <message>".
[[noreturn]] inline void refuse(const std::string &op, const std::string &message) {
    throw Error(ErrorCode::InvalidArgument, op + ": " + message);
}

// Throws Unsupported if type is a matrix-unit input type the card lacks.
inline void require_matrix_unit(const DeviceInfo &info, DType type) {
    if (is_matmul_input(type) && !info.supports(type))
        throw Error(ErrorCode::Unsupported, std::string("this card has no ") + dtype_name(type) +
                                                " matrix unit (caps " + std::to_string(info.caps) +
                                                ")");
}

// Throws Unsupported if the card has no vector unit (VECTOR, REDUCE, ACTIVATE, POOL, TRANSPOSE).
inline void require_vector_unit(const DeviceInfo &info, const std::string &what = "") {
    if (!info.has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit" + what + " (caps " +
                                                std::to_string(info.caps) + ")");
}

// Throws InvalidArgument ("<op> <what> holds N bytes, needs M") if have < need.
inline void require_size(const char *op, std::size_t have, std::uint64_t need, const char *what) {
    if (have < need)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + " " + what + " holds " +
                                                    std::to_string(have) + " bytes, needs " +
                                                    std::to_string(need));
}

// A rank-2 operand of `type` whose rows are unit-strided; returns its row stride in bytes.
inline std::uint64_t matrix_row_stride(const std::string &op, const char *name,
                                       const TensorLayout &t, DType type) {
    const std::string described = t.describe();
    const auto refuse = [&](const std::string &what) {
        throw Error(ErrorCode::InvalidArgument, op + ": " + name + " " + what);
    };
    if (t.rank() != 2)
        refuse("is " + described + ", not a matrix");
    if (t.dtype() != type)
        refuse("is " + described + ", needs " + dtype_name(type));
    if (t.strides()[1] != 1 && t.size(1) > 1)
        refuse(described + " does not have adjacent elements in its rows (a transposed view?): "
                           "copy it into a contiguous tensor first");
    if (t.strides()[0] < t.size(1) && t.size(0) > 1)
        refuse(described + " has overlapping rows");
    return std::uint64_t{t.size(0) > 1 ? t.strides()[0] : t.size(1)} * element_size(type);
}

} // namespace tpurt::detail
