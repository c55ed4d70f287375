// SPDX-License-Identifier: MIT
// Fast mode's deferred MATMULs (deferred_matmuls.hpp): which MATMULs may join, the copies of
// their activations and weights, and the fused MATMUL per column block at flush().
#include "executor/deferred_matmuls.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "mxu/bf16_numerics.hpp"

namespace tpu::engine {
namespace {

// Budgets of the copies: activations (and the rows built from them), weights.
constexpr uint64_t kMaxActivationBytes = 32u << 20;
constexpr uint64_t kMaxWeightBytes = 64u << 20;

// Whether two blocks of accumulators may share a byte: not if they are side by side in rows of
// one stride (column blocks of one row block), nor if their spans do not meet.
bool overlaps(const Extent2D &a, const Extent2D &b) {
    if (a.addr > b.addr)
        return overlaps(b, a);
    if (a.stride == b.stride && a.row_bytes <= a.stride && b.row_bytes <= a.stride) {
        const uint64_t offset = (b.addr - a.addr) % a.stride; // of b's rows within a's
        if (offset >= a.row_bytes && offset + b.row_bytes <= a.stride)
            return false;
    }
    return b.addr < a.end();
}

LocalMemory &buffer(std::unique_ptr<LocalMemory> &slot, uint64_t bytes) {
    if (!slot)
        slot = std::make_unique<LocalMemory>(uint32_t(bytes));
    return *slot;
}

} // namespace

DeferredMatmuls::DeferredMatmuls(Device &dev)
    : dev_(dev), max_depth_(dev.cycle_accurate ? 0 : dev.chain_weights.max_rows()) {}

DeferredMatmuls::Column *DeferredMatmuls::column_at(uint64_t acc_addr) {
    for (Column &c : columns_)
        if (c.acc.addr == acc_addr)
            return &c;
    return nullptr;
}

const DeferredMatmuls::Segment *DeferredMatmuls::segment_at(uint32_t k0) const {
    for (const Segment &s : segments_)
        if (s.k0 == k0)
            return &s;
    return nullptr;
}

bool DeferredMatmuls::take_activations(const MatmulInsn &insn, uint32_t k0) {
    const uint64_t elem = mxu_elem_bytes(insn.type);
    const Extent2D ub{insn.src_addr, insn.src_stride, insn.m, insn.k * elem};
    if (const Segment *s = segment_at(k0))
        return s->live && s->k == insn.k && s->ub.addr == ub.addr && s->ub.stride == ub.stride;
    if (k0 != src_depth_ || uint64_t(k0 + insn.k) * insn.m * elem > kMaxActivationBytes)
        return false;
    segments_.push_back(Segment{k0, insn.k, ub, /*live=*/true});
    src_depth_ += insn.k;
    return true;
}

// Segment after segment in deferred_activations, each m rows of its k elements.
void DeferredMatmuls::copy_out(const Segment &s) {
    const uint64_t elem = mxu_elem_bytes(type_);
    uint8_t *out =
        buffer(dev_.deferred_activations, kMaxActivationBytes).data() + uint64_t(s.k0) * m_ * elem;
    const uint8_t *ub = dev_.ub.data() + s.ub.addr;
    for (uint32_t r = 0; r < m_; r++)
        std::memcpy(out + r * s.k * elem, ub + r * s.ub.stride, s.k * elem);
}

bool DeferredMatmuls::defer(const MatmulInsn &insn, const Extent2D &acc, uint32_t tile_n,
                            const RawWeights *raw) {
    const uint32_t n = tile_n;
    const uint64_t elem = mxu_elem_bytes(insn.type);
    const uint64_t bytes = uint64_t(insn.k) * n * (raw ? elem : 4);
    // Rows one stride apart whose accumulators do not overlap, weights within the budget; not
    // tiles of a few k (copying their activations costs more than running them now).
    if (max_depth_ < insn.k || insn.k < kMinChainTileK ||
        (insn.row_group != 0 && insn.row_group < insn.m) ||
        (insn.m > 1 && insn.acc_stride < 4 * uint64_t(n)) ||
        weight_bytes_ + bytes + 63 > kMaxWeightBytes)
        return false;
    if (!empty() && (insn.type != type_ || insn.m != m_))
        return false;

    Column *col = column_at(acc.addr);
    if (col) {
        // The next k tile of a column block: bf16 only after whole blocks of 32 k.
        if (col->acc.stride != acc.stride || col->n != n || !insn.accumulate ||
            col->depth + insn.k > max_depth_ ||
            (insn.type == MxuType::Bf16 && col->pieces.back().k % bf16::kBlock != 0))
            return false;
    } else if (std::any_of(columns_.begin(), columns_.end(),
                           [&](const Column &c) { return overlaps(c.acc, acc); })) {
        return false;
    }
    const uint32_t k0 = col ? col->depth : 0;
    if (empty()) {
        type_ = insn.type;
        m_ = insn.m;
    }
    if (!take_activations(insn, k0))
        return false;
    if (!col) {
        columns_.push_back(Column{acc, n, insn.accumulate, 0, {}});
        col = &columns_.back();
    }
    uint8_t *out = buffer(dev_.deferred_weights, kMaxWeightBytes).data() + weight_bytes_;
    if (raw) {
        // Dense rows of the source as it is laid out.
        const uint32_t rows = raw->transposed ? n : insn.k;
        const uint64_t row_bytes = (raw->transposed ? insn.k : n) * elem;
        for (uint32_t r = 0; r < rows; r++)
            std::memcpy(out + r * row_bytes, raw->src + r * raw->stride, row_bytes);
    } else {
        std::memcpy(out, dev_.weights.words(), bytes);
    }
    col->pieces.push_back(
        Piece{weight_bytes_, k0, insn.k, raw != nullptr, raw != nullptr && raw->transposed});
    col->depth += insn.k;
    weight_bytes_ += (bytes + 63) & ~uint64_t(63); // pieces of words stay aligned
    return true;
}

void DeferredMatmuls::ub_will_write(const Extent2D &dst) {
    for (Segment &s : segments_)
        if (s.live && overlaps(s.ub, dst)) {
            copy_out(s);
            s.live = false;
        }
}

const uint8_t *DeferredMatmuls::activation_rows(uint64_t *stride) {
    const uint64_t elem = mxu_elem_bytes(type_);
    // k tiles side by side in the same rows of the UB (k0 ascending from the first): read there.
    const Segment &first = segments_.front();
    if (std::all_of(segments_.begin(), segments_.end(), [&](const Segment &s) {
            return s.live && s.ub.stride == first.ub.stride &&
                   s.ub.addr == first.ub.addr + s.k0 * elem;
        })) {
        *stride = first.ub.stride;
        return dev_.ub.data() + first.ub.addr;
    }
    *stride = uint64_t(src_depth_) * elem;
    uint8_t *rows = buffer(dev_.deferred_rows, kMaxActivationBytes).data();
    for (const Segment &s : segments_) {
        const uint8_t *in = s.live ? dev_.ub.data() + s.ub.addr
                                   : dev_.deferred_activations->data() + uint64_t(s.k0) * m_ * elem;
        const uint64_t in_stride = s.live ? s.ub.stride : s.k * elem;
        for (uint32_t r = 0; r < m_; r++)
            std::memcpy(rows + r * *stride + s.k0 * elem, in + r * in_stride, s.k * elem);
    }
    return rows;
}

void DeferredMatmuls::load_piece(WeightTile &tile, const Piece &p, uint32_t n, uint32_t k0,
                                 uint32_t rows) const {
    const uint8_t *piece = dev_.deferred_weights->data() + p.offset;
    const uint64_t elem = mxu_elem_bytes(type_);
    const uint64_t skip = k0 - p.k0; // rows of the piece's W before k0
    if (!p.raw)
        tile.load_words(k0, rows, reinterpret_cast<const uint32_t *>(piece) + skip * n);
    else if (p.transposed)
        tile.load_rows(k0, rows, piece + skip * elem, p.k * elem, true);
    else
        tile.load_rows(k0, rows, piece + skip * n * elem, n * elem, false);
}

bool DeferredMatmuls::flush() {
    uint64_t row_stride;
    const uint8_t *rows = activation_rows(&row_stride);
    // Each column block through the chain weight tile, free between instructions.
    WeightTile &tile = dev_.chain_weights;
    bool done = true;
    for (const Column &c : columns_) {
        if (!done)
            break;
        tile.begin_load(type_, c.depth, c.n, false);
        // Rows [c0, c1) of the column block's weights from the pieces whose k they take.
        load_in_chunks(dev_.pool, tile, [&](uint32_t c0, uint32_t c1) {
            for (const Piece &p : c.pieces) {
                const uint32_t lo = std::max(c0, p.k0), hi = std::min(c1, p.k0 + p.k);
                if (lo < hi)
                    load_piece(tile, p, c.n, lo, hi - lo);
            }
        });
        MatmulArgs args;
        args.src = rows;
        args.src_stride = row_stride;
        args.acc = dev_.acc.data() + c.acc.addr;
        args.acc_stride = c.acc.stride;
        args.rows = m_;
        args.accumulate = c.accumulate;
        done = dev_.mxu.run(tile, args, dev_.abort_requested);
    }
    tile.unload();
    columns_.clear();
    segments_.clear();
    src_depth_ = 0;
    weight_bytes_ = 0;
    return done;
}

} // namespace tpu::engine
