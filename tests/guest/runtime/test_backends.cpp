// SPDX-License-Identifier: MIT
// test_backends.cpp - guest test: the card behind the driver and the card's engine run in this
// process (Device::open_in_process() with the card's geometry and clock) give bit-identical
// results and the same MAC counts for the same ops on the same inputs: a bf16 matmul on a
// strided view, an fp32 convolution with stride and padding, softmax, layer norm and GELU.
// The same engine code runs both, so any difference is the runtime's backends.
#include "runtime_helpers.hpp"

#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::Tensor;

// What an op left in its output tensors, and the MACs its jobs reported.
struct Outcome {
    std::vector<std::vector<std::byte>> outputs;
    std::uint64_t macs = 0;
};

using Op = std::function<Outcome(tpurt::Device &)>;

std::vector<std::byte> bytes_of(const Tensor &t) {
    std::vector<std::byte> out(t.element_count() * tpurt::element_size(t.dtype()));
    t.copy_to_host(out.data(), out.size());
    return out;
}

void check_identical(const std::string &name, const Op &op) {
    tpurt::Device &card = guest_test::device();
    const tpurt::DeviceInfo &info = card.info();
    tpurt::Device engine = tpurt::Device::open_in_process({.mxu_rows = info.limits.mxu_rows,
                                                           .mxu_cols = info.limits.mxu_cols,
                                                           .ub_bytes = info.limits.ub_bytes,
                                                           .acc_bytes = info.limits.acc_bytes,
                                                           .clock_mhz = info.clock_mhz});
    const Outcome on_card = op(card), in_process = op(engine);
    INFO(name);
    REQUIRE(on_card.outputs.size() == in_process.outputs.size());
    for (std::size_t i = 0; i < on_card.outputs.size(); ++i) {
        REQUIRE(on_card.outputs[i].size() == in_process.outputs[i].size());
        CHECK(std::memcmp(on_card.outputs[i].data(), in_process.outputs[i].data(),
                          on_card.outputs[i].size()) == 0);
    }
    CHECK(on_card.macs == in_process.macs);
    CHECK(on_card.macs > 0);
}

} // namespace

TEST_CASE("the card and the engine in the process give bit-identical results", "[backends]") {
    check_identical("bf16 matmul on a strided view", [](tpurt::Device &dev) {
        constexpr std::uint32_t M = 150, K = 260, N = 130;
        const Tensor a = Tensor::from_host<tpurt::Bf16>(
            dev, tpurt::wide_range_bf16(std::size_t{M} * K, 1), {M, K});
        const Tensor b = Tensor::from_host<tpurt::Bf16>(
            dev, tpurt::wide_range_bf16(std::size_t{K} * N, 2), {K, N});
        Tensor c = Tensor::empty(dev, DType::Fp32, {M, N + 8});
        Tensor view = c.slice(1, 0, N);
        const tpurt::MatmulStats stats = tpurt::matmul(dev, a, b, view);
        return Outcome{{bytes_of(c)}, stats.macs};
    });
    check_identical("fp32 convolution, stride 2, padding 1", [](tpurt::Device &dev) {
        const Tensor x =
            Tensor::from_host<float>(dev, tpurt::random_fp32(2 * 13 * 11 * 6, 3), {2, 13, 11, 6});
        const Tensor w =
            Tensor::from_host<float>(dev, tpurt::random_fp32(3 * 3 * 6 * 9, 4), {3, 3, 6, 9});
        Tensor y = Tensor::empty(dev, DType::Fp32, {2, 7, 6, 9});
        const tpurt::MatmulStats stats =
            tpurt::conv2d(dev, x, w, y, {.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1});
        return Outcome{{bytes_of(y)}, stats.macs};
    });
    check_identical("softmax, layer norm and GELU", [](tpurt::Device &dev) {
        const Tensor x = Tensor::from_host<float>(
            dev, tpurt::uniform_fp32(37 * 300, 5, -30.0f, 30.0f), {37, 300});
        const Tensor gamma =
            Tensor::from_host<float>(dev, tpurt::uniform_fp32(300, 6, 0.5f, 2.0f), {300});
        const Tensor beta =
            Tensor::from_host<float>(dev, tpurt::uniform_fp32(300, 7, -1.0f, 1.0f), {300});
        Tensor soft = Tensor::empty(dev, DType::Fp32, {37, 300});
        Tensor norm = Tensor::empty(dev, DType::Fp32, {37, 300});
        Tensor gelu = Tensor::empty(dev, DType::Fp32, {37, 300});
        std::uint64_t macs = tpurt::softmax(dev, x, soft).macs;
        macs += tpurt::layer_norm(dev, x, gamma, beta, norm).macs;
        macs += tpurt::unary(dev, tpurt::Activation::Gelu, x, gelu).macs;
        return Outcome{{bytes_of(soft), bytes_of(norm), bytes_of(gelu)}, macs};
    });
}
