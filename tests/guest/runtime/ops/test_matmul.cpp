// SPDX-License-Identifier: MIT
// test_matmul.cpp - guest test: matmuls through libtpurt on the real card (driver + device)
// must equal the reference loops exactly, for int8, bf16 and fp32, from 1x1x1 to 1024^3 and at
// sizes that are not multiples of the systolic array.
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/golden/reference.hpp>
#include <tpurt/golden/reference_fp32.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.h>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>
#include <tpu_hw.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Shape {
    std::uint32_t m, k, n;
};

std::string describe(const Shape &s) {
    return std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
}

using guest_test::device;

// Shapes that straddle the card's array: one past, one short of and twice plus a bit.
std::vector<Shape> awkward_shapes(const tpurt::ArrayLimits &l) {
    const std::uint32_t r = l.mxu_rows, c = l.mxu_cols;
    return {{r + 1, 2 * r - 1, c + 3},
            {3, 2 * r + 5, 2 * c + 1},
            {2 * r + 7, r + 1, c > 1 ? c - 1 : 1}};
}

std::string mismatch(std::size_t index, std::uint32_t n, const std::string &card,
                     const std::string &ref) {
    return "first mismatch at C[" + std::to_string(index / n) + "][" + std::to_string(index % n) +
           "]: card " + card + ", reference " + ref;
}

void check_int8(const Shape &s, std::uint64_t seed) {
    INFO("int8 " << describe(s));
    const auto a = tpurt::random_int8(std::size_t{s.m} * s.k, seed);
    const auto b = tpurt::random_int8(std::size_t{s.k} * s.n, seed + 1);
    std::vector<std::int32_t> card(std::size_t{s.m} * s.n, 0x5a5a5a5a);
    std::vector<std::int32_t> ref(card.size());
    const tpurt::MatmulStats stats = tpurt::matmul(device(), a, b, card, s.m, s.k, s.n);
    tpurt::reference_matmul(a, b, ref, s.m, s.k, s.n);
    CHECK(stats.macs == std::uint64_t{s.m} * s.k * s.n);
    for (std::size_t i = 0; i < card.size(); ++i) {
        if (card[i] != ref[i])
            FAIL(mismatch(i, s.n, std::to_string(card[i]), std::to_string(ref[i])));
    }
}

// Fails at the first element whose bits differ, printing both in hex floating point.
void check_same_floats(const std::vector<float> &card, const std::vector<float> &ref,
                       std::uint32_t n) {
    for (std::size_t i = 0; i < card.size(); ++i) {
        if (std::bit_cast<std::uint32_t>(card[i]) != std::bit_cast<std::uint32_t>(ref[i])) {
            char c[48], r[48];
            std::snprintf(c, sizeof(c), "%a", static_cast<double>(card[i]));
            std::snprintf(r, sizeof(r), "%a", static_cast<double>(ref[i]));
            FAIL(mismatch(i, n, c, r));
        }
    }
}

void check_bf16(const Shape &s, const std::vector<tpurt::Bf16> &a,
                const std::vector<tpurt::Bf16> &b) {
    INFO("bf16 " << describe(s));
    std::vector<float> card(std::size_t{s.m} * s.n, -1.0f);
    std::vector<float> ref(card.size());
    const tpurt::MatmulStats stats = tpurt::matmul(device(), a, b, card, s.m, s.k, s.n);
    tpurt::reference_matmul(a, b, ref, s.m, s.k, s.n);
    CHECK(stats.macs == std::uint64_t{s.m} * s.k * s.n);
    check_same_floats(card, ref, s.n);
}

void check_fp32(const Shape &s, std::uint64_t seed) {
    INFO("fp32 " << describe(s));
    const auto a = tpurt::random_fp32(std::size_t{s.m} * s.k, seed);
    const auto b = tpurt::random_fp32(std::size_t{s.k} * s.n, seed + 1);
    std::vector<float> card(std::size_t{s.m} * s.n, -1.0f);
    std::vector<float> ref(card.size());
    const tpurt::MatmulStats stats = tpurt::matmul(device(), a, b, card, s.m, s.k, s.n);
    tpurt::reference_matmul(std::span<const float>(a), std::span<const float>(b),
                            std::span<float>(ref), s.m, s.k, s.n);
    CHECK(stats.macs == std::uint64_t{s.m} * s.k * s.n);
    check_same_floats(card, ref, s.n);
}

