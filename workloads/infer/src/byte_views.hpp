// SPDX-License-Identifier: MIT
// byte_views.hpp - typed arrays as the raw bytes the runtime's reference models take and give.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace tpu_infer::detail {

template <typename T> std::span<const std::byte> bytes(const std::vector<T> &v) {
    return std::as_bytes(std::span<const T>(v));
}

template <typename T> std::vector<T> from_bytes(const std::vector<std::byte> &b) {
    std::vector<T> v(b.size() / sizeof(T));
    std::copy(b.begin(), b.end(), reinterpret_cast<std::byte *>(v.data()));
    return v;
}

} // namespace tpu_infer::detail
