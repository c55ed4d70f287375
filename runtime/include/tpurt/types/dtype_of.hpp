// SPDX-License-Identifier: MIT
// dtype_of.hpp - the element type a host array of T holds (DTypeOf<std::int8_t>::value is
// DType::Int8, and so on for Bf16, std::int32_t and float).
#pragma once

#include "tpurt/bf16.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstdint>

namespace tpurt {

template <typename T> struct DTypeOf;
template <> struct DTypeOf<std::int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<Bf16> { static constexpr DType value = DType::Bf16; };
template <> struct DTypeOf<std::int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::Fp32; };

} // namespace tpurt
