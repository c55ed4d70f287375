// SPDX-License-Identifier: MIT
// op_checks.hpp - the argument checks every op entry point (matmul, dense, conv2d) shares: the
// card has a matrix unit for the type, and a caller's array or buffer holds as many bytes as the
// op reads or writes there.
#pragma once

#include "tpurt/device_info.hpp"
#include "tpurt/dtype.hpp"
#include "tpurt/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tpurt::detail {

// Throws Unsupported if type is a matrix-unit input type the card lacks.
inline void require_matrix_unit(const DeviceInfo &info, DType type) {
    if (is_matmul_input(type) && !info.supports(type))
        throw Error(ErrorCode::Unsupported, std::string("this card has no ") + dtype_name(type) +
                                                " matrix unit (caps " + std::to_string(info.caps) +
                                                ")");
}

// Throws InvalidArgument ("<op> <what> holds N bytes, needs M") if have < need.
inline void require_size(const char *op, std::size_t have, std::uint64_t need, const char *what) {
    if (have < need)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + " " + what + " holds " +
                                                    std::to_string(have) + " bytes, needs " +
                                                    std::to_string(need));
}

} // namespace tpurt::detail
