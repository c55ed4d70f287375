// SPDX-License-Identifier: MIT
// The vector unit's data-movement and arithmetic instructions (VECTOR, REDUCE, POOL, TRANSPOSE)
// end to end in both engine modes, against plain loops written here from the spec: INT8
// saturating, INT32 wrapping, BF16 computed in fp32 and rounded to nearest even, FP32; NaN
// results canonical. Every comparison is exact.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "rig.hpp"
#include "tpu_test/bf16.hpp"
#include "tpu_test/random_data.hpp"

using namespace tpu::test;

namespace {

constexpr uint8_t kDtypes[] = {TPU_DT_INT8, TPU_DT_BF16, TPU_DT_INT32, TPU_DT_FP32};

uint32_t size_of(uint8_t dt) {
    return dt == TPU_DT_INT8 ? 1 : dt == TPU_DT_BF16 ? 2 : 4;
}

// count random elements of dt as bytes; floats include NaN now and then.
std::vector<uint8_t> random_elements(std::mt19937_64 &rng, uint8_t dt, uint64_t count) {
    std::vector<uint8_t> out(count * size_of(dt));
    for (uint64_t i = 0; i < count; i++) {
        uint8_t *p = &out[i * size_of(dt)];
        if (dt == TPU_DT_INT8) {
            *p = uint8_t(rng());
        } else if (dt == TPU_DT_INT32) {
            uint32_t v = rng() % 4 ? uint32_t(rng()) : uint32_t(int32_t(rng() % 200) - 100);
            std::memcpy(p, &v, 4);
        } else {
            uint16_t b = rng() % 50 ? random_bf16(rng) : uint16_t(0x7fc1 | (rng() & 0x803e));
            if (dt == TPU_DT_BF16) {
                std::memcpy(p, &b, 2);
            } else {
                uint32_t v = uint32_t(b) << 16 | uint32_t(rng() & 0xffff);
                std::memcpy(p, &v, 4);
            }
        }
    }
    return out;
}

// Element i of a packed buffer as a value the reference computes with.
double as_number(uint8_t dt, const std::vector<uint8_t> &v, uint64_t i) {
    const uint8_t *p = &v[i * size_of(dt)];
    switch (dt) {
    case TPU_DT_INT8:
        return int8_t(*p);
    case TPU_DT_INT32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        return x;
    }
    case TPU_DT_BF16: {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return bf16_to_float(b);
    }
    default: {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    }
}

// Stores a float result of dt (BF16 rounded to nearest even) with canonical NaN.
void put_float(uint8_t dt, uint8_t *p, float f) {
    if (std::isnan(f)) {
        uint32_t nan = 0x7fc00000u;
        std::memcpy(p, reinterpret_cast<uint8_t *>(&nan) + (dt == TPU_DT_BF16 ? 2 : 0),
                    size_of(dt));
    } else if (dt == TPU_DT_BF16) {
        uint16_t b = float_to_bf16(f);
        std::memcpy(p, &b, 2);
    } else {
        std::memcpy(p, &f, 4);
    }
}

void put_int(uint8_t dt, uint8_t *p, int64_t x) {
    if (dt == TPU_DT_INT8) {
        *p = uint8_t(int8_t(std::clamp<int64_t>(x, -128, 127)));
    } else {
        uint32_t v = uint32_t(uint64_t(x));
        std::memcpy(p, &v, 4);
    }
}

bool is_float(uint8_t dt) {
    return dt == TPU_DT_BF16 || dt == TPU_DT_FP32;
}

float fmax_spec(float a, float b) {
    return std::isnan(a) || std::isnan(b) ? NAN : (b > a ? b : a);
}

} // namespace

