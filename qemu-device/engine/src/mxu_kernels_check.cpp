// SPDX-License-Identifier: MIT
// The bf16 start-up check: operands drawn (with a fixed seed) from pools of values whose
// products and sums land on the cases where implementations could differ, run as MATMULs with
// ACCUMULATE over even and odd K, compared bit for bit with the scalar kernel.
#include "mxu_kernels_check.hpp"

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

// One MATMUL with ACCUMULATE of an m x k by k x n problem on both kernels.
bool same_on(const RowKernels &kernels, Lcg &rng, uint32_t m, uint32_t k, uint32_t n) {
    std::vector<uint16_t> a(uint64_t(m) * k), w(uint64_t(k) * n);
    for (uint16_t &x : a)
        x = rng.next() % 4 ? kBf16Pool[rng.next() % std::size(kBf16Pool)] : uint16_t(rng.next());
    for (uint16_t &x : w)
        x = rng.next() % 4 ? kBf16Pool[rng.next() % std::size(kBf16Pool)] : uint16_t(rng.next());
    std::vector<uint32_t> start(uint64_t(m) * n);
    for (uint32_t &x : start)
        x = rng.next() % 4 ? kAccPool[rng.next() % std::size(kAccPool)] : rng.next();

    WeightTile tile(k, n);
    tile.load(MxuType::Bf16, k, n, reinterpret_cast<const uint8_t *>(w.data()), 2 * uint64_t(n));
    std::vector<uint32_t> got = start, want = start;
    MatmulArgs args;
    args.src = reinterpret_cast<const uint8_t *>(a.data());
    args.src_stride = 2 * uint64_t(k);
    args.acc_stride = 4 * uint64_t(n);
    args.rows = m;
    args.accumulate = true;
    args.acc = reinterpret_cast<uint8_t *>(got.data());
    kernels.bf16(tile, args, 0, m, 0, n);
    args.acc = reinterpret_cast<uint8_t *>(want.data());
    kScalarRowKernels.bf16(tile, args, 0, m, 0, n);
    return got == want;
}

} // namespace

bool bf16_kernel_matches_model(const RowKernels &kernels) {
    FpEnvGuard fp_env;
    Lcg rng{0x5eed};
    // Columns cover whole and masked vectors; K odd and even, one pair and several.
    for (uint32_t k : {1u, 2u, 3u, 8u, 11u})
        for (int round = 0; round < 4; round++)
            if (!same_on(kernels, rng, 13, k, 67))
                return false;
    return true;
}

} // namespace tpu::engine
