// SPDX-License-Identifier: MIT
// VECTOR and TRANSPOSE whose operands and destination share unified-buffer bytes: the spec
// defines the result as the elements processed one at a time in row-major order (TRANSPOSE:
// source order), each read from and written to the buffer as it goes. Random instructions over
// a small window of the buffer, so that many overlap (destination below, above, on top of or
// apart from an operand; one value per row; rows overlapping), in both engine modes, against that
// order simulated byte for byte here. Catches a fast path taken where the order shows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "rig.hpp"
#include "tpu_test/bf16.hpp"
#include "tpu_test/random_data.hpp"

using namespace tpu::test;

namespace {

constexpr uint32_t kWindow = 2048; // the bytes the instructions work in
constexpr uint32_t kOut = 0x8000;  // where the window is copied to read it back

uint32_t size_of(uint8_t dt) {
    return dt == TPU_DT_INT8 ? 1 : dt == TPU_DT_BF16 ? 2 : 4;
}

float load_value(uint8_t dt, const uint8_t *p) {
    if (dt == TPU_DT_BF16) {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return bf16_to_float(b);
    }
    float f;
    std::memcpy(&f, p, 4);
    return f;
}

void store_value(uint8_t dt, uint8_t *p, float f) {
    if (std::isnan(f)) {
        const uint32_t nan = 0x7fc00000u;
        const uint16_t nan16 = 0x7fc0;
        dt == TPU_DT_BF16 ? std::memcpy(p, &nan16, 2) : std::memcpy(p, &nan, 4);
    } else if (dt == TPU_DT_BF16) {
        const uint16_t b = float_to_bf16(f);
        std::memcpy(p, &b, 2);
    } else {
        std::memcpy(p, &f, 4);
    }
}

float apply(uint16_t op, float a, float b) {
    switch (op) {
    case TPU_VOP_ADD:
        return a + b;
    case TPU_VOP_SUB:
        return a - b;
    default:
        return a * b;
    }
}

struct Shape {
    uint8_t dt;
    uint16_t op, rows, cols;
    uint32_t a, a_stride, b, b_stride, dst, dst_stride;
    bool b_col;
};

uint32_t span(uint32_t rows, uint32_t stride, uint32_t row) {
    return (rows - 1) * stride + row;
}

// An aligned offset for an extent of `rows` rows `stride` apart of `row` bytes in the window
// (the caller made sure that it fits).
uint32_t place(std::mt19937_64 &rng, uint32_t rows, uint32_t stride, uint32_t row, uint32_t es) {
    return uint32_t(rng() % ((kWindow - span(rows, stride, row)) / es + 1)) * es;
}

// A stride for rows of `row` bytes: dense, padded, overlapping (every row on the same bytes, or
// rows shifted by a few elements).
uint32_t pick_stride(std::mt19937_64 &rng, uint32_t row, uint32_t es) {
    switch (rng() % 4) {
    case 0:
        return row;
    case 1:
        return row + es * uint32_t(1 + rng() % 4);
    case 2:
        return 0;
    default:
        return es * uint32_t(1 + rng() % 4);
    }
}

Shape random_vector(std::mt19937_64 &rng) {
    Shape s{};
    s.dt = rng() % 2 ? TPU_DT_FP32 : TPU_DT_BF16;
    s.op = uint16_t(rng() % 3);
    const uint32_t es = size_of(s.dt);
    s.rows = uint16_t(1 + rng() % 4);
    s.cols = uint16_t(1 + rng() % 150);
    s.b_col = rng() % 4 == 0;
    const uint32_t row = s.cols * es;
    do {
        s.a_stride = pick_stride(rng, row, es);
        s.b_stride = s.b_col ? es * uint32_t(rng() % 3) : pick_stride(rng, row, es);
        s.dst_stride = pick_stride(rng, row, es);
    } while (span(s.rows, std::max({s.a_stride, s.b_stride, s.dst_stride}), row) > kWindow);
    s.a = place(rng, s.rows, s.a_stride, row, es);
    s.b = place(rng, s.rows, s.b_stride, s.b_col ? es : row, es);
    // Often the destination right on, just below or just above an operand.
    s.dst = place(rng, s.rows, s.dst_stride, row, es);
    const uint32_t near = rng() % 2 ? s.a : s.b;
    const uint32_t shift = es * uint32_t(rng() % 3);
    const uint32_t dst_span = span(s.rows, s.dst_stride, row);
    if (rng() % 2 && near + shift + dst_span <= kWindow)
        s.dst = near + shift;
    else if (rng() % 2 && near >= shift && near - shift + dst_span <= kWindow)
        s.dst = near - shift;
    return s;
}

// The window after s, one element at a time in row-major order.
void simulate_vector(const Shape &s, std::vector<uint8_t> &ub) {
    const uint32_t es = size_of(s.dt);
    for (uint32_t r = 0; r < s.rows; r++)
        for (uint32_t c = 0; c < s.cols; c++) {
            const float a = load_value(s.dt, &ub[s.a + r * s.a_stride + c * es]);
            const float b = load_value(s.dt, &ub[s.b + r * s.b_stride + (s.b_col ? 0 : c * es)]);
            store_value(s.dt, &ub[s.dst + r * s.dst_stride + c * es], apply(s.op, a, b));
        }
}

Shape random_transpose(std::mt19937_64 &rng) {
    Shape s{};
    const uint8_t dts[] = {TPU_DT_INT8, TPU_DT_BF16, TPU_DT_INT32, TPU_DT_FP32};
    s.dt = dts[rng() % 4];
    const uint32_t es = size_of(s.dt);
    s.rows = uint16_t(1 + rng() % 6);
    s.cols = uint16_t(1 + rng() % 60);
    do {
        s.a_stride = pick_stride(rng, s.cols * es, es);
        // Dense rows now and then (two rows interleaved into pairs), else any stride.
        s.dst_stride = rng() % 3 == 0 ? s.rows * es : pick_stride(rng, s.rows * es, es);
    } while (span(s.rows, s.a_stride, s.cols * es) > kWindow ||
             span(s.cols, s.dst_stride, s.rows * es) > kWindow);
    s.a = place(rng, s.rows, s.a_stride, s.cols * es, es);
    s.dst = rng() % 3 == 0 ? s.a : place(rng, s.cols, s.dst_stride, s.rows * es, es);
    if (s.dst + span(s.cols, s.dst_stride, s.rows * es) > kWindow)
        s.dst = place(rng, s.cols, s.dst_stride, s.rows * es, es);
    return s;
}

void simulate_transpose(const Shape &s, std::vector<uint8_t> &ub) {
    const uint32_t es = size_of(s.dt);
    for (uint32_t r = 0; r < s.rows; r++)
        for (uint32_t c = 0; c < s.cols; c++)
            std::memmove(&ub[s.dst + c * s.dst_stride + r * es], &ub[s.a + r * s.a_stride + c * es],
                         es);
}

std::vector<uint8_t> random_window(std::mt19937_64 &rng) {
    std::vector<uint8_t> w(kWindow);
    for (uint32_t i = 0; i < kWindow; i += 2) {
        const uint16_t b = rng() % 50 ? random_bf16(rng) : uint16_t(0x7fc1 | (rng() & 0x803e));
        std::memcpy(&w[i], &b, 2);
    }
    return w;
}

// Runs insn over a random window and checks the window against simulate(); false if the card
// rejected the shape (the caller counts those).
template <class Simulate>
bool check(uint32_t mode, std::mt19937_64 &rng, const tpu_insn &insn, Simulate simulate) {
    Rig rig(mode);
    std::vector<uint8_t> ub = random_window(rng);
    rig.put(0, ub);
    Program p{dma_in(TPU_DT_INT8, 1, kWindow, Rig::kHost, kWindow, 0, kWindow), insn,
              dma_out(TPU_DT_INT8, 1, kWindow, Rig::kHost + kOut, kWindow, 0, kWindow)};
    const tpu_job_result res = rig.run(p);
    if (res.status == TPU_ERR_BAD_OPERAND)
        return false;
    REQUIRE(res.status == TPU_ERR_NONE);
    simulate(ub);
    CHECK(rig.get<uint8_t>(kOut, kWindow) == ub);
    return true;
}

// 400 random instructions from trial(rng), each run by check(); most must be accepted.
template <class Trial> void run_trials(uint32_t mode, uint64_t seed, Trial trial) {
    std::mt19937_64 rng(seed + mode);
    int ran = 0;
    for (int i = 0; i < 400; i++) {
        CAPTURE(mode, i);
        ran += trial(rng);
    }
    CHECK(ran > 300);
}

} // namespace