TEST_CASE("VECTOR: every op and dtype, with and without broadcast", "[vpu]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint8_t dt = GENERATE(from_range(std::begin(kDtypes), std::end(kDtypes)));
    const bool broadcast = GENERATE(false, true);
    Rig rig(mode);
    std::mt19937_64 rng(dt * 10 + broadcast);
    const uint16_t rows = 5, cols = 37;
    const uint32_t es = size_of(dt), row = cols * es, stride = row + 4 * es;
    std::vector<uint8_t> a = random_elements(rng, dt, uint64_t(rows) * cols);
    std::vector<uint8_t> b = random_elements(rng, dt, uint64_t(rows) * cols);
    rig.put(0, a);
    rig.put(0x10000, b);
    for (uint16_t op = TPU_VOP_ADD; op <= TPU_VOP_MIN; op++) {
        CAPTURE(mode, int(dt), broadcast, op);
        Program p{
            dma_in(dt, rows, cols, Rig::kHost, row, 0, stride),
            dma_in(dt, rows, cols, Rig::kHost + 0x10000, row, 0x4000, stride),
            vector(dt, op, rows, cols, 0, stride, 0x4000, broadcast ? 0 : stride, 0x8000, row),
            dma_out(dt, rows, cols, Rig::kHost + 0x20000, row, 0x8000, row)};
        REQUIRE(rig.run(p).status == TPU_ERR_NONE);

        std::vector<uint8_t> want(a.size());
        for (uint64_t r = 0; r < rows; r++) {
            for (uint64_t c = 0; c < cols; c++) {
                uint64_t i = r * cols + c, j = (broadcast ? 0 : r) * cols + c;
                double x = as_number(dt, a, i), y = as_number(dt, b, j);
                uint8_t *out = &want[i * es];
                if (is_float(dt)) {
                    float fx = float(x), fy = float(y);
                    float res = op == TPU_VOP_ADD   ? fx + fy
                                : op == TPU_VOP_SUB ? fx - fy
                                : op == TPU_VOP_MUL ? fx * fy
                                : op == TPU_VOP_MAX ? fmax_spec(fx, fy)
                                                    : -fmax_spec(-fx, -fy);
                    put_float(dt, out, res);
                } else {
                    int64_t ix = int64_t(x), iy = int64_t(y);
                    int64_t res = op == TPU_VOP_ADD   ? ix + iy
                                  : op == TPU_VOP_SUB ? ix - iy
                                  : op == TPU_VOP_MUL ? ix * iy
                                  : op == TPU_VOP_MAX ? std::max(ix, iy)
                                                      : std::min(ix, iy);
                    put_int(dt, out, res);
                }
            }
        }
        CHECK(rig.get<uint8_t>(0x20000, want.size()) == want);
    }
}

TEST_CASE("REDUCE: sums wrap (ints) or add in fp32 in order, max keeps the dtype", "[vpu]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint8_t dt = GENERATE(from_range(std::begin(kDtypes), std::end(kDtypes)));
    Rig rig(mode);
    std::mt19937_64 rng(100 + dt);
    const uint16_t rows = 6, cols = 300;
    const uint32_t es = size_of(dt);
    std::vector<uint8_t> a = random_elements(rng, dt, uint64_t(rows) * cols);
    rig.put(0, a);
    for (uint16_t op : {uint16_t(TPU_ROP_SUM), uint16_t(TPU_ROP_MAX)}) {
        CAPTURE(mode, int(dt), op);
        const uint32_t out = op == TPU_ROP_SUM ? 4 : es;
        Program p{
            dma_in(dt, rows, cols, Rig::kHost, cols * es, 0, cols * es),
            reduce(dt, op, rows, cols, 0, cols * es, 0x8000, 2 * out),
            dma_out(op == TPU_ROP_SUM ? uint8_t(is_float(dt) ? TPU_DT_FP32 : TPU_DT_INT32) : dt,
                    rows, 1, Rig::kHost + 0x20000, out, 0x8000, 2 * out)};
        REQUIRE(rig.run(p).status == TPU_ERR_NONE);

        std::vector<uint8_t> want(uint64_t(rows) * out);
        for (uint64_t r = 0; r < rows; r++) {
            if (is_float(dt)) {
                float acc = float(as_number(dt, a, r * cols));
                for (uint64_t c = 1; c < cols; c++) {
                    float x = float(as_number(dt, a, r * cols + c));
                    acc = op == TPU_ROP_SUM ? acc + x : fmax_spec(acc, x);
                }
                put_float(op == TPU_ROP_SUM ? uint8_t(TPU_DT_FP32) : dt, &want[r * out], acc);
            } else {
                uint32_t sum = 0;
                int64_t max = INT64_MIN;
                for (uint64_t c = 0; c < cols; c++) {
                    int64_t x = int64_t(as_number(dt, a, r * cols + c));
                    sum += uint32_t(x);
                    max = std::max(max, x);
                }
                if (op == TPU_ROP_SUM)
                    std::memcpy(&want[r * out], &sum, 4);
                else
                    put_int(dt, &want[r * out], max);
            }
        }
        CHECK(rig.get<uint8_t>(0x20000, want.size()) == want);
    }
}

