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
// 2 consecutive k per column.
#pragma once

#include <cstdint>
#include <vector>

#include "mxu_types.hpp"

namespace tpu::engine {

class WeightTile {
  public:
    WeightTile(uint32_t max_rows, uint32_t max_cols);

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
    void finish_load();

    // All rows at once: row r of the source at src + r * stride.
    void load(MxuType type, uint32_t k, uint32_t n, const uint8_t *src, uint64_t stride,
              bool transposed = false);
    void unload() { loaded_ = false; }

    bool loaded() const { return loaded_; }
    MxuType type() const { return type_; }
    uint32_t k() const { return k_; }
    uint32_t n() const { return n_; }
    // Word of W[k][n] at words()[k * n() + n].
    const uint32_t *words() const { return words_.data(); }
    // int8 only: ceil(K / 4) x N dwords; dword q * n() + n holds the bytes W[4q + i][n] for
    // i = 0..3 (zero for 4q + i >= K), the operand layout of vpdpbusd.
    const uint32_t *int8_quads() const { return packed_.data(); }
    // bf16 only: ceil(K / 2) x N dwords; dword i * n() + n holds the bf16 bits of W[2i][n] (low
    // half) and W[2i + 1][n] (high half; -0 for 2i + 1 = K), the operand layout of vdpbf16ps.
    const uint32_t *bf16_pairs() const { return packed_.data(); }
    // int8 only: -128 * sum over k of W[k][n] for each column n (wrapping), which corrects a
    // product of activations biased by +128 to unsigned bytes.
    const int32_t *int8_bias() const { return bias_.data(); }

  private:
    std::vector<uint32_t> words_;
    std::vector<uint32_t> packed_; // int8 quads or bf16 pairs
    std::vector<int32_t> bias_;
    bool loaded_ = false;
    bool transposed_ = false;
    MxuType type_ = MxuType::Int8;
    uint32_t k_ = 0;
    uint32_t n_ = 0;
};

} // namespace tpu::engine
