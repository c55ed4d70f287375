// SPDX-License-Identifier: MIT
// Cycle-accurate weight-stationary systolic array: weight shift-in, skewed activation flow to
// the right, partial sums flowing down, fill and drain, one synchronous update per cycle.
#include "mxu/systolic_array.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

#include "fp_env.hpp"
#include "mxu/bf16_numerics.hpp"

namespace tpu::engine {
namespace {

// The multiply-accumulate of one PE and how an activation enters the array, per input type.
// kBlocks: columns carry the chains of blocks of rows (bf16, below).
struct Int8Mac {
    static constexpr bool kBlocks = false;
    static uint32_t activation(const uint8_t *row, uint32_t k) {
        return uint32_t(int32_t(int8_t(row[k])));
    }
    static uint32_t mac(uint32_t psum, uint32_t a, uint32_t w) { return psum + a * w; }
    static uint32_t result(uint32_t psum) { return psum; }
};

struct FloatMac {
    static constexpr bool kBlocks = false;
    static uint32_t mac(uint32_t psum, uint32_t a, uint32_t w) {
        float r =
            std::fma(std::bit_cast<float>(a), std::bit_cast<float>(w), std::bit_cast<float>(psum));
        return std::bit_cast<uint32_t>(r);
    }
    // What the bottom of the array writes to the accumulators: NaN made canonical.
    static uint32_t result(uint32_t psum) {
        return (psum & 0x7fffffffu) > 0x7f800000u ? kCanonicalNan : psum;
    }
};

// bf16: the card's step on the chains and the block's combining add (mxu/bf16_numerics.hpp).
struct Bf16Mac : FloatMac {
    static constexpr bool kBlocks = true;
    static float step(float chain, uint32_t a, uint32_t w) {
        return bf16::step(chain, std::bit_cast<float>(a), std::bit_cast<float>(w));
    }
    static uint32_t combine(uint32_t psum, const float (&chain)[2]) {
        return std::bit_cast<uint32_t>(
            bf16::combine(std::bit_cast<float>(psum), chain[0], chain[1]));
    }
    static uint32_t activation(const uint8_t *row, uint32_t k) {
        uint16_t bits;
        std::memcpy(&bits, row + 2 * k, sizeof(bits));
        return uint32_t(bits) << 16;
    }
};

struct Fp32Mac : FloatMac {
    static uint32_t activation(const uint8_t *row, uint32_t k) {
        uint32_t bits;
        std::memcpy(&bits, row + 4 * k, sizeof(bits));
        return bits;
    }
};

} // namespace

SystolicArray::SystolicArray(uint32_t rows, uint32_t cols)
    : cols_(cols), grid_(uint64_t(rows) * cols), next_(uint64_t(rows) * cols) {}

uint64_t SystolicArray::load_weights(const WeightTile &tile) {
    type_ = tile.type();
    k_ = tile.k();
    n_ = tile.n();
    for (Pe &p : grid_)
        p = Pe{};
    for (uint32_t cycle = 0; cycle < k_; cycle++) {
        for (uint32_t k = k_ - 1; k > 0; k--)
            for (uint32_t n = 0; n < n_; n++)
                pe(grid_, k, n).weight = pe(grid_, k - 1, n).weight;
        const uint32_t *entering = tile.words() + uint64_t(k_ - 1 - cycle) * n_;
        for (uint32_t n = 0; n < n_; n++)
            pe(grid_, 0, n).weight = entering[n];
    }
    next_ = grid_;
    return k_;
}

std::optional<uint64_t> SystolicArray::run(const MatmulArgs &args, const std::atomic<bool> *abort) {
    FpEnvGuard fp_env;
    if (args.rows > 1 && args.acc_stride < 4 * uint64_t(n_)) {
        // Overlapping accumulator rows depend on each other: one row per pass, ascending m.
        uint64_t cycles = 0;
        MatmulArgs one = args;
        one.rows = 1;
        one.row_group = 0;
        for (uint32_t m = 0; m < args.rows; m++) {
            one.src = args.src_row(m);
            one.acc = args.acc + m * args.acc_stride;
            const std::optional<uint64_t> pass = run_pass(one, abort);
            if (!pass)
                return std::nullopt;
            cycles += *pass;
        }
        return cycles;
    }
    return run_pass(args, abort);
}

std::optional<uint64_t> SystolicArray::run_pass(const MatmulArgs &args,
                                                const std::atomic<bool> *abort) {
    switch (type_) {
    case MxuType::Int8:
        return run_with<Int8Mac>(args, abort);
    case MxuType::Bf16:
        return run_with<Bf16Mac>(args, abort);
    default:
        return run_with<Fp32Mac>(args, abort);
    }
}

template <class Mac>
std::optional<uint64_t> SystolicArray::run_with(const MatmulArgs &args,
                                                const std::atomic<bool> *abort) {
    constexpr uint64_t kAbortCheckCycles = 256;
    const int64_t m_count = args.rows;
    const uint64_t cycles = uint64_t(args.rows) + k_ + n_ - 1;
    auto acc_word = [&](int64_t m, uint32_t n) { return args.acc + m * args.acc_stride + 4 * n; };

    for (uint64_t t = 0; t < cycles; t++) {
        if (abort && t % kAbortCheckCycles == 0 && abort->load(std::memory_order_relaxed))
            return std::nullopt;
        // Drain: the bottom PEs computed row m = t - 1 - (K - 1) - n last cycle.
        for (uint32_t n = 0; n < n_; n++) {
            const Pe &bottom = pe(grid_, k_ - 1, n);
            if (bottom.valid) {
                int64_t m = int64_t(t) - 1 - (k_ - 1) - n;
                uint32_t result = Mac::result(bottom.psum);
                std::memcpy(acc_word(m, n), &result, sizeof(result));
            }
        }
        // Compute: every PE latches its inputs from the previous cycle's state.
        for (uint32_t k = 0; k < k_; k++) {
            for (uint32_t n = 0; n < n_; n++) {
                Pe &out = pe(next_, k, n);
                int64_t m = int64_t(t) - k - n; // the row arriving now, if any
                if (n == 0) {
                    // Skewed injection: array row k takes row m's element k at cycle m + k.
                    out.valid = m >= 0 && m < m_count;
                    if (out.valid)
                        out.act = Mac::activation(args.src_row(uint32_t(m)), k);
                } else {
                    out.valid = pe(grid_, k, n - 1).valid;
                    out.act = pe(grid_, k, n - 1).act;
                }
                if (!out.valid)
                    continue;
                uint32_t psum_in = 0; // +0.0f or integer 0
                if (k > 0)
                    psum_in = pe(grid_, k - 1, n).psum;
                else if (args.accumulate)
                    std::memcpy(&psum_in, acc_word(m, n), sizeof(psum_in));
                if constexpr (Mac::kBlocks) {
                    // The block's chains: +0 at its first row, else from the PE above.
                    const bool first = k % bf16::kBlock == 0;
                    out.chain[0] = first ? 0.0f : pe(grid_, k - 1, n).chain[0];
                    out.chain[1] = first ? 0.0f : pe(grid_, k - 1, n).chain[1];
                    out.chain[k % 2] = Mac::step(out.chain[k % 2], out.act, out.weight);
                    const bool last = k % bf16::kBlock == bf16::kBlock - 1 || k + 1 == k_;
                    out.psum = last ? Mac::combine(psum_in, out.chain) : psum_in;
                } else {
                    out.psum = Mac::mac(psum_in, out.act, out.weight);
                }
            }
        }
        std::swap(grid_, next_);
    }
    return cycles;
}

} // namespace tpu::engine
