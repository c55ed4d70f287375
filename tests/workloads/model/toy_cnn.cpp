// SPDX-License-Identifier: MIT
// toy_cnn.cpp - a small random CNN checkpoint for the inference tests (toy_cnn.hpp).
#include "toy_cnn.hpp"

#include <cmath>
#include <tpurt/testing/test_patterns.hpp>

namespace tpu_test {

tpu_model::Checkpoint random_cnn_checkpoint(const RandomCnn &shape, unsigned seed) {
    tpu_model::Checkpoint c;
    c.model = "cnn-random";
    c.notes["input.mean"] = "0.25";
    c.notes["input.stddev"] = "0.5";
    c.notes["input.shape"] = std::to_string(shape.height) + "x" + std::to_string(shape.width) +
                             "x" + std::to_string(shape.channels);
    const auto add = [&](const std::string &name, std::vector<std::uint32_t> dims,
                         std::size_t fan_in) {
        std::size_t n = 1;
        for (std::uint32_t d : dims)
            n *= d;
        const float limit = fan_in ? std::sqrt(6.0f / float(fan_in)) : 0.2f;
        c.tensors.push_back({name, dims, tpurt::uniform_fp32(n, seed++, -limit, limit)});
    };
    std::size_t in = shape.channels, h = shape.height, w = shape.width;
    for (std::size_t i = 0; i < shape.filters.size(); ++i) {
        const auto f = std::uint32_t(shape.filters[i]);
        add("conv" + std::to_string(i) + ".w", {3, 3, std::uint32_t(in), f}, 9 * in);
        add("conv" + std::to_string(i) + ".b", {f}, 0);
        in = f, h /= 2, w /= 2;
    }
    std::vector<std::size_t> sizes{h * w * in};
    sizes.insert(sizes.end(), shape.dense.begin(), shape.dense.end());
    for (std::size_t j = 0; j + 1 < sizes.size(); ++j) {
        const auto a = std::uint32_t(sizes[j]), b = std::uint32_t(sizes[j + 1]);
        add("layer" + std::to_string(j) + ".w", {a, b}, a);
        add("layer" + std::to_string(j) + ".b", {b}, 0);
    }
    return c;
}

tpu_model::Checkpoint toy_checkpoint() {
    return random_cnn_checkpoint({9, 8, 2, {4, 6}, {10, 3}}, 1);
}

} // namespace tpu_test
