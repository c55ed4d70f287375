// SPDX-License-Identifier: MIT
// WeightTile: the K x N weights held by the systolic array after LOAD_W, widened once at load
// time to 32-bit words (int8 sign-extended to int32, bf16 shifted into an fp32 bit pattern, fp32
// as is) and packed row-major with stride N. Storage is sized at construction (the full array,
// or a longer chain of tiles for the executor's fused K chains). A tile is filled either one
// source row at a time, so a LOAD_W from host memory can stream it in, or by blocks of rows of
// W, each from its own source (a fused chain concatenates the tiles of several LOAD_Ws along
// k); a source is W row by row (rows of N elements) or transposed (N rows of K elements).
// finish_load() also packs int8 tiles for the AVX512-VNNI kernels: quads of 4 consecutive k per
// column, with the column sums they need, and bf16 tiles for the AVX512-BF16 kernels: pairs of
// k of the same parity (k, k + 2) per column, the layout of the card's even and odd chains,
// and where AMX can run, pairs of consecutive k per column for tdpbf16ps. Packing goes by chunks
// of kLoadChunk rows of W, so the chunks of a long tile can be filled and packed by several
// threads at once (load_in_chunks()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mxu/kernels/amx/amx.hpp"
#include "mxu/mxu_types.hpp"
#include "thread_pool.hpp"

namespace tpu::engine {

class WeightTile {
  public:
    // amx_layout: also pack bf16 tiles for the AMX kernels (bf16_amx_pairs()).
    WeightTile(uint32_t max_rows, uint32_t max_cols, bool amx_layout = amx_runnable());

    // Whether a k x n tile fits the storage.
    bool fits(uint32_t k, uint32_t n) const;

    // Starts loading a k x n tile of type (fits(k, n)); the tile counts as not loaded until
    // finish_load(). transposed applies to load_row().
    void begin_load(MxuType type, uint32_t k, uint32_t n, bool transposed);
    // Stores source row r: W[r][0..n) from n elements, or transposed W[0..k)[r] from k elements.
    void load_row(uint32_t r, const uint8_t *src);
    // Stores rows [k0, k0 + rows) of W from a source whose row i is at src + i * stride: rows
    // of n elements, or when transposed n rows of `rows` elements (W[k0 + i][j] at row j).
    void load_rows(uint32_t k0, uint32_t rows, const uint8_t *src, uint64_t stride,
                   bool transposed);
    // Packs every chunk and ends the load.
    void finish_load();
    // The same in parts, each chunk packed once its rows are stored (any chunk on any thread),
    // then end_load() once all are.
    static constexpr uint32_t kLoadChunk = 64; // a multiple of every packing's block of k
    uint32_t load_chunks() const { return (k_ + kLoadChunk - 1) / kLoadChunk; }
    void pack_chunk(uint32_t chunk);
    void end_load();
    // Stores rows [k0, k0 + rows) of W from words already widened (rows of N words).
    void load_words(uint32_t k0, uint32_t rows, const uint32_t *words);

    // All rows at once: row r of the source at src + r * stride.
    void load(MxuType type, uint32_t k, uint32_t n, const uint8_t *src, uint64_t stride,
              bool transposed = false);
    void unload() { loaded_ = false; }

    bool loaded() const { return loaded_; }
    uint32_t max_rows() const { return max_rows_; }
    MxuType type() const { return type_; }
    uint32_t k() const { return k_; }
    uint32_t n() const { return n_; }
    // Word of W[k][n] at words()[k * n() + n].
    const uint32_t *words() const { return words_.data(); }
    // int8 only: ceil(K / 4) x N dwords; dword q * n() + n holds the bytes W[4q + i][n] for
    // i = 0..3 (zero for 4q + i >= K), the operand layout of vpdpbusd.
    const uint32_t *int8_quads() const { return packed_.data(); }
    // bf16 only: 2 ceil(K / 4) x N dwords; for the quad q of k (4q .. 4q + 3), dword
    // 2q * n() + n holds the bf16 bits of W[4q][n] (high half) and W[4q + 2][n] (low half), and
    // dword (2q + 1) * n() + n those of W[4q + 1][n] and W[4q + 3][n]; -0 for k >= K. vdpbf16ps
    // adds the high product first, so each dword is two steps of one chain (mxu/bf16_numerics.hpp).
    const uint32_t *bf16_quads() const { return packed_.data(); }
    // bf16 only, and only if the tile was built with amx_layout (else null): the
    // tdpbf16ps operand layout, 16 ceil(K / 32) x N dwords; dword p * n() + n holds the bf16
    // bits of W[2p][n] (low half) and W[2p + 1][n] (high half), -0 for k >= K. Like
    // int8_quads() (whose rows past ceil(K / 4) are zero up to 16 ceil(K / 64)), readable 16
    // dwords past its last row, so AMX tiles of 16 columns may overrun N.
    const uint32_t *bf16_amx_pairs() const { return amx_.empty() ? nullptr : amx_.data(); }
    // int8 only: -128 * sum over k of W[k][n] for each column n (wrapping), which corrects a
    // product of activations biased by +128 to unsigned bytes.
    const int32_t *int8_bias() const { return bias_.data(); }

  private:
    static uint64_t packed_rows(uint32_t k);
    static uint64_t amx_rows(uint32_t k);

    uint32_t max_rows_;
    std::vector<uint32_t> words_;
    std::vector<uint32_t> packed_; // int8 or bf16 quads
    std::vector<uint32_t> amx_;    // bf16 pairs for AMX
    std::vector<int32_t> bias_;
    std::vector<uint32_t> chunk_sums_; // int8: each chunk's column sums
    bool loaded_ = false;
    bool transposed_ = false;
    MxuType type_ = MxuType::Int8;
    uint32_t k_ = 0;
    uint32_t n_ = 0;
};

// Loads a begun tile chunk by chunk on the pool: fill(k0, k1) stores rows [k0, k1) of W (with
// load_rows() or load_words()), then the chunk is packed; the tile is loaded on return.
template <class Fill> void load_in_chunks(ThreadPool &pool, WeightTile &tile, Fill &&fill) {
    auto task = [&](uint32_t chunk) {
        const uint32_t k0 = chunk * WeightTile::kLoadChunk;
        fill(k0, std::min(tile.k(), k0 + WeightTile::kLoadChunk));
        tile.pack_chunk(chunk);
    };
    const uint32_t chunks = tile.load_chunks();
    if (pool.size() > 1 && chunks > 1) {
        pool.parallel_for(chunks, task);
    } else {
        for (uint32_t c = 0; c < chunks; c++)
            task(c);
    }
    tile.end_load();
}

} // namespace tpu::engine
