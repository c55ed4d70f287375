// SPDX-License-Identifier: MIT
// The matrix unit in isolation: every row-kernel set this CPU supports (AMX, AVX-512, AVX2+FMA,
// scalar) against the reference, including ACCUMULATE chains; the fast functional mode against
// the cycle-accurate systolic array, bit for bit and with the documented cycle counts; that
// the AMX set is offered only where the process can run AMX, and that every set the CPU's flags
// call for is offered (none dropped by a failed start-up check).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "compare.hpp"
#include "executor/cycle_model.hpp"
#include "mxu/bf16_numerics.hpp"
#include "mxu/kernels/amx/amx.hpp"
#include "mxu/kernels/check/check.hpp"
#include "mxu/mxu.hpp"
#include "mxu/systolic_array.hpp"
#include "mxu/weight_tile.hpp"
#include "tpu_test/random_data.hpp"
#include "tpu_test/reference.hpp"

using namespace tpu::engine;
using namespace tpu::test;

namespace {

// Operands of one random MATMUL laid out as in the on-chip buffers: activations with a row
// stride larger than K, accumulator rows with a stride larger than 4 N.
struct Operands {
    MxuType type;
    uint32_t m, k, n;
    std::vector<uint8_t> a;   // m rows of k elements, src_stride apart
    std::vector<uint8_t> w;   // k x n packed
    std::vector<uint8_t> acc; // m rows of n words, acc_stride apart
    uint64_t src_stride, acc_stride;

    MatmulArgs args(std::vector<uint8_t> &acc_buf, bool accumulate) const {
        MatmulArgs r;
        r.src = a.data();
        r.src_stride = src_stride;
        r.acc = acc_buf.data();
        r.acc_stride = acc_stride;
        r.rows = m;
        r.accumulate = accumulate;
        return r;
    }
};

Operands random_operands(std::mt19937_64 &rng, MxuType type, uint32_t m, uint32_t k, uint32_t n) {
    uint32_t es = mxu_elem_bytes(type);
    Operands op{type, m, k, n, {}, {}, {}, uint64_t(k) * es + 2 * es, uint64_t(n) * 4 + 12};
    op.a.resize(op.src_stride * m);
    op.w.resize(uint64_t(k) * n * es);
    op.acc.resize(op.acc_stride * m);
    auto fill = [&](std::vector<uint8_t> &v) {
        if (type == MxuType::Int8) {
            std::vector<int8_t> r = random_int8(rng, v.size());
            std::memcpy(v.data(), r.data(), v.size());
        } else {
            std::vector<uint16_t> r = random_bf16(rng, v.size() / 2);
            std::memcpy(v.data(), r.data(), v.size());
        }
    };
    fill(op.a);
    fill(op.w);
    // Starting accumulators for ACCUMULATE: random int32, or fp32 made from bf16 values.
    for (uint64_t i = 0; i + 4 <= op.acc.size(); i += 4) {
        uint32_t word = type == MxuType::Int8 ? uint32_t(rng()) : uint32_t(random_bf16(rng)) << 16;
        std::memcpy(&op.acc[i], &word, 4);
    }
    return op;
}

// The m x n result rows of acc, packed.
std::vector<uint8_t> packed_result(const Operands &op, const std::vector<uint8_t> &acc) {
    std::vector<uint8_t> out(uint64_t(op.m) * op.n * 4);
    for (uint32_t i = 0; i < op.m; i++)
        std::memcpy(&out[uint64_t(i) * op.n * 4], &acc[i * op.acc_stride], op.n * 4);
    return out;
}

// Reference for a MATMUL without ACCUMULATE followed by one with ACCUMULATE on the same
// operands: one chain over 2K (A repeated along k, W stacked twice). For bf16 the first copy is
// padded to whole blocks of 32 k with +0 activations meeting -0 weights, which add -0 to their
// chain (no change), so the second copy's blocks start where the second MATMUL's do.
std::vector<uint8_t> reference_twice(const Operands &op) {
    uint32_t es = mxu_elem_bytes(op.type);
    const uint32_t pad =
        op.type == MxuType::Bf16 ? (kBf16Block - op.k % kBf16Block) % kBf16Block : 0;
    const uint32_t k2 = 2 * op.k + pad;
    std::vector<uint8_t> a2(uint64_t(op.m) * k2 * es, 0), w2(uint64_t(k2) * op.n * es, 0);
    for (uint32_t i = 0; i < op.m; i++)
        for (uint32_t rep = 0; rep < 2; rep++)
            std::memcpy(&a2[(uint64_t(i) * k2 + rep * (op.k + pad)) * es], &op.a[i * op.src_stride],
                        op.k * es);
    std::memcpy(w2.data(), op.w.data(), op.w.size());
    for (uint32_t j = 0; j < op.n * pad; j++)
        w2[op.w.size() + 2 * j + 1] = 0x80; // -0 in bf16, little-endian
    std::memcpy(w2.data() + op.w.size() + uint64_t(pad) * op.n * es, op.w.data(), op.w.size());
    std::vector<uint8_t> out(uint64_t(op.m) * op.n * 4);
    if (op.type == MxuType::Int8) {
        auto c = reference_matmul_int8(reinterpret_cast<const int8_t *>(a2.data()),
                                       reinterpret_cast<const int8_t *>(w2.data()), op.m, k2, op.n);
        std::memcpy(out.data(), c.data(), out.size());
    } else {
        auto c =
            reference_matmul_bf16(reinterpret_cast<const uint16_t *>(a2.data()),
                                  reinterpret_cast<const uint16_t *>(w2.data()), op.m, k2, op.n);
        std::memcpy(out.data(), c.data(), out.size());
    }
    return out;
}

} // namespace

