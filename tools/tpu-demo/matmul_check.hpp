// SPDX-License-Identifier: MIT
// matmul_check.hpp - runs one matmul on the card and on the CPU reference and reports both.
#pragma once

#include <tpurt/device.hpp>
#include <tpurt/types/dtype.hpp>

#include <cstdint>

struct MatmulShape {
    std::uint32_t m, k, n;
};

// Prints the report of one matmul; returns true if the card's result is exact.
bool check_matmul(tpurt::Device &device, tpurt::DType type, const MatmulShape &shape);
