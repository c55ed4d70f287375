// SPDX-License-Identifier: MIT
// WeightTile: the K x N weights held by the systolic array after LOAD_W, widened once at load
// time to 32-bit words (int8 sign-extended to int32, bf16 shifted into an fp32 bit pattern, fp32
// as is) and packed row-major with stride N. Storage is sized for the full array at construction.
// A tile is filled one source row at a time, so a LOAD_W from host memory can stream it in; the
// source is either W row by row (K rows of N elements) or transposed (N rows of K elements).
// finish_load() also packs int8 tiles for the AVX512-VNNI kernels: quads of 4 consecutive k per
// column, with the column sums they need.
#pragma once

#include <cstdint>
#include <vector>

#include "mxu_types.hpp"

namespace tpu::engine {

class WeightTile {
  public:
    WeightTile(uint32_t max_rows, uint32_t max_cols);

    // Starts loading a k x n tile of type (k, n within the maximum); the tile counts as not
    // loaded until finish_load().
    void begin_load(MxuType type, uint32_t k, uint32_t n, bool transposed);
    // Stores source row r: W[r][0..n) from n elements, or transposed W[0..k)[r] from k elements.
    void load_row(uint32_t r, const uint8_t *src);
    void finish_load();

    // All rows at once: row r of the source at src + r * stride.
    void load(MxuType type, uint32_t k, uint32_t n, const uint8_t *src, uint64_t stride,
              bool transposed = false);
    void unload() { loaded_ = false; }

    bool loaded() const { return loaded_; }
    MxuType type() const { return type_; }
    uint32_t k() const { return k_; }
    uint32_t n() const { return n_; }
    // Source rows of the tile being loaded: k, or n when transposed.
    uint32_t source_rows() const { return transposed_ ? n_ : k_; }
    // Word of W[k][n] at words()[k * n() + n].
    const uint32_t *words() const { return words_.data(); }
    // int8 only: ceil(K / 4) x N dwords; dword q * n() + n holds the bytes W[4q + i][n] for
    // i = 0..3 (zero for 4q + i >= K), the operand layout of vpdpbusd.
    const uint32_t *int8_quads() const { return quads_.data(); }
    // int8 only: -128 * sum over k of W[k][n] for each column n (wrapping), which corrects a
    // product of activations biased by +128 to unsigned bytes.
    const int32_t *int8_bias() const { return bias_.data(); }

  private:
    void pack_int8_quads();

    std::vector<uint32_t> words_;
    std::vector<uint32_t> quads_;
    std::vector<int32_t> bias_;
    bool loaded_ = false;
    bool transposed_ = false;
    MxuType type_ = MxuType::Int8;
    uint32_t k_ = 0;
    uint32_t n_ = 0;
};

} // namespace tpu::engine