TEST_CASE("every supported row-kernel set matches the reference", "[mxu]") {
    std::mt19937_64 rng(11);
    ThreadPool pool(2);
    std::atomic<bool> abort{false};
    for (const RowKernels *kernels : cpu_row_kernels()) {
        FastMxu mxu(pool, *kernels);
        for (MxuType type : {MxuType::Int8, MxuType::Bf16}) {
            // n covers the wide blocks, single vectors and a masked tail of every kernel set.
            // Tiles of a few k (one or two channels of a convolution's taps) around the small-k
            // kernels' bound.
            for (auto [m, k, n] : {std::tuple{1u, 1u, 1u},
                                   {37u, 50u, 173u},
                                   {300u, 7u, 9u},
                                   {5u, 256u, 256u},
                                   {70u, 3u, 131u},
                                   {500u, 1u, 32u},
                                   {64u, 2u, 17u},
                                   {33u, 8u, 64u},
                                   {20u, 9u, 40u}}) {
                CAPTURE(kernels->name, int(type), m, k, n);
                Operands op = random_operands(rng, type, m, k, n);
                WeightTile tile(256, 256);
                tile.load(type, k, n, op.w.data(), uint64_t(n) * mxu_elem_bytes(type));
                std::vector<uint8_t> acc = op.acc;
                REQUIRE(mxu.run(tile, op.args(acc, false), abort));
                REQUIRE(mxu.run(tile, op.args(acc, true), abort));
                std::vector<uint8_t> want = reference_twice(op);
                CHECK(first_difference(packed_result(op, acc).data(), want.data(),
                                       uint64_t(m) * n) == "");
            }
        }
    }
}

TEST_CASE("every kernel set computes fp32 chains exactly, rows in place or packed", "[mxu]") {
    // fp32 rows that are 4-byte aligned and evenly spaced are read in place, others packed; a
    // chain whose weights outgrow the L2 cache (K = 2304 x 128 columns) is walked in ranges of k
    // over blocks of several panels. All must equal one fma chain per output in ascending k.
    std::mt19937_64 rng(13);
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    ThreadPool pool(2);
    std::atomic<bool> abort{false};
    for (const RowKernels *kernels : cpu_row_kernels()) {
        FastMxu mxu(pool, *kernels);
        for (auto [m, k, n, offset, group] : {std::tuple{200u, 2304u, 128u, 0u, 0u},
                                              {100u, 300u, 70u, 2u, 0u},
                                              {130u, 200u, 128u, 0u, 20u}}) {
            CAPTURE(kernels->name, m, k, n, offset, group);
            const uint64_t stride = 4 * uint64_t(k) + 8; // bytes between rows of a group
            const uint64_t group_stride = stride * group + 24;
            std::vector<float> a(uint64_t(m) * k), w(uint64_t(k) * n);
            for (float &x : a)
                x = value(rng);
            for (float &x : w)
                x = value(rng);
            MatmulArgs args;
            args.src_stride = stride;
            args.row_group = group;
            args.group_stride = group_stride;
            args.rows = m;
            std::vector<uint8_t> src(offset +
                                     (group ? (m / group + 1) * group_stride : m * stride));
            args.src = src.data() + offset;
            for (uint32_t i = 0; i < m; i++)
                std::memcpy(const_cast<uint8_t *>(args.src_row(i)), &a[uint64_t(i) * k], 4 * k);
            std::vector<uint8_t> acc(uint64_t(m) * n * 4);
            args.acc = acc.data();
            args.acc_stride = 4 * uint64_t(n);
            WeightTile tile(k, n);
            tile.load(MxuType::Fp32, k, n, reinterpret_cast<const uint8_t *>(w.data()), 4 * n);
            REQUIRE(mxu.run(tile, args, abort));
            std::vector<float> want = reference_matmul_fp32(a.data(), w.data(), m, k, n);
            CHECK(first_difference(acc.data(), want.data(), uint64_t(m) * n) == "");
        }
    }
}