TEST_CASE("VECTOR with overlapping operands: elements one at a time in row-major order", "[vpu]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    run_trials(mode, 9100, [&](std::mt19937_64 &rng) {
        const Shape s = random_vector(rng);
        CAPTURE(int(s.dt), s.op, s.rows, s.cols, s.a, s.a_stride, s.b, s.b_stride, s.dst,
                s.dst_stride, s.b_col);
        tpu_insn insn = vector(s.dt, s.op, s.rows, s.cols, s.a, s.a_stride, s.b, s.b_stride, s.dst,
                               s.dst_stride);
        if (s.b_col)
            insn.vec.flags |= TPU_F_VEC_B_COL;
        return check(mode, rng, insn, [&](std::vector<uint8_t> &ub) { simulate_vector(s, ub); });
    });
}

TEST_CASE("TRANSPOSE with overlapping operands: elements one at a time in source order", "[vpu]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    run_trials(mode, 9200, [&](std::mt19937_64 &rng) {
        const Shape s = random_transpose(rng);
        CAPTURE(int(s.dt), s.rows, s.cols, s.a, s.a_stride, s.dst, s.dst_stride);
        const tpu_insn insn = transpose(s.dt, s.rows, s.cols, s.a, s.a_stride, s.dst, s.dst_stride);
        return check(mode, rng, insn, [&](std::vector<uint8_t> &ub) { simulate_transpose(s, ub); });
    });
}
