// SPDX-License-Identifier: MIT
// vector_compiler_test.cpp - the vector compiler's programs run on the engine and equal
// reference loops written here from docs/hardware.md's Numerics (int8 saturating, int32
// wrapping, bf16 computed in binary32 and rounded to nearest even, fp32; MAX / MIN with the
// card's NaN rule; row sums in ascending column order, row maxima): every op and type, full and
// broadcast b, padded strides, tiles forced by a tiny unified buffer and programs split into
// several jobs; transposes move every element; rows that do not fit one REDUCE are refused.
#include "engine_runner.hpp"

#include <tpu_test/card.hpp>

#include <tpurt/codegen/vector_compiler.hpp>
#include <tpurt/error.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/types/bf16.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using tpurt::DType;
using tpurt::ReduceOp;
using tpurt::VectorOp;

namespace {

constexpr std::uint64_t a_va = 0x100000000ull, b_va = 0x200000000ull, d_va = 0x300000000ull;

// Writes rows of row_bytes from dense data to va, stride apart.
void put(tpu::test::AddressSpace &s, std::uint64_t va, const std::vector<std::byte> &data,
         std::uint64_t rows, std::uint64_t row_bytes, std::uint64_t stride) {
    for (std::uint64_t r = 0; r < rows; ++r)
        s.write(va + r * stride, data.data() + r * row_bytes, row_bytes);
}

void run(const std::vector<tpurt::Program> &programs, tpu::test::AddressSpace &space,
         tpu::test::Card &card) {
    for (const tpurt::Program &p : programs) {
        const tpu_job_result r = card.run(space, p.insns);
        INFO("status " << r.status << " at " << r.error_pc);
        REQUIRE(r.status == TPU_ERR_NONE);
    }
}

std::vector<std::byte> random_bytes(DType type, std::size_t count, std::uint64_t seed) {
    std::vector<std::byte> out(count * tpurt::element_size(type));
    const auto copy = [&](const auto &v) { std::memcpy(out.data(), v.data(), out.size()); };
    switch (type) {
    case DType::Int8:
        copy(tpurt::random_int8(count, seed));
        break;
    case DType::Bf16: {
        auto v = tpurt::wide_range_bf16(count, seed);
        v[0] = tpurt::Bf16{0x7fc1}; // a NaN
        copy(v);
        break;
    }
    case DType::Int32: // uniform over all int32 values: four random bytes each
        copy(tpurt::random_int8(count * 4, seed));
        break;
    case DType::Fp32: {
        auto v = tpurt::random_fp32(count, seed);
        v[1] = std::numeric_limits<float>::quiet_NaN();
        v[2] = -std::numeric_limits<float>::infinity();
        copy(v);
        break;
    }
    }
    return out;
}

float bits_to_float(std::uint32_t u) {
    return std::bit_cast<float>(u);
}

// The card's conversion of a binary32 value to `type` (round to nearest even, saturating;
// NaN canonical, or 0 for integers), appended to out as bytes.
void convert_float(DType type, float v, std::vector<std::byte> &out) {
    const auto put = [&](const auto value) {
        const auto *b = reinterpret_cast<const std::byte *>(&value);
        out.insert(out.end(), b, b + sizeof(value));
    };
    switch (type) {
    case DType::Int8:
        put(static_cast<std::int8_t>(
            std::isnan(v) ? 0 : std::clamp(std::nearbyint(v), -128.0f, 127.0f)));
        break;
    case DType::Bf16:
        put(std::isnan(v) ? std::uint16_t{0x7fc0} : tpurt::Bf16::from_float(v).bits);
        break;
    case DType::Int32:
        put(static_cast<std::int32_t>(std::isnan(v) ? 0 : std::nearbyint(v)));
        break;
    case DType::Fp32:
        put(std::isnan(v) ? 0x7fc00000u : std::bit_cast<std::uint32_t>(v));
        break;
    }
}

// The card's binary32 op, and MAX / MIN with its NaN rule.
float apply(VectorOp op, float a, float b) {
    switch (op) {
    case VectorOp::Add:
        return a + b;
    case VectorOp::Sub:
        return a - b;
    case VectorOp::Mul:
        return a * b;
    case VectorOp::Max:
        return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN()
                                              : (b > a ? b : a);
    case VectorOp::Min:
        return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN()
                                              : (b < a ? b : a);
    default: // the spec 1.4 ops: tests/engine/vpu/vpu_train_test.cpp
        break;
    }
    return 0;
}

std::int64_t apply_int(VectorOp op, std::int64_t a, std::int64_t b) {
    switch (op) {
    case VectorOp::Add:
        return a + b;
    case VectorOp::Sub:
        return a - b;
    case VectorOp::Mul:
        return a * b;
    case VectorOp::Max:
        return b > a ? b : a;
    case VectorOp::Min:
        return b < a ? b : a;
    default: // the spec 1.4 ops: tests/engine/vpu/vpu_train_test.cpp
        break;
    }
    return 0;
}

std::uint32_t canonical(float f) {
    return std::isnan(f) ? 0x7fc00000u : std::bit_cast<std::uint32_t>(f);
}

// One element of a op b of `type`, as bytes.
void reference_element(DType type, VectorOp op, const std::byte *a, const std::byte *b,
                       std::byte *out) {
    switch (type) {
    case DType::Int8: {
        const std::int64_t v =
            apply_int(op, static_cast<std::int8_t>(*a), static_cast<std::int8_t>(*b));
        *out = static_cast<std::byte>(
            static_cast<std::int8_t>(std::clamp<std::int64_t>(v, -128, 127)));
        break;
    }
    case DType::Int32: {
        std::int32_t x, y;
        std::memcpy(&x, a, 4);
        std::memcpy(&y, b, 4);
        const auto v = static_cast<std::uint32_t>(apply_int(op, x, y)); // modulo 2^32
        std::memcpy(out, &v, 4);
        break;
    }
    case DType::Bf16: {
        std::uint16_t x, y;
        std::memcpy(&x, a, 2);
        std::memcpy(&y, b, 2);
        const float r =
            apply(op, bits_to_float(std::uint32_t{x} << 16), bits_to_float(std::uint32_t{y} << 16));
        const std::uint16_t v = std::isnan(r) ? 0x7fc0 : tpurt::Bf16::from_float(r).bits;
        std::memcpy(out, &v, 2);
        break;
    }
    case DType::Fp32: {
        float x, y;
        std::memcpy(&x, a, 4);
        std::memcpy(&y, b, 4);
        const std::uint32_t v = canonical(apply(op, x, y));
        std::memcpy(out, &v, 4);
        break;
    }
    }
}

void check_elementwise(const tpu_engine_config &cfg, DType type, VectorOp op, std::uint32_t rows,
                       std::uint32_t cols, bool broadcast, std::uint64_t pad,
                       std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES) {
    INFO(tpurt::dtype_name(type) << " op " << int(op) << " " << rows << "x" << cols
                                 << (broadcast ? " broadcast" : "") << " pad " << pad);
    const std::uint64_t elem = tpurt::element_size(type), row = cols * elem, stride = row + pad;
    const auto a = random_bytes(type, std::size_t{rows} * cols, rows * 7 + cols);
    const auto b = random_bytes(type, std::size_t{broadcast ? 1 : rows} * cols, rows + 3);
    const tpurt::ElementwiseProblem p{.type = type,
                                      .op = op,
                                      .rows = rows,
                                      .cols = cols,
                                      .broadcast_b = broadcast,
                                      .a_addr = a_va,
                                      .b_addr = b_va,
                                      .dst_addr = d_va,
                                      .a_stride = stride,
                                      .b_stride = broadcast ? 0 : stride,
                                      .dst_stride = stride};
    const auto programs = tpurt::compile_elementwise(p, limits_of(cfg), max_program_bytes);
    tpu::test::HostMemory memory;
    tpu::test::Card card(memory, cfg);
    tpu::test::AddressSpace space = card.address_space(1);
    space.map(a_va, rows * stride, tpu::test::kRead);
    space.map(b_va, rows * stride, tpu::test::kRead);
    space.map(d_va, rows * stride, tpu::test::kWrite);
    put(space, a_va, a, rows, row, stride);
    put(space, b_va, b, broadcast ? 1 : rows, row, broadcast ? row : stride);
    run(programs, space, card);
    std::vector<std::byte> got(row), want(row);
    for (std::uint32_t r = 0; r < rows; ++r) {
        space.read(d_va + r * stride, got.data(), row);
        for (std::uint32_t c = 0; c < cols; ++c)
            reference_element(type, op, &a[(std::size_t{r} * cols + c) * elem],
                              &b[(std::size_t{broadcast ? 0 : r} * cols + c) * elem],
                              &want[c * elem]);
        REQUIRE(got == want);
    }
}

// `columns`: the reduction over each column (ReduceProblem::columns), checked as the row
// reduction of a transposed on the host.
void check_reduce(const tpu_engine_config &cfg, DType type, ReduceOp op, std::uint32_t rows,
                  std::uint32_t cols, std::uint64_t pad, bool columns = false) {
    INFO(tpurt::dtype_name(type) << (op == ReduceOp::Sum ? " sum " : " max ") << rows << "x" << cols
                                 << (columns ? " over columns" : ""));
    const std::uint64_t elem = tpurt::element_size(type), row = cols * elem, stride = row + pad;
    const DType out_type = tpurt::reduce_result_type(type, op);
    const std::uint64_t out_elem = tpurt::element_size(out_type);
    const auto a = random_bytes(type, std::size_t{rows} * cols, rows + cols);
    const auto programs = tpurt::compile_reduce({.type = type,
                                                 .op = op,
                                                 .rows = rows,
                                                 .cols = cols,
                                                 .a_addr = a_va,
                                                 .dst_addr = d_va,
                                                 .a_stride = stride,
                                                 .columns = columns},
                                                limits_of(cfg));
    const std::uint32_t outs = columns ? cols : rows;
    tpu::test::HostMemory memory;
    tpu::test::Card card(memory, cfg);
    tpu::test::AddressSpace space = card.address_space(1);
    space.map(a_va, rows * stride, tpu::test::kRead);
    space.map(d_va, outs * out_elem, tpu::test::kWrite);
    put(space, a_va, a, rows, row, stride);
    run(programs, space, card);
    std::vector<std::byte> got(outs * out_elem), want(outs * out_elem);
    space.read(d_va, got.data(), got.size());
    // The rows reduced on the host: a's, or its transpose's.
    std::vector<std::byte> at(a.size());
    for (std::uint32_t r = 0; r < rows; ++r)
        for (std::uint32_t c = 0; c < cols; ++c)
            std::memcpy(&at[(std::size_t{c} * rows + r) * elem],
                        &a[(std::size_t{r} * cols + c) * elem], elem);
    const std::vector<std::byte> &in = columns ? at : a;
    const std::uint32_t in_cols = columns ? rows : cols;
    for (std::uint32_t r = 0; r < outs; ++r) {
        const std::byte *x = &in[std::size_t{r} * in_cols * elem];
        std::byte *w = &want[r * out_elem];
        if (type == DType::Int8 || type == DType::Int32) {
            const auto value = [&](std::uint32_t c) -> std::int64_t {
                if (type == DType::Int8)
                    return static_cast<std::int8_t>(x[c]);
                std::int32_t v;
                std::memcpy(&v, x + 4 * c, 4);
                return v;
            };
            if (op == ReduceOp::Sum) {
                std::uint32_t sum = 0; // int32 with wrap-around
                for (std::uint32_t c = 0; c < in_cols; ++c)
                    sum += static_cast<std::uint32_t>(value(c));
                std::memcpy(w, &sum, 4);
            } else {
                std::int64_t m = value(0);
                for (std::uint32_t c = 1; c < in_cols; ++c)
                    m = value(c) > m ? value(c) : m;
                if (type == DType::Int8)
                    *w = static_cast<std::byte>(static_cast<std::int8_t>(m));
                else {
                    const auto v = static_cast<std::int32_t>(m);
                    std::memcpy(w, &v, 4);
                }
            }
        } else {
            const auto value = [&](std::uint32_t c) {
                if (type == DType::Bf16) {
                    std::uint16_t h;
                    std::memcpy(&h, x + 2 * c, 2);
                    return bits_to_float(std::uint32_t{h} << 16);
                }
                float f;
                std::memcpy(&f, x + 4 * c, 4);
                return f;
            };
            float acc = value(0);
            for (std::uint32_t c = 1; c < in_cols; ++c)
                acc = op == ReduceOp::Sum ? acc + value(c) : apply(VectorOp::Max, acc, value(c));
            if (op == ReduceOp::Max && type == DType::Bf16) {
                const std::uint16_t v =
                    std::isnan(acc) ? 0x7fc0 : static_cast<std::uint16_t>(canonical(acc) >> 16);
                std::memcpy(w, &v, 2);
            } else {
                const std::uint32_t v = canonical(acc);
                std::memcpy(w, &v, 4);
            }
        }
    }
    CHECK(got == want);
}

void check_transpose(const tpu_engine_config &cfg, DType type, std::uint32_t rows,
                     std::uint32_t cols, std::uint64_t pad) {
    INFO(tpurt::dtype_name(type) << " transpose " << rows << "x" << cols << " pad " << pad);
    const std::uint64_t elem = tpurt::element_size(type);
    const std::uint64_t a_stride = cols * elem + pad, d_stride = rows * elem + pad;
    const auto a = random_bytes(type, std::size_t{rows} * cols, rows * 3 + cols);
    const auto programs = tpurt::compile_transpose({.type = type,
                                                    .rows = rows,
                                                    .cols = cols,
                                                    .a_addr = a_va,
                                                    .dst_addr = d_va,
                                                    .a_stride = a_stride,
                                                    .dst_stride = d_stride},
                                                   limits_of(cfg));
    tpu::test::HostMemory memory;
    tpu::test::Card card(memory, cfg);
    tpu::test::AddressSpace space = card.address_space(1);
    space.map(a_va, rows * a_stride, tpu::test::kRead);
    space.map(d_va, cols * d_stride, tpu::test::kWrite);
    put(space, a_va, a, rows, cols * elem, a_stride);
    run(programs, space, card);
    std::vector<std::byte> got(rows * elem);
    for (std::uint32_t c = 0; c < cols; ++c) {
        space.read(d_va + c * d_stride, got.data(), got.size());
        for (std::uint32_t r = 0; r < rows; ++r)
            REQUIRE(std::memcmp(&got[r * elem], &a[(std::size_t{r} * cols + c) * elem], elem) == 0);
    }
}

// One element of `type` at p as a float (int8 and int32 exactly as the card's int32 sums see
// them: AVG of integers sums in int32, which these small windows of small values never wrap).
float load(DType type, const std::byte *p) {
    switch (type) {
    case DType::Int8:
        return static_cast<float>(static_cast<std::int8_t>(*p));
    case DType::Bf16: {
        std::uint16_t h;
        std::memcpy(&h, p, 2);
        return bits_to_float(std::uint32_t{h} << 16);
    }
    case DType::Int32: {
        std::int32_t v;
        std::memcpy(&v, p, 4);
        return static_cast<float>(v);
    }
    case DType::Fp32: {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    }
    return 0;
}

void check_pool(const tpu_engine_config &cfg, DType type, tpurt::PoolOp op,
                const tpurt::PoolProblem &shape) {
    tpurt::PoolProblem p = shape;
    p.type = type;
    p.op = op;
    p.a_addr = a_va;
    p.dst_addr = d_va;
    INFO(tpurt::dtype_name(type) << (op == tpurt::PoolOp::Max ? " max" : " avg") << " pool "
                                 << p.batch << "x" << p.height << "x" << p.width << "x"
                                 << p.channels << " window " << p.win_h << "x" << p.win_w);
    const std::uint64_t elem = tpurt::element_size(type);
    const std::size_t in_count = std::size_t{p.batch} * p.height * p.width * p.channels;
    auto a = random_bytes(type, in_count, in_count);
    if (type == DType::Int32) // small values: exact in binary32 (AVG divides a float sum)
        for (std::size_t i = 0; i < in_count; ++i) {
            const std::int32_t v = static_cast<std::int8_t>(a[4 * i]);
            std::memcpy(&a[4 * i], &v, 4);
        }
    const auto programs = tpurt::compile_pool(p, limits_of(cfg));
    const std::uint32_t oh = p.out_height(), ow = p.out_width();
    const std::size_t out_count = std::size_t{p.batch} * oh * ow * p.channels;
    tpu::test::HostMemory memory;
    tpu::test::Card card(memory, cfg);
    tpu::test::AddressSpace space = card.address_space(1);
    space.map(a_va, a.size(), tpu::test::kRead);
    space.map(d_va, out_count * elem, tpu::test::kWrite);
    space.write(a_va, a.data(), a.size());
    run(programs, space, card);
    std::vector<std::byte> got(out_count * elem), want;
    space.read(d_va, got.data(), got.size());
    // The element at (y, x) of the padded image, null in the padding.
    const auto at = [&](std::uint32_t n, std::uint32_t y, std::uint32_t x,
                        std::uint32_t c) -> const std::byte * {
        if (y < p.pad_h || x < p.pad_w || y - p.pad_h >= p.height || x - p.pad_w >= p.width)
            return nullptr;
        return &a[(((std::size_t{n} * p.height + y - p.pad_h) * p.width + x - p.pad_w) *
                       p.channels +
                   c) *
                  elem];
    };
    for (std::uint32_t n = 0; n < p.batch; ++n)
        for (std::uint32_t oy = 0; oy < oh; ++oy)
            for (std::uint32_t ox = 0; ox < ow; ++ox)
                for (std::uint32_t c = 0; c < p.channels; ++c) {
                    if (op == tpurt::PoolOp::Max) {
                        // The window's maximum keeps the element's bytes (NaN canonical); the
                        // padding (the lowest value) is never above an element of the image.
                        const std::byte *best = nullptr;
                        bool is_nan = false;
                        for (std::uint32_t i = 0; i < p.win_h; ++i)
                            for (std::uint32_t j = 0; j < p.win_w; ++j) {
                                const std::byte *e =
                                    at(n, oy * p.stride_h + i, ox * p.stride_w + j, c);
                                if (!e)
                                    continue;
                                is_nan = is_nan || std::isnan(load(type, e));
                                if (!best || load(type, e) > load(type, best))
                                    best = e;
                            }
                        REQUIRE(best);
                        if (is_nan)
                            convert_float(type, std::numeric_limits<float>::quiet_NaN(), want);
                        else
                            want.insert(want.end(), best, best + elem);
                    } else {
                        // In row-major order from the first element, the padding's zeros too.
                        float sum = 0;
                        bool started = false;
                        for (std::uint32_t i = 0; i < p.win_h; ++i)
                            for (std::uint32_t j = 0; j < p.win_w; ++j) {
                                const std::byte *e =
                                    at(n, oy * p.stride_h + i, ox * p.stride_w + j, c);
                                const float v = e ? load(type, e) : 0.0f;
                                sum = started ? sum + v : v;
                                started = true;
                            }
                        convert_float(type, sum / static_cast<float>(p.win_h * p.win_w), want);
                    }
                }
    CHECK(got == want);
}

const tpu_engine_config card = engine_config(128, 128, 8u << 20, 4u << 20);
// A 1 KiB unified buffer: tiles of a few rows and columns.
const tpu_engine_config tiny = engine_config(4, 4, 1024, 1024);

} // namespace

TEST_CASE("elementwise ops equal the reference for every op and type", "[vector]") {
    for (DType type : {DType::Int8, DType::Bf16, DType::Int32, DType::Fp32})
        for (VectorOp op :
             {VectorOp::Add, VectorOp::Sub, VectorOp::Mul, VectorOp::Max, VectorOp::Min}) {
            check_elementwise(card, type, op, 37, 301, false, 0);
            check_elementwise(card, type, op, 20, 129, true, 12);
        }
}

TEST_CASE("elementwise ops tile over a small unified buffer and split programs", "[vector]") {
    check_elementwise(tiny, DType::Fp32, VectorOp::Add, 45, 300, false, 8);
    check_elementwise(tiny, DType::Bf16, VectorOp::Mul, 33, 700, true, 0);
    const tpurt::ElementwiseProblem big{.type = DType::Int8, .rows = 300, .cols = 300};
    CHECK(tpurt::compile_elementwise(big, limits_of(tiny), 4096).size() > 1);
    check_elementwise(tiny, DType::Int8, VectorOp::Sub, 300, 300, false, 0, 4096);
}

TEST_CASE("row reductions equal the reference", "[vector][reduce]") {
    for (DType type : {DType::Int8, DType::Bf16, DType::Int32, DType::Fp32})
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max}) {
            check_reduce(card, type, op, 70, 333, 0);
            check_reduce(tiny, type, op, 50, 60, 4);
        }
}

