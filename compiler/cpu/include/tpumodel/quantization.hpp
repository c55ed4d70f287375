// SPDX-License-Identifier: MIT
// quantization.hpp - ONNX's linear quantisation as both the CPU kernels and the card compute
// it (compiler/README.md, "int8"): the ranges of the quantised dtypes, the parameters given per
// tensor or per axis, zero points, the conversion of binary32 to int32 (round half to even,
// saturated, NaN to 0: the card's ACTIVATE conversion, and ONNX's rounding) and the
// requantisation multiplier of QLinearMatMul and QLinearConv.
#pragma once

#include "tpumodel/model.hpp"

#include <cstdint>
#include <optional>

namespace tpumodel::cpu {

struct IntRange {
    std::int64_t lo, hi;
};
// [0, 255] for uint8, [-128, 127] for int8, int32's range; throws std::invalid_argument else.
IntRange int_range(DType t);

// Which value of a per-tensor or per-axis parameter element i of a tensor uses.
struct Channels {
    std::uint64_t inner = 1; // elements per step along the axis
    std::uint64_t count = 1; // the axis's extent; 1 for one value for every element
    std::size_t of(std::uint64_t i) const { return std::size_t((i / inner) % count); }
};
// A parameter of `values` elements for a tensor of `shape`: one (per tensor), or one per
// position along `axis` (negative from the end); nullopt when it is neither.
std::optional<Channels> channels(const std::vector<std::int64_t> &shape, std::int64_t axis,
                                 std::uint64_t values);

// Round half to even, saturate to int32, NaN to 0.
std::int32_t to_int32(float v);
// The requantisation multiplier a_scale x b_scale / y_scale in binary32, rounded after each
// operation (as ONNX Runtime computes it).
float multiplier(float a_scale, float b_scale, float y_scale);
// Element i of a zero point (0 when it is left out).
std::int64_t zero_point(const Tensor *zp, std::uint64_t i);

// A value of dtype `t` as the card holds it: uint8 as the int8 u - 128 (so that differences of
// uint8 values, and products of those differences, are the card's int8 ones exactly), others as
// they are.
constexpr std::int64_t card_value(DType t, std::int64_t v) {
    return t == DType::Uint8 ? v - 128 : v;
}

} // namespace tpumodel::cpu