TEST_CASE("POOL: max and average over HWC windows", "[vpu]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint8_t dt = GENERATE(from_range(std::begin(kDtypes), std::end(kDtypes)));
    auto [win, stride] =
        GENERATE(std::pair<uint8_t, uint8_t>{2, 2}, std::pair<uint8_t, uint8_t>{3, 2},
                 std::pair<uint8_t, uint8_t>{3, 1});
    // 70 channels: more than one of the engine's 64-channel chunks of an output pixel.
    const uint32_t ch = GENERATE(3u, 70u);
    Rig rig(mode);
    std::mt19937_64 rng(200 + dt);
    const uint32_t es = size_of(dt), in_h = 9, in_w = 11;
    std::vector<uint8_t> img = random_elements(rng, dt, uint64_t(in_h) * in_w * ch);
    rig.put(0, img);
    PoolShape s;
    s.channels = ch;
    s.win_h = s.win_w = win;
    s.stride_h = s.stride_w = stride;
    s.out_h = uint16_t((in_h - win) / stride + 1);
    s.out_w = uint16_t((in_w - win) / stride + 1);
    const uint32_t in_row = in_w * ch * es, out_row = s.out_w * ch * es;
    for (uint16_t op : {uint16_t(TPU_POOL_MAX), uint16_t(TPU_POOL_AVG)}) {
        CAPTURE(mode, int(dt), int(win), int(stride), ch, op);
        Program p{
            dma_in(dt, in_h, in_w * ch, Rig::kHost, in_row, 0, in_row),
            pool(dt, op, s, 0, in_row, 0x8000, out_row),
            dma_out(dt, s.out_h, s.out_w * ch, Rig::kHost + 0x20000, out_row, 0x8000, out_row)};
        REQUIRE(rig.run(p).status == TPU_ERR_NONE);

        std::vector<uint8_t> want(uint64_t(s.out_h) * out_row);
        for (uint32_t oy = 0; oy < s.out_h; oy++)
            for (uint32_t ox = 0; ox < s.out_w; ox++)
                for (uint32_t c = 0; c < ch; c++) {
                    uint8_t *out = &want[(uint64_t(oy) * s.out_w + ox) * ch * es + c * es];
                    float facc = 0;
                    int64_t iacc = 0;
                    for (uint32_t i = 0; i < win; i++)
                        for (uint32_t j = 0; j < win; j++) {
                            uint64_t idx =
                                (uint64_t(oy * stride + i) * in_w + ox * stride + j) * ch + c;
                            double x = as_number(dt, img, idx);
                            bool first = i == 0 && j == 0;
                            if (is_float(dt))
                                facc = first                ? float(x)
                                       : op == TPU_POOL_AVG ? facc + float(x)
                                                            : fmax_spec(facc, float(x));
                            else
                                iacc = first ? int64_t(x)
                                       : op == TPU_POOL_AVG
                                           ? int64_t(int32_t(uint32_t(iacc) + uint32_t(x)))
                                           : std::max(iacc, int64_t(x));
                        }
                    const float count = float(win * win);
                    if (is_float(dt)) {
                        put_float(dt, out, op == TPU_POOL_AVG ? facc / count : facc);
                    } else if (op == TPU_POOL_MAX) {
                        put_int(dt, out, iacc);
                    } else {
                        float avg = float(int32_t(iacc)) / count;
                        double lim = dt == TPU_DT_INT8 ? 127.0 : 2147483647.0;
                        double r = std::nearbyint(double(avg));
                        put_int(dt, out, int64_t(std::clamp(r, -lim - 1, lim)));
                    }
                }
        CHECK(rig.get<uint8_t>(0x20000, want.size()) == want);
    }
}

TEST_CASE("TRANSPOSE moves every element of every dtype", "[vpu]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint8_t dt = GENERATE(from_range(std::begin(kDtypes), std::end(kDtypes)));
    Rig rig(mode);
    std::mt19937_64 rng(300 + dt);
    const uint16_t rows = 13, cols = 21;
    const uint32_t es = size_of(dt);
    std::vector<uint8_t> a(uint64_t(rows) * cols * es);
    for (uint8_t &x : a)
        x = uint8_t(rng());
    rig.put(0, a);
    Program p{dma_in(dt, rows, cols, Rig::kHost, cols * es, 0, cols * es + es),
              transpose(dt, rows, cols, 0, cols * es + es, 0x8000, rows * es),
              dma_out(dt, cols, rows, Rig::kHost + 0x20000, rows * es, 0x8000, rows * es)};
    REQUIRE(rig.run(p).status == TPU_ERR_NONE);
    std::vector<uint8_t> want(a.size());
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < cols; c++)
            std::memcpy(&want[(c * rows + r) * es], &a[(r * cols + c) * es], es);
    CHECK(rig.get<uint8_t>(0x20000, want.size()) == want);
}
