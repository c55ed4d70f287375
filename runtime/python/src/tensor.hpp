// SPDX-License-Identifier: MIT
// tensor.hpp - numpy <-> card tensor conversions shared by tensor.cpp and stream.cpp.
#pragma once

#include "bindings.hpp"

#include <pybind11/numpy.h>

#include <tpurt/tensor.hpp>

#include <cstddef>
#include <vector>

namespace tpurt_python {

// `array`'s values as the bytes of a densely packed tensor of `type` (bf16 from float values,
// rounded to nearest even, or from uint16 bit patterns), converted the way numpy's astype()
// would for the other types. Raises ValueError if numpy cannot convert.
std::vector<std::byte> host_bytes(const py::array &array, tpurt::DType type);

// The card type a numpy array maps onto by its own dtype (float32, int8, int32); ValueError
// naming the dtype otherwise.
tpurt::DType dtype_of_array(const py::array &array);

// The array's shape as a tensor shape.
std::vector<std::size_t> shape_of(const py::array &array);

} // namespace tpurt_python
