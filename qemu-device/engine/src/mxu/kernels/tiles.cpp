// SPDX-License-Identifier: MIT
// The tile walk of the vector MXU kernels: activation packing, then tiles over rows and
// columns, one chunk of steps at a time. Plain code: the SIMD work happens in the TileFns.
#include "mxu/kernels/tiles.hpp"

#include <algorithm>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tpu::engine::tiles {
namespace {

// Copies count 32-bit words in blocks of 64 bytes: for the few hundred bytes of a chunk row
// this beats the string copy that a memcpy of variable size becomes.
void copy_words(uint32_t *__restrict out, const uint8_t *__restrict src, uint32_t count) {
    constexpr uint32_t kBlock = 16;
    uint32_t i = 0;
    for (; i + kBlock <= count; i += kBlock)
        std::memcpy(out + i, src + 4 * uint64_t(i), 4 * kBlock);
    std::memcpy(out + i, src + 4 * uint64_t(i), 4 * uint64_t(count - i));
}

// Packs steps [s0, s0 + count) of rows [m, m + rows) into a[r * kStepChunk + (s - s0)].
void pack(Operand operand, const MatmulArgs &args, uint32_t k, uint32_t m, uint32_t rows,
          uint32_t s0, uint32_t count, uint32_t *a) {
    for (uint32_t r = 0; r < rows; r++) {
        const uint8_t *__restrict src = args.src_row(m + r);
        uint32_t *__restrict out = a + r * kStepChunk;
        switch (operand) {
        case Operand::Int8Words:
            for (uint32_t s = 0; s < count; s++)
                out[s] = uint32_t(int32_t(int8_t(src[s0 + s])));
            break;
        case Operand::Int8Quads: {
            // Whole quads, then the last one padded (padding meets zero weights).
            const uint32_t whole = std::min(count, k / 4 - std::min(k / 4, s0));
            copy_words(out, src + 4 * uint64_t(s0), whole);
            if (whole < count) {
                out[whole] = 0;
                std::memcpy(&out[whole], src + 4 * uint64_t(s0 + whole), k % 4);
            }
            for (uint32_t s = 0; s < count; s++)
                out[s] ^= 0x80808080u;
            break;
        }
        case Operand::Bf16: {
            const uint8_t *__restrict row = src + 2 * uint64_t(s0);
            for (uint32_t s = 0; s < count; s++) {
                uint16_t bits;
                std::memcpy(&bits, row + 2 * s, sizeof(bits));
                out[s] = uint32_t(bits) << 16;
            }
            break;
        }
        case Operand::Bf16Quads: {
            // Whole quads of k as two words, then the last one padded with +0.
            const uint32_t whole = std::min(count, (k / 4) * 2 - std::min((k / 4) * 2, s0));
            uint32_t s = 0;
#if defined(__SSE2__)
            // Two quads at a time: halfwords (x0 .. x3) become (x2, x0, x3, x1), i.e. the
            // words (x0 high, x2 low) and (x1 high, x3 low).
            for (; s + 4 <= whole; s += 4) {
                __m128i v =
                    _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 4 * uint64_t(s0 + s)));
                v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0x72), 0x72);
                _mm_storeu_si128(reinterpret_cast<__m128i *>(out + s), v);
            }
#endif
            for (; s < whole; s += 2) {
                uint64_t quad;
                std::memcpy(&quad, src + 4 * uint64_t(s0 + s), sizeof(quad));
                out[s] = uint32_t(quad << 16) | uint32_t(quad >> 32 & 0xffff);
                out[s + 1] = uint32_t(quad & 0xffff0000u) | uint32_t(quad >> 48);
            }
            if (whole < count) {
                uint16_t tail[4] = {};
                const uint32_t k0 = 2 * (s0 + whole);
                std::memcpy(tail, src + 2 * uint64_t(k0), 2 * uint64_t(k - k0));
                out[whole] = uint32_t(tail[0]) << 16 | tail[2];
                out[whole + 1] = uint32_t(tail[1]) << 16 | tail[3];
            }
            break;
        }
        case Operand::Fp32:
            copy_words(out, src + 4 * uint64_t(s0), count);
            break;
        }
    }
}

// Whether fp32 activation rows [p0, p1) can be read in place as a panel: 4-byte aligned, in
// one group of rows (so evenly spaced), a whole number of words apart.
bool direct_rows(Operand operand, const MatmulArgs &args, uint32_t p0, uint32_t p1) {
    if (operand != Operand::Fp32 || args.src_stride % 4 != 0 ||
        reinterpret_cast<uintptr_t>(args.src_row(p0)) % 4 != 0)
        return false;
    return args.row_group == 0 || p0 / args.row_group == (p1 - 1) / args.row_group;
}

// Brings the data of the next chunk into the cache a few lines at a time, between the tiles of
// the current one: the activations of its rows (rows of large strided matrices, which the
// hardware prefetchers do not follow from row to row) and, when it starts a new panel, that
// panel's accumulators. Issuing them all at once would overflow the miss queue and drop most.
class ChunkPrefetch {
  public:
    static constexpr uint64_t kLine = 64;

    // Rows [m0, m1) of the next chunk: bytes [src_offset, src_offset + src_bytes) of each
    // activation row and, if acc_bytes, bytes [acc_offset, acc_offset + acc_bytes) of each
    // accumulator row; spread over `calls` calls of step().
    ChunkPrefetch(const MatmulArgs &args, uint32_t m0, uint32_t m1, uint64_t src_offset,
                  uint64_t src_bytes, uint64_t acc_offset, uint64_t acc_bytes, uint32_t calls)
        : args_(args), m0_(m0), rows_(m1 - m0), src_offset_(src_offset),
          src_lines_((src_bytes + kLine - 1) / kLine), acc_offset_(acc_offset),
          acc_lines_((acc_bytes + kLine - 1) / kLine) {
        const uint64_t lines = uint64_t(rows_) * (src_lines_ + acc_lines_);
        per_call_ = calls ? (lines + calls - 1) / calls : lines;
    }

