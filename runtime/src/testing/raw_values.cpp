// SPDX-License-Identifier: MIT
// raw_values.cpp - random raw elements and their copies into and out of tensors
// (testing/raw_values.hpp).
#include "tpurt/testing/raw_values.hpp"

#include "tpurt/types/bf16.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace tpurt {

RawValues random_raw_values(DType type, std::size_t n, std::mt19937 &rng) {
    RawValues v(n);
    for (auto &x : v) {
        if (type == DType::Int32) {
            x = rng();
            continue;
        }
        const float f = std::ldexp(float(int(rng() % 2000001) - 1000000), int(rng() % 40) - 30);
        x = type == DType::Bf16 ? Bf16::from_float(f).bits : std::bit_cast<std::uint32_t>(f);
    }
    return v;
}

void write_raw(const Tensor &t, const RawValues &v) {
    auto *p = static_cast<std::uint8_t *>(t.storage()->data()) + t.layout().offset_bytes();
    const std::size_t size = element_size(t.dtype());
    for (std::size_t i = 0; i < v.size(); ++i)
        std::memcpy(p + i * size, &v[i], size);
}

RawValues read_raw(const Tensor &t) {
    RawValues v(t.element_count());
    const auto *p =
        static_cast<const std::uint8_t *>(t.storage()->data()) + t.layout().offset_bytes();
    const std::size_t size = element_size(t.dtype());
    for (std::size_t i = 0; i < v.size(); ++i)
        std::memcpy(&v[i], p + i * size, size);
    return v;
}

Tensor raw_tensor(Device &device, DType type, const RawValues &v) {
    Tensor t = Tensor::empty(device, type, {v.size()});
    write_raw(t, v);
    return t;
}

} // namespace tpurt
