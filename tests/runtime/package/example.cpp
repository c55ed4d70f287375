// SPDX-License-Identifier: MIT
// example.cpp - a small application built out of tree against an installed libtpurt (by
// check-install.sh, once through pkg-config and once through find_package(tpurt)). With a card
// it runs an exact bf16 matmul on tensors and prints "example: ok"; without one it prints the
// runtime's explanation and exits 3.
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.h>
#include <tpurt/tpurt.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
    try {
        tpurt::Device dev = tpurt::Device::open();
        const auto a = tpurt::random_bf16(64 * 96, 1), b = tpurt::random_bf16(96 * 32, 2);
        const tpurt::Tensor ta = tpurt::Tensor::from_host<tpurt::Bf16>(dev, a, {64, 96});
        const tpurt::Tensor tb = tpurt::Tensor::from_host<tpurt::Bf16>(dev, b, {96, 32});
        tpurt::Tensor tc = tpurt::Tensor::empty(dev, tpurt::DType::Fp32, {64, 32});
        tpurt::matmul(dev, ta, tb, tc);
        std::vector<float> ref(64 * 32);
        tpurt::reference_matmul(a, b, ref, 64, 96, 32);
        const std::vector<float> got = tc.to_vector<float>();
        if (std::memcmp(got.data(), ref.data(), ref.size() * sizeof(float)) != 0) {
            std::puts("example: the card's result differs from the reference");
            return 1;
        }
        std::printf("example: ok, %d card(s), C API sees %d\n",
                    static_cast<int>(tpurt::Device::list().size()), tpurt_device_count());
        return 0;
    } catch (const tpurt::Error &error) {
        std::printf("example: %s\n", error.what());
        return error.code() == tpurt::ErrorCode::NoDevice ? 3 : 1;
    }
}
