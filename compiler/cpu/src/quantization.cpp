// SPDX-License-Identifier: MIT
// quantization.cpp - the quantisation arithmetic the CPU kernels and the card share
// (tpumodel/quantization.hpp).
#include "tpumodel/quantization.hpp"

#include "tpumodel/cpu_kernels.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace tpumodel::cpu {

IntRange int_range(DType t) {
    switch (t) {
    case DType::Uint8:
        return {0, 255};
    case DType::Int8:
        return {-128, 127};
    case DType::Int32:
        return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    default:
        throw std::invalid_argument(std::string("not a quantised dtype: ") + dtype_name(t));
    }
}

std::optional<Channels> channels(const std::vector<std::int64_t> &shape, std::int64_t axis,
                                 std::uint64_t values) {
    if (values == 1)
        return Channels{};
    const auto rank = std::int64_t(shape.size());
    if (axis < -rank || axis >= rank)
        return std::nullopt;
    const std::size_t a = std::size_t(axis < 0 ? axis + rank : axis);
    if (std::uint64_t(shape[a]) != values)
        return std::nullopt;
    Channels c{1, values};
    for (std::size_t i = a + 1; i < shape.size(); ++i)
        c.inner *= std::uint64_t(shape[i]);
    return c;
}

std::int32_t to_int32(float v) {
    if (std::isnan(v))
        return 0;
    const double r = std::nearbyint(double(v)); // the default mode: to nearest, ties to even
    if (r <= double(std::numeric_limits<std::int32_t>::min()))
        return std::numeric_limits<std::int32_t>::min();
    if (r >= double(std::numeric_limits<std::int32_t>::max()))
        return std::numeric_limits<std::int32_t>::max();
    return std::int32_t(r);
}

float multiplier(float a_scale, float b_scale, float y_scale) {
    const float product = a_scale * b_scale; // binary32 (FLT_EVAL_METHOD 0), then divided
    return product / y_scale;
}

std::int64_t zero_point(const Tensor *zp, std::uint64_t i) {
    return zp ? int_at(*zp, zp->element_count() == 1 ? 0 : i) : 0;
}

} // namespace tpumodel::cpu
