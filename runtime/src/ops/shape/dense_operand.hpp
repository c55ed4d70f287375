// SPDX-License-Identifier: MIT
// dense_operand.hpp - internal: the check the ops over a tensor's axes share: a densely packed
// operand of at least one dimension whose extents the programs can hold.
#pragma once

#include "ops/op_checks.hpp"
#include "tpurt/types/tensor_layout.hpp"

#include <cstdint>
#include <string>

namespace tpurt::detail {

inline void require_dense(const std::string &op, const char *name, const TensorLayout &t) {
    if (!t.is_contiguous() || t.rank() == 0)
        refuse(op, std::string(name) + " " + t.describe() +
                       " must be densely packed with at least one dimension: copy a view into "
                       "a contiguous tensor first");
    for (std::size_t extent : t.shape())
        if (extent == 0 || extent > UINT32_MAX)
            refuse(op, std::string(name) + " " + t.describe() +
                           " must have extents between 1 and 2^32 - 1");
}

} // namespace tpurt::detail
