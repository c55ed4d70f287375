// SPDX-License-Identifier: MIT
// rows.hpp - internal: an operand of the vector unit's ops seen as rows x cols, its last
// dimension the columns and the others walked as evenly spaced rows (elementwise ops and row
// reductions), refused with the op's name when it is not.
#pragma once

#include "ops/op_checks.hpp"
#include "tpurt/types/tensor_layout.hpp"

#include <cstdint>
#include <string>

namespace tpurt::detail {

struct Rows {
    std::uint32_t rows = 0, cols = 0;
    std::uint64_t stride = 0; // bytes
};

inline Rows rows_of(const std::string &op, const char *name, const TensorLayout &t) {
    const std::vector<std::size_t> &shape = t.shape();
    const std::vector<std::size_t> &strides = t.strides();
    const std::size_t last = t.rank() - 1;
    if (strides[last] != 1 && shape[last] > 1)
        refuse(op, std::string(name) + " " + t.describe() +
                       " does not have adjacent elements in its last dimension: copy it into a "
                       "contiguous tensor first");
    std::uint64_t rows = 1;
    std::uint64_t stride = 0; // elements between rows, 0 until a dimension of more than one
    for (std::size_t i = last; i-- > 0;) {
        if (shape[i] == 1)
            continue;
        if (stride == 0)
            stride = strides[i];
        else if (strides[i] != stride * rows)
            refuse(op, std::string(name) + " " + t.describe() +
                           " does not have evenly spaced rows: copy it into a contiguous tensor "
                           "first");
        rows *= shape[i];
    }
    if (rows > UINT32_MAX || shape[last] > UINT32_MAX)
        refuse(op, std::string(name) + " " + t.describe() + " is too large");
    const std::uint64_t row_bytes = shape[last] * element_size(t.dtype());
    const std::uint64_t stride_bytes = rows > 1 ? stride * element_size(t.dtype()) : row_bytes;
    if (stride_bytes < row_bytes)
        refuse(op, std::string(name) + " " + t.describe() + " has overlapping rows");
    return {static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(shape[last]),
            stride_bytes};
}

} // namespace tpurt::detail