TEST_CASE("every kernel set stores NaN results as the canonical NaN", "[mxu]") {
    // NaN inputs with payloads and signs, and infinities that meet zeros or each other, in
    // rows long enough to cross the kernels' chunks of steps, with and without ACCUMULATE:
    // each output that is NaN must be stored as 0x7fc00000, and every other output as the
    // reference computes it.
    ThreadPool pool(2);
    std::atomic<bool> abort{false};
    std::mt19937_64 rng(13);
    constexpr uint32_t m = 13, k = 600, n = 70;
    Operands op = random_operands(rng, MxuType::Bf16, m, k, n);
    const uint16_t specials[] = {0x7fc1, 0xffa0, 0x7f81, 0x7f80, 0xff80, 0x0000};
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < 3; j++) {
            const uint16_t v = specials[(i + j) % std::size(specials)];
            std::memcpy(&op.a[i * op.src_stride + 2 * uint64_t(rng() % k)], &v, 2);
        }
    for (uint32_t j = 0; j < n; j += 3) {
        const uint16_t v = specials[j % std::size(specials)];
        std::memcpy(&op.w[2 * (uint64_t(rng() % k) * n + j)], &v, 2);
    }
    for (const RowKernels *kernels : cpu_row_kernels()) {
        CAPTURE(kernels->name);
        FastMxu mxu(pool, *kernels);
        WeightTile tile(k, n);
        tile.load(MxuType::Bf16, k, n, op.w.data(), uint64_t(n) * 2);
        std::vector<uint8_t> acc = op.acc;
        REQUIRE(mxu.run(tile, op.args(acc, false), abort));
        REQUIRE(mxu.run(tile, op.args(acc, true), abort));
        const std::vector<uint8_t> got = packed_result(op, acc);
        const std::vector<uint8_t> want = reference_twice(op);
        uint64_t nans = 0;
        for (uint64_t i = 0; i + 4 <= got.size(); i += 4) {
            uint32_t word;
            std::memcpy(&word, &got[i], 4);
            nans += (word & 0x7fffffffu) > 0x7f800000u;
            if ((word & 0x7fffffffu) > 0x7f800000u)
                CHECK(word == 0x7fc00000u);
        }
        CHECK(nans > 0);
        CHECK(first_difference(got.data(), want.data(), uint64_t(m) * n) == "");
    }
}

TEST_CASE("fast mode and the cycle-accurate systolic array are bit-identical", "[mxu]") {
    std::mt19937_64 rng(12);
    ThreadPool pool(2);
    FastMxu fast(pool);
    std::atomic<bool> abort{false};
    auto [rows, cols, max_m] = GENERATE(
        table<uint32_t, uint32_t, uint32_t>({{4, 4, 40}, {8, 16, 40}, {16, 8, 20}, {128, 128, 6}}));
    SystolicArray array(rows, cols);
    for (int iter = 0; iter < 12; iter++) {
        MxuType type = iter % 2 ? MxuType::Bf16 : MxuType::Int8;
        uint32_t m = 1 + uint32_t(rng() % max_m);
        uint32_t k = 1 + uint32_t(rng() % rows);
        uint32_t n = 1 + uint32_t(rng() % cols);
        if (iter == 0)
            k = rows, n = cols; // the full array once
        bool accumulate = iter % 3 == 2;
        CAPTURE(rows, cols, int(type), m, k, n, accumulate);

        Operands op = random_operands(rng, type, m, k, n);
        WeightTile tile(rows, cols);
        tile.load(type, k, n, op.w.data(), uint64_t(n) * mxu_elem_bytes(type));

        std::vector<uint8_t> fast_acc = op.acc, array_acc = op.acc;
        REQUIRE(fast.run(tile, op.args(fast_acc, accumulate), abort));
        CHECK(array.load_weights(tile) == cycles::load_w(k));
        CHECK(array.run(op.args(array_acc, accumulate)) == cycles::matmul(m, k, n));
        // Whole buffers, so the gaps between rows must be untouched by both.
        CHECK(fast_acc == array_acc);
    }
}

