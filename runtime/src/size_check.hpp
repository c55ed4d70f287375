// SPDX-License-Identifier: MIT
// size_check.hpp - the argument check every op entry point shares: a caller's array or buffer
// must hold as many bytes as the op reads or writes there.
#pragma once

#include "tpurt/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tpurt::detail {

// Throws InvalidArgument ("<op> <what> holds N bytes, needs M") if have < need.
inline void require_size(const char *op, std::size_t have, std::uint64_t need, const char *what) {
    if (have < need)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + " " + what + " holds " +
                                                    std::to_string(have) + " bytes, needs " +
                                                    std::to_string(need));
}

} // namespace tpurt::detail
