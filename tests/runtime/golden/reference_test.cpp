// SPDX-License-Identifier: MIT
// reference_test.cpp - the runtime's reference model (used by the guest tests and the demo)
// agrees bit for bit with the test library's independent loops, on both of its bf16 paths.
#include <tpu_test/reference.hpp>

#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

namespace {

void compare_bf16(const std::vector<tpurt::Bf16> &a, const std::vector<tpurt::Bf16> &b,
                  std::uint32_t m, std::uint32_t k, std::uint32_t n) {
    std::vector<float> ours(std::size_t{m} * n);
    tpurt::reference_matmul(a, b, ours, m, k, n);
    const auto theirs = tpu::test::reference_matmul_bf16(
        reinterpret_cast<const std::uint16_t *>(a.data()),
        reinterpret_cast<const std::uint16_t *>(b.data()), m, k, n);
    REQUIRE(theirs.size() == ours.size());
    CHECK(std::memcmp(ours.data(), theirs.data(), ours.size() * sizeof(float)) == 0);
}

} // namespace

TEST_CASE("int8 reference matches the independent loops", "[reference]") {
    const std::uint32_t m = 37, k = 300, n = 41;
    const auto a = tpurt::random_int8(std::size_t{m} * k, 1);
    const auto b = tpurt::random_int8(std::size_t{k} * n, 2);
    std::vector<std::int32_t> ours(std::size_t{m} * n);
    tpurt::reference_matmul(a, b, ours, m, k, n);
    CHECK(ours == tpu::test::reference_matmul_int8(a.data(), b.data(), m, k, n));
}

TEST_CASE("bf16 reference matches fmaf on moderate values (multiply-add path)", "[reference]") {
    const std::uint32_t m = 33, k = 257, n = 45;
    compare_bf16(tpurt::random_bf16(std::size_t{m} * k, 3),
                 tpurt::random_bf16(std::size_t{k} * n, 4), m, k, n);
}

TEST_CASE("bf16 reference matches fmaf on subnormal and large values (fmaf path)", "[reference]") {
    const std::uint32_t m = 33, k = 257, n = 45;
    compare_bf16(tpurt::wide_range_bf16(std::size_t{m} * k, 5),
                 tpurt::wide_range_bf16(std::size_t{k} * n, 6), m, k, n);
}
