// SPDX-License-Identifier: MIT
// dtype.hpp - element types the card understands, with the same values as enum tpu_dtype, and
// their sizes: int8, bf16 and fp32 are matmul inputs, int32 and fp32 the accumulator types.
#pragma once

#include <tpu_hw.h>

#include <cstddef>

namespace tpurt {

enum class DType : unsigned char {
    Int8 = TPU_DT_INT8,
    Bf16 = TPU_DT_BF16,
    Int32 = TPU_DT_INT32,
    Fp32 = TPU_DT_FP32,
};

constexpr std::size_t element_size(DType type) {
    switch (type) {
    case DType::Int8:
        return 1;
    case DType::Bf16:
        return 2;
    case DType::Int32:
    case DType::Fp32:
        return 4;
    }
    return 0;
}

// True for the types a matmul takes as inputs (A and B).
constexpr bool is_matmul_input(DType type) {
    return type == DType::Int8 || type == DType::Bf16 || type == DType::Fp32;
}

// The type of a matmul's result for input type `type`: int8 -> int32, bf16 and fp32 -> fp32.
constexpr DType accumulator_type(DType type) {
    return type == DType::Int8 ? DType::Int32 : DType::Fp32;
}

constexpr const char *dtype_name(DType type) {
    switch (type) {
    case DType::Int8:
        return "int8";
    case DType::Bf16:
        return "bf16";
    case DType::Int32:
        return "int32";
    case DType::Fp32:
        return "fp32";
    }
    return "?";
}

} // namespace tpurt
