// SPDX-License-Identifier: MIT
// Weight tile loading: widen int8 / bf16 / fp32 weights to 32-bit words once per LOAD_W (one
// loop per source row and dtype), and pack int8 tiles for the VNNI and AMX kernels and bf16
// tiles for the AVX512-BF16 and (where they run) AMX kernels.
#include "mxu/weight_tile.hpp"

#include <algorithm>
#include <cstring>

namespace tpu::engine {
namespace {

// Element i of a source row of type T as a 32-bit word.
template <MxuType T> uint32_t widen(const uint8_t *src, uint64_t i) {
    if constexpr (T == MxuType::Int8) {
        return uint32_t(int32_t(int8_t(src[i])));
    } else if constexpr (T == MxuType::Bf16) {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * i, sizeof(bits));
        return uint32_t(bits) << 16;
    } else {
        uint32_t bits;
        std::memcpy(&bits, src + 4 * i, sizeof(bits));
        return bits;
    }
}

// Widens count elements of a source row into out[i * step].
template <MxuType T>
void widen_row(const uint8_t *__restrict src, uint32_t count, uint32_t *__restrict out,
               uint64_t step) {
    if (step == 1) {
        for (uint32_t i = 0; i < count; i++)
            out[i] = widen<T>(src, i);
        return;
    }
    for (uint32_t i = 0; i < count; i++)
        out[i * step] = widen<T>(src, i);
}

using WidenRowFn = void (*)(const uint8_t *, uint32_t, uint32_t *, uint64_t);

WidenRowFn widen_row_fn(MxuType type) {
    switch (type) {
    case MxuType::Int8:
        return widen_row<MxuType::Int8>;
    case MxuType::Bf16:
        return widen_row<MxuType::Bf16>;
    case MxuType::Fp32:
        break;
    }
    return widen_row<MxuType::Fp32>;
}

// Packs rows [k0, k1) (k0 a multiple of 4) of the bf16 words of a k x n tile for vdpbf16ps on
// the card's chains: per quad q of k and column, the even chain's pair (W[4q] high, W[4q + 2]
// low) in row 2q and the odd chain's (W[4q + 1] high, W[4q + 3] low) in row 2q + 1; k >= K
// reads as -0 (0x8000).
void pack_bf16_quads(const uint32_t *__restrict words, uint32_t k, uint32_t n, uint32_t k0,
                     uint32_t k1, uint32_t *__restrict quads) {
    for (uint32_t q = k0; q < k1; q += 4) {
        const uint32_t *row[4];
        for (uint32_t i = 0; i < 4; i++)
            row[i] = q + i < k ? words + uint64_t(q + i) * n : nullptr;
        uint32_t *even = quads + uint64_t(q / 2) * n;
        uint32_t *odd = even + n;
        auto bits = [](const uint32_t *r, uint32_t j) { return r ? r[j] >> 16 : 0x8000u; };
        for (uint32_t j = 0; j < n; j++) {
            even[j] = bits(row[0], j) << 16 | bits(row[2], j);
            odd[j] = bits(row[1], j) << 16 | bits(row[3], j);
        }
    }
}

// Packs pair rows [p0, p1) of the bf16 words of a k x n tile, pairs (2p, 2p + 1) per column for
// tdpbf16ps, W[2p] in the low half: k >= K reads as -0 (0x8000).
void pack_bf16_amx_pairs(const uint32_t *__restrict words, uint32_t k, uint32_t n, uint32_t p0,
                         uint32_t p1, uint32_t *__restrict pairs) {
    for (uint32_t p = p0; p < p1; p++) {
        const uint32_t *even = 2 * p < k ? words + uint64_t(2 * p) * n : nullptr;
        const uint32_t *odd = 2 * p + 1 < k ? words + uint64_t(2 * p + 1) * n : nullptr;
        uint32_t *out = pairs + uint64_t(p) * n;
        for (uint32_t j = 0; j < n; j++)
            out[j] = (even ? even[j] >> 16 : 0x8000u) | (odd ? odd[j] & 0xffff0000u : 0x80000000u);
    }
}

// Packs rows [k0, k1) (k0 a multiple of 4) of the int8 words of a tile n wide into quads of 4 k
// per column (rows past k1 read as zero weights) and sets sums[j] to the sum of those rows of
// column j (wrapping).
void pack_int8_quads(const uint32_t *__restrict words, uint32_t n, uint32_t k0, uint32_t k1,
                     uint32_t *__restrict quads, uint32_t *__restrict sums) {
    std::fill_n(sums, n, 0);
    uint32_t q = k0;
    for (; q + 4 <= k1; q += 4) {
        const uint32_t *r0 = words + uint64_t(q) * n;
        const uint32_t *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
        uint32_t *out = quads + uint64_t(q / 4) * n;
        for (uint32_t j = 0; j < n; j++) {
            const uint32_t w0 = r0[j], w1 = r1[j], w2 = r2[j], w3 = r3[j];
            out[j] = (w0 & 0xff) | (w1 & 0xff) << 8 | (w2 & 0xff) << 16 | w3 << 24;
            sums[j] += w0 + w1 + w2 + w3;
        }
    }
    if (q < k1) {
        uint32_t *out = quads + uint64_t(q / 4) * n;
        std::fill_n(out, n, 0);
        for (uint32_t i = 0; q + i < k1; i++) {
            const uint32_t *row = words + uint64_t(q + i) * n;
            for (uint32_t j = 0; j < n; j++) {
                out[j] |= (row[j] & 0xff) << (8 * i);
                sums[j] += row[j];
            }
        }
    }
}

// Dwords the AMX kernels may read past a packed layout's last row (a 16-column tile at its
// last columns).
constexpr uint64_t kOverrun = 16;

} // namespace

