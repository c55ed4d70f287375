// SPDX-License-Identifier: MIT
// Large VECTOR, ACTIVATE and TRANSPOSE instructions spread over the engine's thread pool
// (vpu_split.hpp): the same bytes as on the calling thread alone, for operands apart from the
// destination, on top of it, and overlapping it shifted by one element (where the order of the
// elements shows, so the instruction must not be split); and an abort stops a split instruction
// before it writes.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <random>
#include <vector>

#include "thread_pool.hpp"
#include "tpu_hw.h"
#include "vpu/vpu.hpp"

using namespace tpu::engine;

namespace {

constexpr uint32_t kUb = 1u << 20;

// A buffer of random finite floats (fp32 values, or pairs of bf16 ones).
std::vector<uint8_t> random_buffer(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-4.0f, 4.0f);
    std::vector<uint8_t> buf(kUb);
    for (uint32_t i = 0; i < kUb; i += 4) {
        const float v = value(rng);
        std::memcpy(&buf[i], &v, 4);
    }
    return buf;
}

// vector's result on buffer `ub` with pool, and on the calling thread alone: equal.
void check_vector(const VectorInsn &insn, ThreadPool &pool) {
    std::atomic<bool> abort{false};
    std::vector<uint8_t> split = random_buffer(1), alone = split;
    REQUIRE(vpu::vector(insn, split.data(), abort, &pool));
    REQUIRE(vpu::vector(insn, alone.data(), abort, nullptr));
    CHECK(split == alone);
}

VectorInsn vector_insn(uint8_t dtype, uint8_t op, uint32_t rows, uint32_t cols, uint64_t a,
                       uint64_t b, uint64_t dst, uint64_t stride) {
    const uint32_t elem = dtype == TPU_DT_BF16 ? 2 : 4;
    VectorInsn insn;
    insn.dtype = dtype;
    insn.op = op;
    insn.rows = rows;
    insn.cols = cols;
    insn.a = Extent2D{a, stride, rows, uint64_t(elem) * cols};
    insn.b = Extent2D{b, stride, rows, uint64_t(elem) * cols};
    insn.dst = Extent2D{dst, stride, rows, uint64_t(elem) * cols};
    return insn;
}

} // namespace

TEST_CASE("a large VECTOR gives the same bytes split over the thread pool", "[vpu][threads]") {
    ThreadPool pool(2);
    SECTION("dense FP32 rows, operands apart") {
        check_vector(vector_insn(TPU_DT_FP32, TPU_VOP_MUL, 3, 20000, 0, 0x60000, 0xc0000, 80000),
                     pool);
    }
    SECTION("BF16 in place with one value per row") {
        VectorInsn insn = vector_insn(TPU_DT_BF16, TPU_VOP_ADD, 300, 200, 0, 0x80000, 0, 512);
        insn.b_col = true;
        insn.b = Extent2D{0x80000, 4, 300, 2};
        check_vector(insn, pool);
    }
    SECTION("short strided INT32 rows") {
        check_vector(vector_insn(TPU_DT_INT32, TPU_VOP_SUB, 600, 100, 0, 0x40000, 0x80000, 416),
                     pool);
    }
    SECTION("FP32 destination one element above its operand") {
        check_vector(vector_insn(TPU_DT_FP32, TPU_VOP_SUB, 1, 60000, 0, 0x60000, 4, 240000), pool);
    }
}

TEST_CASE("a large ACTIVATE gives the same bytes split over the thread pool", "[vpu][threads]") {
    ThreadPool pool(2);
    const std::vector<uint8_t> acc = random_buffer(2);
    ActivateInsn insn;
    insn.dtype = GENERATE(TPU_DT_BF16, TPU_DT_FP32);
    insn.func = GENERATE(TPU_ACT_RELU, TPU_ACT_TANH);
    insn.bias = true;
    insn.rows = 300;
    insn.cols = 300;
    insn.acc = Extent2D{0, 1200, 300, 1200};
    insn.dst = Extent2D{0x10000, 1300, 300, insn.dtype == TPU_DT_BF16 ? 600u : 1200u};
    insn.bias_addr = 0;
    insn.scale = 0.5f;
    std::atomic<bool> abort{false};
    std::vector<uint8_t> split = random_buffer(3), alone = split;
    REQUIRE(vpu::activate(insn, acc.data(), split.data(), abort, &pool));
    REQUIRE(vpu::activate(insn, acc.data(), alone.data(), abort, nullptr));
    CHECK(split == alone);
}

TEST_CASE("a large TRANSPOSE gives the same bytes split over the thread pool", "[vpu][threads]") {
    ThreadPool pool(2);
    const uint32_t elem = GENERATE(2u, 4u);
    TransposeInsn insn;
    insn.dtype = elem == 2 ? TPU_DT_BF16 : TPU_DT_FP32;
    insn.rows = 250;
    insn.cols = 300;
    insn.a = Extent2D{0, 1300, 250, 300 * elem};
    insn.dst = Extent2D{0x60000, 1100, 300, 250 * elem};
    std::atomic<bool> abort{false};
    std::vector<uint8_t> split = random_buffer(5), alone = split;
    REQUIRE(vpu::transpose(insn, split.data(), abort, &pool));
    REQUIRE(vpu::transpose(insn, alone.data(), abort, nullptr));
    CHECK(split == alone);
}

TEST_CASE("an abort stops a VECTOR split over the thread pool", "[vpu][threads][abort]") {
    ThreadPool pool(2);
    std::atomic<bool> abort{true};
    std::vector<uint8_t> ub = random_buffer(4);
    const std::vector<uint8_t> before = ub;
    CHECK_FALSE(
        vpu::vector(vector_insn(TPU_DT_FP32, TPU_VOP_ADD, 1, 60000, 0, 0x60000, 0xc0000, 240000),
                    ub.data(), abort, &pool));
    CHECK(ub == before);
}
