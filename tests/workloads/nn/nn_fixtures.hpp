// SPDX-License-Identifier: MIT
// nn_fixtures.hpp - what the graph tests of the host and the guest share: rows of SplitMix64
// normals, the logits recorded in tests/golden/checkpoints (8 x 10 float32, little-endian), and
// random fp32 networks of a model spec.
#pragma once

#include <tpu_data/batches.hpp>
#include <tpu_infer/network.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/spec.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tpu_test {

inline std::vector<float> normals(std::size_t n, std::uint64_t seed) {
    tpu_data::SplitMix64 rng(seed);
    std::vector<float> v(n);
    for (float &x : v)
        x = rng.normal();
    return v;
}

inline std::vector<float> recorded_logits(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    REQUIRE(bytes.size() == 8 * 10 * sizeof(float));
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
}

// The network of `spec` He-initialised from `seed` (as its graph), biases uniform in +-0.2 from
// seed + 1, inputs standardised with mean 0.25 and stddev 0.5.
inline tpu_infer::Network random_network(const std::string &spec, unsigned seed) {
    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec(spec), seed);
    tpu_model::Checkpoint c;
    c.model = spec;
    c.notes["input.mean"] = "0.25";
    c.notes["input.stddev"] = "0.5";
    net.save(c);
    for (auto &t : c.tensors)
        if (t.name.ends_with(".b"))
            t.data = tpurt::uniform_fp32(t.data.size(), seed + 1, -0.2f, 0.2f);
    return tpu_infer::network_from_checkpoint(c, spec);
}

} // namespace tpu_test
