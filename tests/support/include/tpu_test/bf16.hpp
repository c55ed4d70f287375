// SPDX-License-Identifier: MIT
// bf16 helpers for tests: conversion to and from fp32 (round to nearest even, NaN kept quiet).
#pragma once

#include <bit>
#include <cstdint>

namespace tpu::test {

inline float bf16_to_float(uint16_t b) {
    return std::bit_cast<float>(uint32_t(b) << 16);
}

inline uint16_t float_to_bf16(float f) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a quiet NaN
        return uint16_t((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1);
    return uint16_t(u >> 16);
}

} // namespace tpu::test
