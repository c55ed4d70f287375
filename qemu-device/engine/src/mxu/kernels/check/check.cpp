// SPDX-License-Identifier: MIT
// The start-up check: operands drawn (with a fixed seed) from pools of values whose products
// and sums land on the cases where implementations could differ, run as MATMULs with
// ACCUMULATE over K within, across and on the edges of the blocks of the kernels (32 k for
// bf16, 64 for AMX int8) and of their packing chunks, compared bit for bit with the scalar
// kernels; then the embedded AMX golden cases (mxu/kernels/check/golden_cases.inc).
#include "mxu/kernels/check/check.hpp"

#include <cstring>
#include <vector>

#include "fp_env.hpp"

namespace tpu::engine {
namespace {

// bf16 operands: zeros, subnormals, the smallest normal, powers of two whose products are near
// 2^-126 .. 2^-152 (2^-76 x 2^-76 = 2^-152), ones, the largest finite, infinities, a NaN.
constexpr uint16_t kBf16Pool[] = {0x0000, 0x8000, 0x0001, 0x807f, 0x0080, 0x8080, 0x00ff, 0x1980,
                                  0x9980, 0x19c0, 0x99c0, 0x1a00, 0x1a40, 0x9a00, 0x1f80, 0x9f80,
                                  0x2000, 0x3f80, 0xbf80, 0x3fc0, 0xbf81, 0x3b83, 0x89ab, 0x5f00,
                                  0xdf00, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc1, 0x2080, 0xa0ff};

// Starting accumulators: zeros, subnormals, 2^-126 and its neighbours, ones, the largest
// finite, infinity.
constexpr uint32_t kAccPool[] = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000,
                                 0x80800000, 0x00800001, 0x80800001, 0x00800002, 0x00ffffff,
                                 0x3f800000, 0xbf800000, 0x34000000, 0x7f7fffff, 0xff7fffff,
                                 0x7f800000, 0x0c000000, 0x8c000001};

struct Lcg {
    uint64_t state;
    uint32_t next() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return uint32_t(state >> 33);
    }
};

// Operands of one dtype: bf16 from the pool (or any bits), int8 any byte, fp32 the pool's
// values widened (or any bits).
void fill(MxuType type, Lcg &rng, std::vector<uint8_t> &bytes) {
    for (size_t i = 0; i < bytes.size(); i += mxu_elem_bytes(type)) {
        const uint32_t bits = rng.next() % 4
                                  ? uint32_t(kBf16Pool[rng.next() % std::size(kBf16Pool)]) << 16
                                  : rng.next();
        if (type == MxuType::Int8)
            bytes[i] = uint8_t(rng.next());
        else if (type == MxuType::Bf16)
            std::memcpy(&bytes[i], reinterpret_cast<const uint8_t *>(&bits) + 2, 2);
        else
            std::memcpy(&bytes[i], &bits, 4);
    }
}

// One MATMUL with ACCUMULATE of an m x k by k x n problem on both kernels.
bool same_on(const RowKernels &kernels, MxuType type, Lcg &rng, uint32_t m, uint32_t k,
             uint32_t n) {
    const uint32_t es = mxu_elem_bytes(type);
    std::vector<uint8_t> a(uint64_t(m) * k * es), w(uint64_t(k) * n * es);
    fill(type, rng, a);
    fill(type, rng, w);
    std::vector<uint32_t> start(uint64_t(m) * n);
    for (uint32_t &x : start)
        x = type == MxuType::Int8 || rng.next() % 4 == 0
                ? rng.next()
                : kAccPool[rng.next() % std::size(kAccPool)];

    WeightTile tile(k, n);
    tile.load(type, k, n, w.data(), uint64_t(n) * es);
    std::vector<uint32_t> got = start, want = start;
    MatmulArgs args;
    args.src = a.data();
    args.src_stride = uint64_t(k) * es;
    args.acc_stride = 4 * uint64_t(n);
    args.rows = m;
    args.accumulate = true;
    args.acc = reinterpret_cast<uint8_t *>(got.data());
    kernels.for_type(type)(tile, args, 0, m, 0, n);
    args.acc = reinterpret_cast<uint8_t *>(want.data());
    kScalarRowKernels.for_type(type)(tile, args, 0, m, 0, n);
    return got == want;
}

// An embedded golden case (16 x 16 outputs), run as 32 rows of the case twice over (a kernel
// set may hand blocks of fewer rows to another kernel): same bits as AMX, or NaN where AMX gave
// NaN.
bool matches_golden(const RowKernels &kernels, const golden::Case &c) {
    constexpr uint32_t kDim = 16, kRows = 2 * kDim;
    WeightTile tile(c.k, kDim);
    tile.load(MxuType::Bf16, c.k, kDim, reinterpret_cast<const uint8_t *>(c.w), 2 * kDim);
    std::vector<uint32_t> acc(c.c_in, c.c_in + kDim * kDim);
    acc.insert(acc.end(), c.c_in, c.c_in + kDim * kDim);
    MatmulArgs args;
    args.src = reinterpret_cast<const uint8_t *>(c.a);
    args.src_stride = 2 * uint64_t(c.k);
    args.row_group = kDim; // rows 16-31 read rows 0-15 again
    args.group_stride = 0;
    args.acc = reinterpret_cast<uint8_t *>(acc.data());
    args.acc_stride = 4 * kDim;
    args.rows = kRows;
    args.accumulate = true;
    kernels.bf16(tile, args, 0, kRows, 0, kDim);
    auto nan = [](uint32_t x) { return (x & 0x7fffffffu) > 0x7f800000u; };
    for (uint32_t i = 0; i < kRows * kDim; i++) {
        const uint32_t want = c.c_out[i % (kDim * kDim)];
        if (acc[i] != want && !(nan(acc[i]) && nan(want)))
            return false;
    }
    return true;
}

} // namespace

namespace golden {
#include "mxu/kernels/check/golden_cases.inc"

std::span<const Case> cases() {
    return kCases;
}
} // namespace golden

bool kernels_match_model(const RowKernels &kernels) {
    FpEnvGuard fp_env;
    Lcg rng{0x5eed};
    for (MxuType type : {MxuType::Bf16, MxuType::Int8, MxuType::Fp32}) {
        // Columns cover whole and masked vectors and tiles; K odd and even, within one block,
        // on its edges, over several blocks and packing chunks, ending mid-quad; rows cover
        // whole and partial register and AMX tiles.
        for (uint32_t k : {1u, 2u, 3u, 8u, 11u})
            for (int round = 0; round < 4; round++)
                if (!same_on(kernels, type, rng, 13, k, 67))
                    return false;
        for (uint32_t k : {31u, 32u, 33u, 46u, 64u, 97u, 130u, 259u, 290u})
            if (!same_on(kernels, type, rng, 37, k, 35))
                return false;
    }
    for (const golden::Case &c : golden::cases())
        if (!matches_golden(kernels, c))
            return false;
    return true;
}

} // namespace tpu::engine