    void step() {
        for (uint64_t i = 0; i < per_call_ && row_ < rows_; i++) {
            const uint32_t m = m0_ + row_;
            if (line_ < src_lines_)
                __builtin_prefetch(args_.src_row(m) + src_offset_ + line_ * kLine);
            else
                __builtin_prefetch(args_.acc + m * args_.acc_stride + acc_offset_ +
                                       (line_ - src_lines_) * kLine,
                                   1);
            if (++line_ == src_lines_ + acc_lines_) {
                line_ = 0;
                row_++;
            }
        }
    }

  private:
    const MatmulArgs &args_;
    uint32_t m0_, rows_;
    uint64_t src_offset_, src_lines_, acc_offset_, acc_lines_;
    uint64_t per_call_ = 0;
    uint32_t row_ = 0; // the next line to prefetch
    uint64_t line_ = 0;
};

} // namespace

void run_tiles(const TileSet &set, Operand operand, const WeightTile &tile, const MatmulArgs &args,
               uint32_t m0, uint32_t m1, uint32_t n0, uint32_t n1) {
    const uint32_t k = tile.k();
    const uint32_t n = tile.n();
    const bool quads = operand == Operand::Int8Quads;
    const bool chains = operand == Operand::Bf16Quads;
    const uint32_t steps = quads ? (k + 3) / 4 : chains ? (k + 3) / 4 * 2 : k;
    const uint32_t *w = quads ? tile.int8_quads() : chains ? tile.bf16_quads() : tile.words();
    const uint32_t tile_cols = set.vectors * set.lanes;
    // Bytes of an activation row per step.
    const uint64_t step_bytes = quads || chains ? 4 : mxu_elem_bytes(tile.type());
    // The activations of up to kPanelRows rows: a[row][step].
    alignas(64) uint32_t a[kPanelRows * kStepChunk];

    // Steps of weights walked by every panel of the block before the next range: a range's
    // weights stay in the L2 cache while the panels go through them.
    const uint32_t range_steps = std::max<uint32_t>(
        kStepChunk, uint32_t(kL2WeightBytes / (4 * uint64_t(n)) / kStepChunk * kStepChunk));

    for (uint32_t r0 = 0; r0 < steps; r0 += range_steps) {
        const uint32_t r1 = std::min(steps, r0 + range_steps);
        for (uint32_t p0 = m0; p0 < m1; p0 += kPanelRows) {
            const uint32_t p1 = std::min(m1, p0 + kPanelRows);
            const uint32_t tile_calls =
                (p1 - p0 + set.rows - 1) / set.rows * ((n1 - n0 + tile_cols - 1) / tile_cols);
            // fp32 rows evenly spaced and aligned are broadcast from where they are.
            const bool direct = direct_rows(operand, args, p0, p1);
            const uint64_t panel_stride = direct ? args.src_stride / 4 : kStepChunk;
            for (uint32_t s0 = r0; s0 < r1; s0 += kStepChunk) {
                const uint32_t count = std::min(kStepChunk, r1 - s0);
                const uint32_t *panel = a;
                if (direct)
                    panel = reinterpret_cast<const uint32_t *>(args.src_row(p0)) + s0;
                else
                    pack(operand, args, k, p0, p1 - p0, s0, count, a);
                const bool load_acc = args.accumulate || s0 > 0;
                // The next chunk: further steps of this panel, the first of the range in the
                // next panel, or the first panel's in the next range.
                const bool panel_done = s0 + count >= r1;
                const bool range_done = panel_done && p1 >= m1;
                const uint32_t next_m0 = range_done ? m0 : panel_done ? p1 : p0;
                const uint32_t next_m1 = std::min(m1, next_m0 + kPanelRows);
                const uint32_t next_s0 = range_done ? r1 : panel_done ? r0 : s0 + count;
                const uint32_t next_count =
                    next_s0 < steps ? std::min(kStepChunk, steps - next_s0) : 0;
                ChunkPrefetch prefetch(args, next_m0, next_m1, next_s0 * step_bytes,
                                       next_count * step_bytes, 4 * uint64_t(n0),
                                       panel_done && next_count ? 4 * uint64_t(n1 - n0) : 0,
                                       tile_calls);
                // Columns outermost, so one column panel of weights stays in the L1 cache
                // while every row tile goes through it.
                for (uint32_t c0 = n0; c0 < n1; c0 += tile_cols) {
                    const uint32_t cols = std::min(tile_cols, n1 - c0);
                    const uint32_t vectors = (cols + set.lanes - 1) / set.lanes;
                    const int32_t *bias = quads && s0 == 0 ? tile.int8_bias() + c0 : nullptr;
                    for (uint32_t m = p0; m < p1; m += set.rows) {
                        const uint32_t rows = std::min(set.rows, p1 - m);
                        prefetch.step();
                        set.fn[rows - 1][vectors - 1](panel + (m - p0) * panel_stride, panel_stride,
                                                      count, w + uint64_t(s0) * n + c0, n,
                                                      args.acc + m * args.acc_stride +
                                                          4 * uint64_t(c0),
                                                      args.acc_stride, cols, load_acc, bias);
                    }
                }
            }
        }
    }
}

} // namespace tpu::engine::tiles
