// SPDX-License-Identifier: MIT
// The element operations of a receive-reduce (reduce.hpp), one loop per operation and type.
#include "link/reduce.hpp"

#include <bit>
#include <cstring>

#include "tpu_hw.h"
#include "vpu/vpu_math.hpp"

namespace tpu::engine {
namespace {

using vpu_math::is_nan;

float combine(uint8_t op, float a, float b) {
    switch (op) {
    case TPU_LINK_SUM:
        return a + b;
    case TPU_LINK_MAX:
        return is_nan(a) || is_nan(b) ? std::bit_cast<float>(vpu_math::kFp32Nan) : b > a ? b : a;
    default: // TPU_LINK_MIN
        return is_nan(a) || is_nan(b) ? std::bit_cast<float>(vpu_math::kFp32Nan) : b < a ? b : a;
    }
}

int32_t combine(uint8_t op, int32_t a, int32_t b) {
    switch (op) {
    case TPU_LINK_SUM:
        return int32_t(uint32_t(a) + uint32_t(b));
    case TPU_LINK_MAX:
        return b > a ? b : a;
    default:
        return b < a ? b : a;
    }
}

template <class T> T load(const uint8_t *p) {
    T v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

template <class T> void store(uint8_t *p, T v) {
    std::memcpy(p, &v, sizeof(v));
}

} // namespace

void link_reduce(uint8_t op, uint8_t dtype, uint8_t *dst, const uint8_t *msg, uint64_t bytes) {
    switch (dtype) {
    case TPU_DT_FP32:
        for (uint64_t i = 0; i < bytes; i += 4) {
            const float r = combine(op, load<float>(dst + i), load<float>(msg + i));
            store<uint32_t>(dst + i, vpu_math::to_fp32_bits(r));
        }
        break;
    case TPU_DT_BF16:
        for (uint64_t i = 0; i < bytes; i += 2) {
            const float a = vpu_math::from_bf16(load<uint16_t>(dst + i));
            const float b = vpu_math::from_bf16(load<uint16_t>(msg + i));
            store<uint16_t>(dst + i, vpu_math::to_bf16(combine(op, a, b)));
        }
        break;
    default: // TPU_DT_INT32
        for (uint64_t i = 0; i < bytes; i += 4)
            store<int32_t>(dst + i, combine(op, load<int32_t>(dst + i), load<int32_t>(msg + i)));
        break;
    }
}

} // namespace tpu::engine
