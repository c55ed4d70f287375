// SPDX-License-Identifier: MIT
// WeightTile: the K x N weights held by the systolic array after LOAD_W, widened once at load
// time to 32-bit words (int8 sign-extended to int32, bf16 shifted into an fp32 bit pattern) and
// packed row-major with stride N. Storage is sized for the full array at construction.
#pragma once

#include <cstdint>
#include <vector>

#include "mxu_types.hpp"

namespace tpu::engine {

class WeightTile {
  public:
    WeightTile(uint32_t max_rows, uint32_t max_cols);

    // Loads k x n elements of type; row i at src + i * stride. k, n within the maximum.
    void load(MxuType type, uint32_t k, uint32_t n, const uint8_t *src, uint64_t stride);
    void unload() { loaded_ = false; }

    bool loaded() const { return loaded_; }
    MxuType type() const { return type_; }
    uint32_t k() const { return k_; }
    uint32_t n() const { return n_; }
    // Word of W[k][n] at words()[k * n() + n].
    const uint32_t *words() const { return words_.data(); }

  private:
    std::vector<uint32_t> words_;
    bool loaded_ = false;
    MxuType type_ = MxuType::Int8;
    uint32_t k_ = 0;
    uint32_t n_ = 0;
};

} // namespace tpu::engine
