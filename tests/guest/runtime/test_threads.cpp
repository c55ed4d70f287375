// SPDX-License-Identifier: MIT
// test_threads.cpp - guest test: several threads share one tpurt::Device (its executable cache,
// program and staging pools, and the profiler). Each thread runs matmuls of its own shape and
// of a shape every thread uses, on host arrays and on tensors, and checks each result exactly;
// the shared shape is compiled once, and the profile holds one record per call.
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using tpurt::DType;

// Runs `rounds` bf16 matmuls of m x k x n on host arrays and on tensors; returns mismatches.
int worker(tpurt::Device &dev, std::uint32_t m, std::uint32_t k, std::uint32_t n, int rounds,
           std::uint64_t seed) {
    int bad = 0;
    for (int r = 0; r < rounds; ++r) {
        const auto a = tpurt::random_bf16(std::size_t{m} * k, seed + r);
        const auto b = tpurt::random_bf16(std::size_t{k} * n, seed + r + 1000);
        std::vector<float> ref(std::size_t{m} * n), c(ref.size());
        tpurt::reference_matmul(a, b, ref, m, k, n);
        tpurt::matmul(dev, a, b, c, m, k, n);
        bad += std::memcmp(c.data(), ref.data(), ref.size() * 4) != 0;
        const tpurt::Tensor ta = tpurt::Tensor::from_host<tpurt::Bf16>(dev, a, {m, k});
        const tpurt::Tensor tb = tpurt::Tensor::from_host<tpurt::Bf16>(dev, b, {k, n});
        tpurt::Tensor tc = tpurt::Tensor::empty(dev, DType::Fp32, {m, n});
        tpurt::matmul(dev, ta, tb, tc);
        bad += tc.to_vector<float>() != ref;
    }
    return bad;
}

} // namespace

TEST_CASE("threads sharing one device get exact results", "[threads]") {
    tpurt::Device dev = tpurt::Device::open(0);
    const int threads = 4, rounds = 3;
    const std::uint64_t compiled = dev.runtime_stats().compilations;
    tpurt::profiler::clear();
    tpurt::profiler::start();
    std::atomic<int> bad{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            try {
                // One shape of the thread's own, one shared by all.
                bad += worker(dev, 40 + t, 130, 70, rounds, 100 * t);
                bad += worker(dev, 64, 96, 80, rounds, 100 * t + 50);
            } catch (const tpurt::Error &error) {
                UNSCOPED_INFO("thread " << t << ": " << error.what());
                bad += 1000;
            }
        });
    for (std::thread &t : pool)
        t.join();
    tpurt::profiler::stop();
    CHECK(bad == 0);
    // The threads' own shapes and the shared one, each compiled once.
    CHECK(dev.runtime_stats().compilations == compiled + threads + 1);
    CHECK(dev.runtime_stats().executables_cached >= static_cast<std::size_t>(threads + 1));
    CHECK(tpurt::profiler::snapshot().ops.size() ==
          static_cast<std::size_t>(threads * 2 * rounds * 2));
}