TEST_CASE("MATMULs against one column of fp32 weights equal the systolic array", "[mxu]") {
    // libtpurt's training ops move and combine values with such MATMULs (K x 1 weights), which
    // fast mode computes in a loop of its own (mxu/weight_column.cpp): specials (NaN payloads,
    // infinities, signed zeros, subnormals, values whose product overflows or underflows),
    // strided rows (and stride 0), accumulator rows that overlap (stride 0: every row onto one
    // accumulator, in ascending m), with and without ACCUMULATE, against the cycle-accurate array.
    std::mt19937_64 rng(14);
    ThreadPool pool(2);
    FastMxu fast(pool);
    SystolicArray array(8, 8);
    std::atomic<bool> abort{false};
    const uint32_t specials[] = {0x7fc00001, 0xffa00000, 0x7f800000, 0xff800000, 0x00000000,
                                 0x80000000, 0x00000001, 0x807fffff, 0x7f7fffff, 0x3f800000};
    auto value = [&] {
        if (rng() % 3 == 0)
            return specials[rng() % std::size(specials)];
        return std::bit_cast<uint32_t>(
            std::ldexp(float(int32_t(rng() % 2001) - 1000) / 997.0f, int(rng() % 80) - 40));
    };
    for (int iter = 0; iter < 200; iter++) {
        const uint32_t m = 1 + uint32_t(rng() % 300);
        const uint32_t k = iter % 2 ? 1 : 1 + uint32_t(rng() % 8);
        // Stride 0 now and then: every row the same activations.
        const uint64_t src_stride = iter % 7 == 3 ? 0 : 4 * (k + rng() % 3);
        const uint64_t acc_stride = iter % 5 == 0 ? 0 : 4 * (1 + rng() % 3);
        const bool accumulate = rng() % 2;
        CAPTURE(iter, m, k, src_stride, acc_stride, accumulate);
        std::vector<uint8_t> a(src_stride * m + 4 * k), acc(acc_stride * m + 4), w(4 * k);
        for (std::vector<uint8_t> *v : {&a, &acc, &w})
            for (uint64_t i = 0; i + 4 <= v->size(); i += 4) {
                const uint32_t x = value();
                std::memcpy(&(*v)[i], &x, 4);
            }
        WeightTile tile(8, 8);
        tile.load(MxuType::Fp32, k, 1, w.data(), 4);
        MatmulArgs args;
        args.src = a.data();
        args.src_stride = src_stride;
        args.acc_stride = acc_stride;
        args.rows = m;
        args.accumulate = accumulate;
        std::vector<uint8_t> fast_acc = acc, array_acc = acc;
        args.acc = fast_acc.data();
        REQUIRE(fast.run(tile, args, abort));
        array.load_weights(tile);
        args.acc = array_acc.data();
        array.run(args);
        CHECK(fast_acc == array_acc);
    }
}

TEST_CASE("fast mode stops between row blocks when aborted", "[mxu]") {
    ThreadPool pool(2);
    FastMxu fast(pool);
    std::atomic<bool> abort{true};
    std::mt19937_64 rng(13);
    Operands op = random_operands(rng, MxuType::Int8, 64, 8, 8);
    WeightTile tile(8, 8);
    tile.load(MxuType::Int8, 8, 8, op.w.data(), 8);
    std::vector<uint8_t> acc = op.acc;
    CHECK_FALSE(fast.run(tile, op.args(acc, false), abort));
    CHECK(acc == op.acc); // aborted before the first block
}