void check_bf16_random(const Shape &s, std::uint64_t seed) {
    check_bf16(s, tpurt::random_bf16(std::size_t{s.m} * s.k, seed),
               tpurt::random_bf16(std::size_t{s.k} * s.n, seed + 1));
}

} // namespace

TEST_CASE("the card reports a usable matrix unit", "[device]") {
    const tpurt::DeviceInfo &info = device().info();
    CHECK(info.limits.mxu_rows > 0);
    CHECK(info.limits.mxu_cols > 0);
    CHECK(info.limits.ub_bytes > 0);
    CHECK(info.limits.acc_bytes > 0);
    CHECK(info.supports(tpurt::DType::Int8));
    CHECK(info.supports(tpurt::DType::Bf16));
    CHECK(info.supports(tpurt::DType::Fp32));
    CHECK(info.spec_version == TPU_SPEC_VERSION); // the card speaks the spec we were built for
}

TEST_CASE("int8 matmul is exact", "[int8]") {
    check_int8({1, 1, 1}, 1);
    check_int8({127, 129, 131}, 2);
    for (const Shape &s : awkward_shapes(device().info().limits))
        check_int8(s, 3);
}

TEST_CASE("bf16 matmul is exact", "[bf16]") {
    check_bf16_random({1, 1, 1}, 11);
    check_bf16_random({127, 129, 131}, 12);
    for (const Shape &s : awkward_shapes(device().info().limits))
        check_bf16_random(s, 13);
}

TEST_CASE("fp32 matmul is exact", "[fp32]") {
    check_fp32({1, 1, 1}, 61);
    check_fp32({127, 129, 131}, 62);
    for (const Shape &s : awkward_shapes(device().info().limits))
        check_fp32(s, 63);
}

TEST_CASE("bf16 matmul follows the card's pair numerics with subnormal and large inputs",
          "[bf16]") {
    const Shape s{127, 129, 131};
    check_bf16(s, tpurt::wide_range_bf16(std::size_t{s.m} * s.k, 21),
               tpurt::wide_range_bf16(std::size_t{s.k} * s.n, 22));
}

// Buffers of many pages each way (128 KiB in, 4 MiB out) at an eighth of [large]'s reference
// cost: what the DMA-path variants (swiotlb, IOMMU, the synchronous worker) run instead of it.
TEST_CASE("1024x128x1024 int8 matmul over multi-page buffers is exact", "[int8][pages]") {
    check_int8({1024, 128, 1024}, 41);
}

TEST_CASE("1024^3 matmuls are exact", "[large]") {
    check_int8({1024, 1024, 1024}, 31);
    check_bf16_random({1024, 1024, 1024}, 32);
}

// The guest has no FMA: the fp32 reference's software fused multiply-add takes 50-75 s of the
// guest's emulated CPU at this size (the bf16 reference about 30 s).
TEST_CASE("1024^3 fp32 matmul is exact", "[large][fp32]") {
    check_fp32({1024, 1024, 1024}, 33);
}

TEST_CASE("matmul on device buffers, and the counters count it", "[buffers]") {
    const Shape s{70, 300, 90};
    tpurt::Buffer a = device().allocate(std::size_t{s.m} * s.k);
    tpurt::Buffer b = device().allocate(std::size_t{s.k} * s.n);
    tpurt::Buffer c = device().allocate(std::size_t{s.m} * s.n * 4);
    const auto a_host = tpurt::random_int8(std::size_t{s.m} * s.k, 51);
    const auto b_host = tpurt::random_int8(std::size_t{s.k} * s.n, 52);
    std::copy(a_host.begin(), a_host.end(), a.as<std::int8_t>().begin());
    std::copy(b_host.begin(), b_host.end(), b.as<std::int8_t>().begin());

    const tpurt::DeviceCounters before = device().counters();
    const tpurt::MatmulStats stats =
        tpurt::matmul(device(), a, b, c, s.m, s.k, s.n, tpurt::DType::Int8);
    const tpurt::DeviceCounters after = device().counters();
    CHECK(after.jobs_done - before.jobs_done == stats.jobs);
    CHECK(after.macs - before.macs == stats.macs);
    CHECK(after.cycles - before.cycles == stats.cycles);

    std::vector<std::int32_t> ref(std::size_t{s.m} * s.n);
    tpurt::reference_matmul(a_host, b_host, ref, s.m, s.k, s.n);
    const auto card = c.as<std::int32_t>().first(ref.size());
    CHECK(std::equal(card.begin(), card.end(), ref.begin()));
}

