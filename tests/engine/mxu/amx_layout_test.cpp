// SPDX-License-Identifier: MIT
// The AMX kernels' walk (mxu/kernels/amx/amx_block.hpp) on a software model of the AMX tile unit,
// so that on hosts without AMX their activation packing, use of the WeightTile layouts, K, M
// and N padding, partial tiles and accumulator buffers are still checked against the scalar
// kernels, bit for bit. The model computes tdpbf16ps as the golden vectors' README states it
// (per output, the even and odd chains over the tile's 16 pairs, then one add) and tdpbssd as
// exact int32 sums; the hardware's own arithmetic is what the golden test and the start-up
// check verify where AMX runs.
#include <catch2/catch.hpp>

#include <bit>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "mxu/bf16_numerics.hpp"
#include "mxu/kernels/amx/amx_block.hpp"
#include "mxu/weight_tile.hpp"

using namespace tpu::engine;

namespace {

// Eight tiles of 16 rows x 64 bytes.
struct ModelTiles {
    static inline thread_local uint8_t tmm[8][amx::kTileRows][amx::kRowBytes];
    static inline thread_local bool configured = false;

    static void config() { configured = true; }
    static void release() { configured = false; }
    template <int T> static void load(const void *p, uint64_t stride) {
        REQUIRE(configured);
        for (uint32_t r = 0; r < amx::kTileRows; r++)
            std::memcpy(tmm[T][r], static_cast<const uint8_t *>(p) + r * stride, amx::kRowBytes);
    }
    template <int T> static void store(void *p, uint64_t stride) {
        REQUIRE(configured);
        for (uint32_t r = 0; r < amx::kTileRows; r++)
            std::memcpy(static_cast<uint8_t *>(p) + r * stride, tmm[T][r], amx::kRowBytes);
    }
    template <int T> static void zero() {
        REQUIRE(configured);
        std::memset(tmm[T], 0, sizeof(tmm[T]));
    }
    template <class Op, int C, int A, int W> static void dot() {
        for (uint32_t m = 0; m < 16; m++)
            for (uint32_t n = 0; n < 16; n++) {
                uint32_t c;
                std::memcpy(&c, &tmm[C][m][4 * n], 4);
                if constexpr (Op::kFloat) {
                    float chain[2] = {0.0f, 0.0f};
                    for (uint32_t i = 0; i < 32; i++) {
                        uint16_t a, w;
                        std::memcpy(&a, &tmm[A][m][2 * i], 2);
                        std::memcpy(&w, &tmm[W][i / 2][4 * n + 2 * (i % 2)], 2);
                        chain[i % 2] =
                            bf16::step(chain[i % 2], std::bit_cast<float>(uint32_t(a) << 16),
                                       std::bit_cast<float>(uint32_t(w) << 16));
                    }
                    c = std::bit_cast<uint32_t>(
                        bf16::combine(std::bit_cast<float>(c), chain[0], chain[1]));
                } else {
                    for (uint32_t i = 0; i < 64; i++)
                        c += uint32_t(int32_t(int8_t(tmm[A][m][i])) *
                                      int32_t(int8_t(tmm[W][i / 4][4 * n + i % 4])));
                }
                std::memcpy(&tmm[C][m][4 * n], &c, 4);
            }
    }
};

} // namespace

TEST_CASE("the AMX kernels' walk on a model of the tiles equals the scalar kernels", "[amx]") {
    std::mt19937_64 rng(31);
    for (MxuType type : {MxuType::Int8, MxuType::Bf16}) {
        // The last cases take the whole-step path: activations and accumulators in place,
        // also with rows in groups (a group boundary inside a tile packs that step).
        for (auto [m, k, n, accumulate, group] : {std::tuple{1u, 1u, 1u, false, 0u},
                                                  {16u, 32u, 16u, true, 0u},
                                                  {37u, 45u, 33u, true, 0u},
                                                  {50u, 130u, 70u, false, 0u},
                                                  {33u, 64u, 17u, true, 0u},
                                                  {5u, 200u, 48u, true, 0u},
                                                  {64u, 128u, 64u, true, 0u},
                                                  {96u, 64u, 96u, false, 0u},
                                                  {80u, 192u, 40u, true, 24u}}) {
            const uint32_t es = mxu_elem_bytes(type);
            const uint32_t groups = group ? (m + group - 1) / group : 1;
            const uint64_t group_stride = uint64_t(group + 1) * (k + 3) * es;
            std::vector<uint8_t> a(groups * group_stride + uint64_t(m) * (k + 3) * es),
                w(uint64_t(k) * n * es);
            for (uint8_t &x : a)
                x = uint8_t(rng());
            for (uint8_t &x : w)
                x = uint8_t(rng());
            WeightTile tile(k, n, true); // with the AMX layouts, as where AMX runs
            tile.load(type, k, n, w.data(), uint64_t(n) * es);
            const uint64_t acc_stride = 4 * uint64_t(n) + 8;
            std::vector<uint32_t> start(m * acc_stride / 4);
            for (uint32_t &x : start)
                x = type == MxuType::Int8 ? uint32_t(rng())
                                          : 0x3f800000u ^ uint32_t(rng() & 0x807fffff);
            std::vector<uint32_t> got = start, want = start;
            MatmulArgs args;
            args.src = a.data();
            args.src_stride = uint64_t(k + 3) * es;
            args.row_group = group;
            args.group_stride = group_stride;
            args.acc_stride = acc_stride;
            args.rows = m;
            args.accumulate = accumulate;
            CAPTURE(int(type), m, k, n, accumulate, group);
            args.acc = reinterpret_cast<uint8_t *>(got.data());
            if (type == MxuType::Int8)
                amx::block<ModelTiles, amx::Int8Amx>(tile, args, 0, m, 0, n);
            else
                amx::block<ModelTiles, amx::Bf16Amx>(tile, args, 0, m, 0, n);
            args.acc = reinterpret_cast<uint8_t *>(want.data());
            kScalarRowKernels.for_type(type)(tile, args, 0, m, 0, n);
            CHECK(got == want);
            // A sub-block of rows and columns leaves the rest alone.
            std::vector<uint32_t> part = start, part_want = start;
            args.acc = reinterpret_cast<uint8_t *>(part.data());
            if (type == MxuType::Int8)
                amx::block<ModelTiles, amx::Int8Amx>(tile, args, m / 3, m, n / 4, n / 2 + 1);
            else
                amx::block<ModelTiles, amx::Bf16Amx>(tile, args, m / 3, m, n / 4, n / 2 + 1);
            args.acc = reinterpret_cast<uint8_t *>(part_want.data());
            kScalarRowKernels.for_type(type)(tile, args, m / 3, m, n / 4, n / 2 + 1);
            CHECK(part == part_want);
        }
    }
}