// Rows of dwords: bf16 two per quad of k, int8 one per quad in blocks of 16 (64 k).
uint64_t WeightTile::packed_rows(uint32_t k) {
    return std::max(2 * ((uint64_t(k) + 3) / 4), 16 * ((uint64_t(k) + 63) / 64));
}

// 16 pairs per block of 32 k.
uint64_t WeightTile::amx_rows(uint32_t k) {
    return 16 * ((uint64_t(k) + 31) / 32);
}

WeightTile::WeightTile(uint32_t max_rows, uint32_t max_cols, bool amx_layout)
    : max_rows_(max_rows), words_(uint64_t(max_rows) * max_cols),
      packed_(packed_rows(max_rows) * max_cols + kOverrun),
      amx_(amx_layout ? amx_rows(max_rows) * max_cols + kOverrun : 0), bias_(max_cols),
      chunk_sums_((uint64_t(max_rows) + kLoadChunk - 1) / kLoadChunk * max_cols) {}

bool WeightTile::fits(uint32_t k, uint32_t n) const {
    return uint64_t(k) * n <= words_.size() && packed_rows(k) * n + kOverrun <= packed_.size() &&
           (amx_.empty() || amx_rows(k) * n + kOverrun <= amx_.size()) && n <= bias_.size();
}

void WeightTile::begin_load(MxuType type, uint32_t k, uint32_t n, bool transposed) {
    type_ = type;
    k_ = k;
    n_ = n;
    transposed_ = transposed;
    loaded_ = false;
}

void WeightTile::load_row(uint32_t r, const uint8_t *src) {
    const WidenRowFn widen_fn = widen_row_fn(type_);
    if (transposed_)
        widen_fn(src, k_, &words_[r], n_);
    else
        widen_fn(src, n_, &words_[uint64_t(r) * n_], 1);
}

void WeightTile::load_rows(uint32_t k0, uint32_t rows, const uint8_t *src, uint64_t stride,
                           bool transposed) {
    const WidenRowFn widen_fn = widen_row_fn(type_);
    uint32_t *out = &words_[uint64_t(k0) * n_];
    const uint32_t source_rows = transposed ? n_ : rows;
    const uint32_t row_elems = transposed ? rows : n_;
    const uint64_t row_bytes = uint64_t(row_elems) * mxu_elem_bytes(type_);
    // Rows back to back (a narrow tile, often one column) are one run of elements.
    if (!transposed && stride == row_bytes) {
        widen_fn(src, uint32_t(uint64_t(rows) * n_), out, 1);
        return;
    }
    // The source rows are usually rows of a larger matrix, too far apart for the hardware
    // prefetchers: ask for each a few rows ahead.
    constexpr uint32_t kAhead = 8;
    constexpr uint64_t kLine = 64;
    for (uint32_t r = 0; r < source_rows; r++) {
        if (r + kAhead < source_rows) {
            for (uint64_t b = 0; b < row_bytes; b += kLine)
                __builtin_prefetch(src + (r + kAhead) * stride + b);
        }
        if (transposed)
            widen_fn(src + r * stride, rows, out + r, n_);
        else
            widen_fn(src + r * stride, n_, out + uint64_t(r) * n_, 1);
    }
}

void WeightTile::load_words(uint32_t k0, uint32_t rows, const uint32_t *words) {
    std::copy_n(words, uint64_t(rows) * n_, words_.begin() + uint64_t(k0) * n_);
}

void WeightTile::pack_chunk(uint32_t chunk) {
    const uint32_t k0 = chunk * kLoadChunk;
    const uint32_t k1 = std::min(k_, k0 + kLoadChunk);
    const bool last = k1 == k_;
    if (type_ == MxuType::Int8) {
        pack_int8_quads(words_.data(), n_, k0, k1, packed_.data(),
                        chunk_sums_.data() + uint64_t(chunk) * n_);
        if (last) {
            // Zero quads up to the next AMX block.
            const uint64_t quads = (uint64_t(k_) + 3) / 4 * n_;
            const uint64_t blocks = (uint64_t(k_) + 63) / 64;
            std::fill(packed_.begin() + quads, packed_.begin() + 16 * blocks * n_, 0u);
        }
    } else if (type_ == MxuType::Bf16) {
        pack_bf16_quads(words_.data(), k_, n_, k0, last ? (k_ + 3) / 4 * 4 : k1, packed_.data());
        if (!amx_.empty())
            pack_bf16_amx_pairs(words_.data(), k_, n_, k0 / 2,
                                last ? uint32_t(amx_rows(k_)) : k1 / 2, amx_.data());
    }
}

void WeightTile::end_load() {
    if (type_ == MxuType::Int8) {
        std::fill(bias_.begin(), bias_.begin() + n_, 0);
        for (uint32_t c = 0; c < load_chunks(); c++) {
            const uint32_t *sums = chunk_sums_.data() + uint64_t(c) * n_;
            for (uint32_t j = 0; j < n_; j++)
                bias_[j] = int32_t(uint32_t(bias_[j]) + sums[j]);
        }
        for (uint32_t j = 0; j < n_; j++)
            bias_[j] = int32_t(uint32_t(bias_[j]) * (0u - 128u));
    }
    loaded_ = true;
}

void WeightTile::finish_load() {
    for (uint32_t c = 0; c < load_chunks(); c++)
        pack_chunk(c);
    end_load();
}

void WeightTile::load(MxuType type, uint32_t k, uint32_t n, const uint8_t *src, uint64_t stride,
                      bool transposed) {
    begin_load(type, k, n, transposed);
    load_rows(0, k, src, stride, transposed);
    finish_load();
}

} // namespace tpu::engine
