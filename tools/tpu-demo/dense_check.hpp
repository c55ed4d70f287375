// SPDX-License-Identifier: MIT
// dense_check.hpp - runs one dense layer on the card and on the CPU reference and reports both.
#pragma once

#include "matmul_check.hpp"

#include <tpurt/device.hpp>

// Prints the report of a bf16 dense layer (bias, RELU, bf16 output) of the given shape;
// returns true if the card's result is exact.
bool check_dense(tpurt::Device &device, const MatmulShape &shape);