TEST_CASE("column reductions equal the row reductions of the transpose", "[vector][reduce]") {
    // The demo's bias gradients (12544 x 32 fp32, 64 x 128 bf16) in one block; on the small card
    // blocks of columns in two halves of the buffer in turn.
    check_reduce(card, DType::Fp32, ReduceOp::Sum, 12544, 32, 0, true);
    check_reduce(card, DType::Bf16, ReduceOp::Sum, 64, 128, 0, true);
    for (DType type : {DType::Int8, DType::Bf16, DType::Int32, DType::Fp32})
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max})
            check_reduce(tiny, type, op, 50, 60, 4, true);
}

TEST_CASE("a reduction's row may fill the unified buffer with its result", "[vector][reduce]") {
    // 65535 fp32 elements and their sum are 262,144 bytes: a 256 KiB unified buffer exactly, so
    // one row a REDUCE; 16,381 bf16 elements (32,762 bytes, padded to 32,764) and the fp32 sum
    // fill 32 KiB. A row that leaves no room for its result is refused.
    const tpu_engine_config ub256 = engine_config(32, 32, 256u << 10, 64u << 10);
    const tpu_engine_config ub32 = engine_config(32, 32, 32u << 10, 64u << 10);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max})
        check_reduce(ub256, DType::Fp32, op, 3, 65535, 0);
    check_reduce(ub32, DType::Bf16, ReduceOp::Sum, 2, 16381, 6);
    try {
        tpurt::compile_reduce({.type = DType::Fp32, .rows = 1, .cols = 8192}, limits_of(ub32));
        FAIL("a row of 32 KiB and its sum were accepted for a 32 KiB unified buffer");
    } catch (const tpurt::Error &error) {
        CHECK(error.code() == tpurt::ErrorCode::Unsupported);
    }
}