// Outputs of vdpbf16ps measured on an AMD EPYC (Zen 4) for one pair: {acc, a_even, a_odd,
// w_even, w_odd, result}, i.e. two steps of one chain, the odd element first. They separate
// DAZ, and FTZ with tininess after rounding, from their alternatives.
TEST_CASE("bf16 step model matches measured vdpbf16ps results", "[mxu]") {
    struct Case {
        uint32_t acc;
        uint16_t a_even, a_odd, w_even, w_odd;
        uint32_t result;
    };
    const Case cases[] = {
        {0x007fffff, 0x9bf4, 0xa1e2, 0x947c, 0x1380, 0x00000000},
        {0x80800001, 0x0000, 0x9f00, 0x1500, 0x9587, 0x80800000},
        {0x00800000, 0xa092, 0x1a00, 0x19a1, 0x99f9, 0x80000000},
        {0x0015f800, 0x3294, 0xb294, 0x0c1a, 0x0c18, 0x00000000},
        {0x803c4c8f, 0xbb83, 0x3b83, 0x89aa, 0x89ab, 0x82030000},
        {0x808000c6, 0x3e44, 0xbe44, 0xd8dd, 0xd8dd, 0x00000000},
        {0x10674e00, 0xa055, 0x7f80, 0x2f8b, 0x805f, 0x7fc00000},
        {0xf5cd3800, 0xf884, 0x8810, 0xbcc7, 0x5af6, 0x00000000},
    };
    auto f = [](uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); };
    for (const Case &c : cases) {
        CAPTURE(c.acc, c.a_even, c.a_odd, c.w_even, c.w_odd);
        float model = bf16::step(bf16::step(std::bit_cast<float>(c.acc), f(c.a_odd), f(c.w_odd)),
                                 f(c.a_even), f(c.w_even));
        uint32_t bits = std::isnan(model) ? 0x7fc00000u : std::bit_cast<uint32_t>(model);
        CHECK(bits == c.result);
    }
}

// The CPU's feature flags as the kernel reports them in /proc/cpuinfo (not through the
// engine's own detection).
namespace {
std::set<std::string> cpu_flags() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
        if (line.rfind("flags", 0) == 0) {
            std::istringstream words(line.substr(line.find(':') + 1));
            return {std::istream_iterator<std::string>(words),
                    std::istream_iterator<std::string>()};
        }
    return {};
}
} // namespace

TEST_CASE("the AMX kernel set is offered only where the process can run AMX", "[mxu][amx]") {
    // Without all three flags, no AMX.
    const std::set<std::string> flags = cpu_flags();
    const bool flags_have_amx =
        flags.contains("amx_tile") && flags.contains("amx_bf16") && flags.contains("amx_int8");
    if (!flags_have_amx)
        CHECK_FALSE(amx_runnable());
    const std::vector<const RowKernels *> sets = supported_row_kernels();
    const bool offered = std::find(sets.begin(), sets.end(), &kAmxRowKernels) != sets.end();
    CHECK((!offered || amx_runnable()));
    WeightTile tile(64, 16);
    std::vector<uint16_t> w(64 * 16, 0x3f80);
    tile.load(MxuType::Bf16, 64, 16, reinterpret_cast<const uint8_t *>(w.data()), 32);
    CHECK((tile.bf16_amx_pairs() != nullptr) == amx_runnable());
    if (!amx_runnable())
        WARN("this host cannot run AMX: the AMX kernels were compiled but not run");
}

TEST_CASE("every kernel set the CPU's flags call for is offered and passes its check", "[mxu]") {
    // A set that failed its start-up check would be dropped from supported_row_kernels() and
    // the card would fall back to a slower one with every test green: the sets the flags call
    // for must all be there, in this order, and best_row_kernels() the first of them.
    const std::set<std::string> flags = cpu_flags();
    auto has = [&](std::initializer_list<const char *> names) {
        return std::all_of(names.begin(), names.end(),
                           [&](const char *name) { return flags.contains(name); });
    };
    std::vector<std::string> expected;
    if (has({"amx_tile", "amx_bf16", "amx_int8", "avx512f"}) && amx_runnable())
        expected.push_back("amx");
    if (has({"avx512f", "avx512_vnni", "avx512_bf16"}))
        expected.push_back("avx512-bf16");
    if (has({"avx512f", "avx512_vnni"}))
        expected.push_back("avx512-vnni");
    if (has({"avx512f"}))
        expected.push_back("avx512");
    if (has({"avx2", "fma"}))
        expected.push_back("avx2");
    expected.push_back("scalar");
    auto names = [](const std::vector<const RowKernels *> &sets) {
        std::vector<std::string> out;
        for (const RowKernels *set : sets)
            out.push_back(set->name);
        return out;
    };
    CHECK(names(cpu_row_kernels()) == expected);
    CHECK(names(supported_row_kernels()) == expected);
    for (const RowKernels *set : cpu_row_kernels()) {
        CAPTURE(set->name);
        CHECK(kernels_match_model(*set));
    }
    const char *forced = std::getenv("TPU_ENGINE_KERNELS");
    if (!forced || !*forced)
        CHECK(best_row_kernels().name == expected.front());
}