TEST_CASE("a failing job reports where it failed", "[errors]") {
    // The driver never hands out addresses outside [va_start, va_start + va_size).
    const tpurt::DeviceInfo &info = device().info();
    const std::uint64_t unmapped = info.va_start >= TPU_PAGE_SIZE ? info.va_start - TPU_PAGE_SIZE
                                                                  : info.va_start + info.va_size;
    tpurt::Buffer out = device().allocate(4096);
    tpurt::ProgramBuilder builder;
    builder.dma_in({.type = tpurt::DType::Int8,
                    .host_addr = unmapped,
                    .host_stride = 16,
                    .local_addr = 0,
                    .local_stride = 16,
                    .rows = 1,
                    .cols = 16});
    tpurt::Job job = device().submit(builder.halt().finish(), {&out});
    try {
        job.wait();
        FAIL("a DMA from an unmapped address succeeded");
    } catch (const tpurt::JobError &error) {
        CHECK(error.status() == TPU_ERR_MMU_FAULT);
        CHECK(error.fault_addr() == unmapped);
        CHECK(error.error_pc() == 0);
        CHECK(std::string(error.what()).find("TPU_ERR_MMU_FAULT") != std::string::npos);
    }
}

TEST_CASE("the C API runs matmuls", "[c-api]") {
    tpurt_device *dev = nullptr;
    REQUIRE(tpurt_open(0, &dev) == TPURT_OK);
    struct tpurt_device_info info = {};
    info.struct_size = sizeof(info);
    REQUIRE(tpurt_get_info(dev, &info) == TPURT_OK);
    CHECK(info.mxu_rows == device().info().limits.mxu_rows);

    const Shape s{33, 65, 17};
    const auto a = tpurt::random_int8(std::size_t{s.m} * s.k, 41);
    const auto b = tpurt::random_int8(std::size_t{s.k} * s.n, 42);
    std::vector<std::int32_t> card(std::size_t{s.m} * s.n), ref(card.size());
    CHECK(tpurt_matmul_int8(dev, a.data(), b.data(), card.data(), s.m, s.k, s.n) == TPURT_OK);
    tpurt::reference_matmul(a, b, ref, s.m, s.k, s.n);
    CHECK(card == ref);

    CHECK(tpurt_matmul_int8(dev, a.data(), b.data(), card.data(), 0, s.k, s.n) == TPURT_E_INVALID);
    CHECK(std::string(tpurt_last_error()).find("non-zero") != std::string::npos);

    const auto a16 = tpurt::random_bf16(std::size_t{s.m} * s.k, 43);
    const auto b16 = tpurt::random_bf16(std::size_t{s.k} * s.n, 44);
    std::vector<float> card_f(std::size_t{s.m} * s.n), ref_f(card_f.size());
    CHECK(tpurt_matmul_bf16(dev, reinterpret_cast<const std::uint16_t *>(a16.data()),
                            reinterpret_cast<const std::uint16_t *>(b16.data()), card_f.data(), s.m,
                            s.k, s.n) == TPURT_OK);
    tpurt::reference_matmul(a16, b16, ref_f, s.m, s.k, s.n);
    CHECK(std::memcmp(card_f.data(), ref_f.data(), card_f.size() * sizeof(float)) == 0);

    const auto a32 = tpurt::random_fp32(std::size_t{s.m} * s.k, 45);
    const auto b32 = tpurt::random_fp32(std::size_t{s.k} * s.n, 46);
    CHECK(tpurt_matmul_fp32(dev, a32.data(), b32.data(), card_f.data(), s.m, s.k, s.n) == TPURT_OK);
    tpurt::reference_matmul(a32, b32, ref_f, s.m, s.k, s.n);
    CHECK(std::memcmp(card_f.data(), ref_f.data(), card_f.size() * sizeof(float)) == 0);
    CHECK(tpurt_matmul_fp32(dev, nullptr, b32.data(), card_f.data(), s.m, s.k, s.n) ==
          TPURT_E_INVALID);
    CHECK(std::string(tpurt_last_error()).find("NULL") != std::string::npos);
    tpurt_close(dev);
}