TEST_CASE("transposes move every element to its place", "[vector][transpose]") {
    for (DType type : {DType::Int8, DType::Bf16, DType::Fp32}) {
        check_transpose(card, type, 300, 170, 0);
        check_transpose(tiny, type, 37, 53, 8);
    }
}

TEST_CASE("max and average pooling equal the reference", "[vector][pool]") {
    const tpurt::PoolProblem small{.batch = 2,
                                   .height = 9,
                                   .width = 11,
                                   .channels = 5,
                                   .win_h = 2,
                                   .win_w = 3,
                                   .stride_h = 2,
                                   .stride_w = 2};
    const tpurt::PoolProblem banded{.batch = 1,
                                    .height = 40,
                                    .width = 12,
                                    .channels = 3,
                                    .win_h = 3,
                                    .win_w = 3,
                                    .stride_h = 1,
                                    .stride_w = 3};
    for (DType type : {DType::Int8, DType::Bf16, DType::Int32, DType::Fp32})
        for (tpurt::PoolOp op : {tpurt::PoolOp::Max, tpurt::PoolOp::Avg}) {
            check_pool(card, type, op, small);
            check_pool(tiny, type, op, banded); // bands of a few output rows
        }
    // Padding of one or two rows and pixels: windows reaching into it on every side, bands that
    // start and end in it.
    for (DType type : {DType::Int8, DType::Bf16, DType::Int32, DType::Fp32})
        for (tpurt::PoolOp op : {tpurt::PoolOp::Max, tpurt::PoolOp::Avg}) {
            tpurt::PoolProblem padded = small;
            padded.pad_h = 1;
            padded.pad_w = 2;
            check_pool(card, type, op, padded);
            padded = banded;
            padded.pad_h = 2;
            padded.pad_w = 1;
            check_pool(tiny, type, op, padded);
            padded.stride_h = 3;
            check_pool(card, type, op, padded);
        }
    // The tiny card's 1 KiB unified buffer takes the 40 rows in bands: several POOLs.
    std::size_t pools = 0;
    for (const tpurt::Program &program : tpurt::compile_pool(banded, limits_of(tiny)))
        for (const union tpu_insn &insn : program.insns)
            pools += insn.hdr.opcode == TPU_OP_POOL;
    CHECK(pools > 1);
}

TEST_CASE("vector ops refuse what they cannot do", "[vector][errors]") {
    CHECK_THROWS_AS(tpurt::compile_elementwise({.rows = 0, .cols = 4}, limits_of(card)),
                    tpurt::Error);
    CHECK_THROWS_AS(
        tpurt::compile_elementwise({.rows = 2, .cols = 4, .a_stride = 8}, limits_of(card)),
        tpurt::Error);
    try {
        tpurt::compile_reduce({.type = DType::Fp32, .rows = 2, .cols = 300}, limits_of(tiny));
        FAIL("a row of 1200 bytes was accepted for a 1 KiB unified buffer");
    } catch (const tpurt::Error &error) {
        CHECK(error.code() == tpurt::ErrorCode::Unsupported);
    }
}
