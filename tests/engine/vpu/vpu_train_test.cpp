// SPDX-License-Identifier: MIT
// The vector unit's spec 1.4 training instructions: ACTIVATE LOG / SQRT / RSQRT / RECIP against
// double-precision formulas (SQRT, RSQRT and RECIP exactly: a double result rounded once to
// binary32 is the correctly rounded one), VECTOR DIV / GATE / GT / EQ in every dtype with and
// without the per-row (B_COL) and first-row broadcasts, end to end in both engine modes, and the
// decoder's checks of the new encodings.
#include <catch2/catch.hpp>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>

#include "fp_env.hpp"
#include "rig.hpp"
#include "tpu_test/bf16.hpp"
#include "vpu/vpu_math.hpp"

using namespace tpu::test;
namespace vm = tpu::engine::vpu_math;

namespace {

constexpr uint8_t kDtypes[] = {TPU_DT_INT8, TPU_DT_BF16, TPU_DT_INT32, TPU_DT_FP32};

uint32_t size_of(uint8_t dt) {
    return dt == TPU_DT_INT8 ? 1 : dt == TPU_DT_BF16 ? 2 : 4;
}

// |got - want| in units of the last place of want as a binary32 (subnormal spacing below 2^-126).
double ulps(float got, double want) {
    if (std::isinf(want) || std::fabs(want) > double(FLT_MAX))
        return std::isinf(got) && (got > 0) == (want > 0) ? 0.0 : 1e30;
    int e;
    std::frexp(want, &e);
    return std::fabs(double(got) - want) / std::ldexp(1.0, std::max(e - 24, -149));
}

// The correctly rounded results, from double arithmetic rounded once.
float ref_sqrt(float x) {
    return float(std::sqrt(double(x)));
}
float ref_recip(float x) {
    return float(1.0 / double(x));
}
float ref_rsqrt(float x) {
    return float(1.0 / double(ref_sqrt(x)));
}

// Same bits, with every NaN equal to every other.
bool same(float a, float b) {
    return (std::isnan(a) && std::isnan(b)) ||
           std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

} // namespace

TEST_CASE("log is within the documented error, sqrt, rsqrt and recip are correctly rounded",
          "[activate][train]") {
    tpu::engine::FpEnvGuard env;
    double worst_log = 0;
    uint64_t mismatches = 0;
    for (uint64_t b = 0; b < (1ull << 32); b += 4099) {
        const float x = std::bit_cast<float>(uint32_t(b));
        if (std::isnan(x))
            continue;
        if (x > 0)
            worst_log = std::max(worst_log, ulps(vm::log(x), std::log(double(x))));
        mismatches += !same(vm::sqrt(x), ref_sqrt(x)) + !same(vm::recip(x), ref_recip(x)) +
                      !same(vm::rsqrt(x), ref_rsqrt(x));
    }
    CHECK(worst_log <= 1.0);
    CHECK(mismatches == 0);
}

TEST_CASE("log, sqrt, rsqrt and recip at special values", "[activate][train]") {
    tpu::engine::FpEnvGuard env;
    CHECK(vm::log(1.0f) == 0.0f);
    CHECK(!std::signbit(vm::log(1.0f)));
    CHECK(vm::log(0.0f) == -INFINITY);
    CHECK(vm::log(-0.0f) == -INFINITY);
    CHECK(vm::log(INFINITY) == INFINITY);
    CHECK(std::isnan(vm::log(-1.0f)));
    CHECK(std::isnan(vm::log(-INFINITY)));
    CHECK(std::isnan(vm::log(NAN)));
    CHECK(vm::log(std::bit_cast<float>(1u)) == Approx(-103.27893)); // smallest subnormal
    CHECK(vm::log(FLT_MAX) == Approx(88.72284));
    CHECK(vm::log(2.0f) == 0.693147182f);
    CHECK(vm::sqrt(-0.0f) == 0.0f);
    CHECK(std::signbit(vm::sqrt(-0.0f)));
    CHECK(std::isnan(vm::sqrt(-1.0f)));
    CHECK(vm::rsqrt(0.0f) == INFINITY);
    CHECK(vm::rsqrt(-0.0f) == -INFINITY);
    CHECK(vm::rsqrt(INFINITY) == 0.0f);
    CHECK(vm::recip(-0.0f) == -INFINITY);
    CHECK(vm::recip(INFINITY) == 0.0f);
    for (uint8_t f = TPU_ACT_LOG; f <= TPU_ACT_ERF; f++)
        CHECK(std::isnan(vm::activate(f, NAN)));
}

namespace {

constexpr uint16_t kRows = 32, kCols = 16;

// ACTIVATE with func over accumulators made by an identity fp32 MATMUL of x (kRows x kCols),
// scaled by scale; returns the accumulators (a NaN or infinity in x makes its whole row NaN)
// followed by the fp32 results.
std::vector<float> run_activate(Rig &rig, const std::vector<float> &x, uint16_t func, float scale) {
    std::vector<float> eye(kCols * kCols, 0.0f);
    for (int i = 0; i < kCols; i++)
        eye[i * kCols + i] = 1.0f;
    rig.put(0, x);
    rig.put(0x10000, eye);
    Program p{
        dma_in(TPU_DT_FP32, kRows, kCols, Rig::kHost, 64, 0, 64),
        dma_in(TPU_DT_FP32, kCols, kCols, Rig::kHost + 0x10000, 64, 0x8000, 64),
        load_w(TPU_DT_FP32, kCols, kCols, 0x8000, 64),
        matmul(TPU_DT_FP32, kRows, kCols, 0, 64, 0, 64),
        activate(TPU_DT_FP32, func, kRows, kCols, 0, 64, 0xa000, 64, 0, scale),
        dma_out_acc(TPU_DT_FP32, kRows, kCols, Rig::kHost + 0x20000, 64, 0, 64),
        dma_out(TPU_DT_FP32, kRows, kCols, Rig::kHost + 0x20000 + kRows * 64, 64, 0xa000, 64)};
    REQUIRE(rig.run(p).status == TPU_ERR_NONE);
    return rig.get<float>(0x20000, 2 * kRows * kCols);
}

} // namespace

TEST_CASE("ACTIVATE LOG, SQRT, RSQRT, RECIP and ERF end to end", "[activate][train]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint16_t func = GENERATE(range(int(TPU_ACT_LOG), int(TPU_ACT_ERF) + 1));
    Rig rig(mode);
    std::mt19937_64 rng(func);
    std::uniform_real_distribution<float> wide(-50.0f, 50.0f);
    std::vector<float> x(kRows * kCols);
    for (float &v : x)
        v = wide(rng);
    x[0] = NAN;                                  // row 0 all NaN
    x[kCols] = INFINITY;                         // row 1 likewise (infinity x 0)
    x[3 * kCols] = 0.0f;                         // finite specials in row 3
    x[3 * kCols + 1] = std::bit_cast<float>(5u); // subnormal
    x[3 * kCols + 2] = 1e-30f;
    x[3 * kCols + 3] = 3e38f;
    const float scale = 0.5f;
    const std::vector<float> acc_got = run_activate(rig, x, func, scale);
    const float *got = &acc_got[x.size()];
    for (uint64_t i = 0; i < x.size(); i++) {
        const float in = acc_got[i] * scale;
        CAPTURE(mode, func, i, in, got[i]);
        if (std::isnan(in)) {
            CHECK(std::bit_cast<uint32_t>(got[i]) == 0x7fc00000u);
            continue;
        }
        switch (func) {
        case TPU_ACT_LOG:
            if (in < 0)
                CHECK(std::bit_cast<uint32_t>(got[i]) == 0x7fc00000u);
            else
                CHECK(ulps(got[i], std::log(double(in))) <= 1.0);
            break;
        case TPU_ACT_SQRT:
            CHECK(same(got[i], ref_sqrt(in)));
            break;
        case TPU_ACT_RSQRT:
            CHECK(same(got[i], ref_rsqrt(in)));
            break;
        case TPU_ACT_ERF: // spec 2.3
            CHECK(ulps(got[i], std::erf(double(in))) <= 2.5);
            CHECK(same(got[i], vm::erf(in)));
            break;
        default:
            CHECK(same(got[i], ref_recip(in)));
            break;
        }
    }
}

namespace {

// count random elements of dt as bytes: small values (so DIV, GT and EQ see ties, zeros and
// signs), a NaN now and then for floats.
std::vector<uint8_t> small_elements(std::mt19937_64 &rng, uint8_t dt, uint64_t count) {
    std::vector<uint8_t> out(count * size_of(dt));
    for (uint64_t i = 0; i < count; i++) {
        uint8_t *p = &out[i * size_of(dt)];
        const int v = int(rng() % 9) - 4;
        if (dt == TPU_DT_INT8) {
            *p = uint8_t(int8_t(rng() % 8 ? v : int(rng() % 256) - 128));
        } else if (dt == TPU_DT_INT32) {
            const int32_t x = rng() % 8 ? v : int32_t(uint32_t(rng()));
            std::memcpy(p, &x, 4);
        } else {
            float f = rng() % 30 ? float(v) * 0.75f : NAN;
            if (rng() % 10 == 0)
                f = -0.0f;
            if (dt == TPU_DT_BF16) {
                const uint16_t b = float_to_bf16(f);
                std::memcpy(p, &b, 2);
            } else {
                std::memcpy(p, &f, 4);
            }
        }
    }
    return out;
}

double number(uint8_t dt, const std::vector<uint8_t> &v, uint64_t i) {
    const uint8_t *p = &v[i * size_of(dt)];
    if (dt == TPU_DT_INT8)
        return int8_t(*p);
    if (dt == TPU_DT_BF16) {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return bf16_to_float(b);
    }
    if (dt == TPU_DT_INT32) {
        int32_t x;
        std::memcpy(&x, p, 4);
        return x;
    }
    float f;
    std::memcpy(&f, p, 4);
    return f;
}

// The reference result of op on a and b of dt, stored as dt (canonical NaN, bf16 rounded).
void put_result(uint8_t dt, uint16_t op, double a, double b, uint8_t *out) {
    if (dt == TPU_DT_INT8 || dt == TPU_DT_INT32) {
        const auto ia = int64_t(a), ib = int64_t(b);
        int64_t r = op == TPU_VOP_DIV    ? (ib == 0 ? 0 : ia / ib)
                    : op == TPU_VOP_GATE ? (ia > 0 ? ib : 0)
                    : op == TPU_VOP_GT   ? ia > ib
                                         : ia == ib;
        if (dt == TPU_DT_INT8) {
            *out = uint8_t(int8_t(std::clamp<int64_t>(r, -128, 127)));
        } else {
            const auto v = uint32_t(uint64_t(r)); // INT32_MIN / -1 wraps
            std::memcpy(out, &v, 4);
        }
        return;
    }
    // a and b are exact floats; the quotient's double result rounds once to binary32 correctly.
    float r = op == TPU_VOP_DIV    ? float(a / b)
              : op == TPU_VOP_GATE ? (a > 0 ? float(b) : 0.0f)
              : op == TPU_VOP_GT   ? (a > b ? 1.0f : 0.0f)
                                   : (a == b ? 1.0f : 0.0f);
    if (dt == TPU_DT_BF16) {
        const uint16_t h = std::isnan(r) ? uint16_t(0x7fc0) : float_to_bf16(r);
        std::memcpy(out, &h, 2);
    } else {
        const uint32_t bits = std::isnan(r) ? 0x7fc00000u : std::bit_cast<uint32_t>(r);
        std::memcpy(out, &bits, 4);
    }
}

} // namespace

TEST_CASE("VECTOR DIV, GATE, GT, EQ: every dtype, row and column broadcasts", "[vpu][train]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint8_t dt = GENERATE(from_range(std::begin(kDtypes), std::end(kDtypes)));
    const int bcast = GENERATE(0, 1, 2); // none, b's first row (b_stride 0), b's column (B_COL)
    Rig rig(mode);
    std::mt19937_64 rng(dt * 10 + bcast);
    const uint16_t rows = 7, cols = 33;
    const uint32_t es = size_of(dt), row = cols * es, stride = row + 4 * es;
    const std::vector<uint8_t> a = small_elements(rng, dt, uint64_t(rows) * cols);
    const std::vector<uint8_t> b = small_elements(rng, dt, uint64_t(rows) * cols);
    rig.put(0, a);
    rig.put(0x10000, b);
    for (uint16_t op = TPU_VOP_DIV; op <= TPU_VOP_EQ; op++) {
        CAPTURE(mode, int(dt), bcast, op);
        const uint16_t flags = uint16_t(op | (bcast == 2 ? TPU_F_VEC_B_COL : 0));
        Program p{
            dma_in(dt, rows, cols, Rig::kHost, row, 0, stride),
            dma_in(dt, rows, cols, Rig::kHost + 0x10000, row, 0x4000, stride),
            vector(dt, flags, rows, cols, 0, stride, 0x4000, bcast == 1 ? 0 : stride, 0x8000, row),
            dma_out(dt, rows, cols, Rig::kHost + 0x20000, row, 0x8000, row)};
        REQUIRE(rig.run(p).status == TPU_ERR_NONE);
        std::vector<uint8_t> want(a.size());
        for (uint64_t r = 0; r < rows; r++)
            for (uint64_t c = 0; c < cols; c++) {
                const uint64_t i = r * cols + c;
                const uint64_t j = bcast == 1 ? c : bcast == 2 ? r * cols : i;
                put_result(dt, op, number(dt, a, i), number(dt, b, j), &want[i * es]);
            }
        CHECK(rig.get<uint8_t>(0x20000, want.size()) == want);
    }
}

TEST_CASE("VECTOR integer DIV: truncation, division by zero, INT32_MIN / -1", "[vpu][train]") {
    Rig rig(TPU_ENGINE_FAST);
    const std::vector<int32_t> a{7, -7, 7, -7, 5, INT32_MIN, INT32_MIN, 0};
    const std::vector<int32_t> b{2, 2, -2, -2, 0, -1, 1, 0};
    rig.put(0, a);
    rig.put(0x100, b);
    Program p{dma_in(TPU_DT_INT32, 1, 8, Rig::kHost, 32, 0, 32),
              dma_in(TPU_DT_INT32, 1, 8, Rig::kHost + 0x100, 32, 0x100, 32),
              vector(TPU_DT_INT32, TPU_VOP_DIV, 1, 8, 0, 32, 0x100, 32, 0x200, 32),
              dma_out(TPU_DT_INT32, 1, 8, Rig::kHost + 0x200, 32, 0x200, 32)};
    REQUIRE(rig.run(p).status == TPU_ERR_NONE);
    CHECK(rig.get<int32_t>(0x200, 8) ==
          std::vector<int32_t>{3, -3, -3, 3, 0, INT32_MIN, INT32_MIN, 0});
}

TEST_CASE("decoder: the spec 1.4 encodings and their limits", "[decoder][train]") {
    Rig rig(TPU_ENGINE_FAST);
    auto status = [&](tpu_insn insn) { return rig.run(Program{insn}).status; };
    CHECK(status(activate(TPU_DT_FP32, TPU_ACT_RECIP, 1, 1, 0, 4, 0, 4, 0, 1.0f)) == TPU_ERR_NONE);
    CHECK(status(activate(TPU_DT_FP32, TPU_ACT_ERF, 1, 1, 0, 4, 0, 4, 0, 1.0f)) == TPU_ERR_NONE);
    CHECK(status(activate(TPU_DT_FP32, TPU_ACT_ERF + 1, 1, 1, 0, 4, 0, 4, 0, 1.0f)) ==
          TPU_ERR_BAD_OPERAND);
    CHECK(status(vector(TPU_DT_FP32, TPU_VOP_EQ, 1, 4, 0, 16, 0, 16, 0, 16)) == TPU_ERR_NONE);
    CHECK(status(vector(TPU_DT_FP32, TPU_VOP_EQ + 1, 1, 4, 0, 16, 0, 16, 0, 16)) ==
          TPU_ERR_BAD_OPERAND);
    CHECK(status(vector(TPU_DT_FP32, TPU_VOP_ADD | (1u << 5), 1, 4, 0, 16, 0, 16, 0, 16)) ==
          TPU_ERR_BAD_OPERAND);
    // B_COL reads one element per row: a column at the end of the unified buffer fits, a row
    // there would not.
    const uint32_t last = Rig::kUb - 4;
    CHECK(status(vector(TPU_DT_FP32, TPU_VOP_MUL | TPU_F_VEC_B_COL, 1, 4, 0, 16, last, 4, 0, 16)) ==
          TPU_ERR_NONE);
    CHECK(status(vector(TPU_DT_FP32, TPU_VOP_MUL, 1, 4, 0, 16, last, 16, 0, 16)) ==
          TPU_ERR_UB_RANGE);
    // B_COL is for VECTOR only.
    CHECK(status(reduce(TPU_DT_FP32, TPU_ROP_SUM | TPU_F_VEC_B_COL, 1, 4, 0, 16, 0x100, 4)) ==
          TPU_ERR_BAD_OPERAND);
}
