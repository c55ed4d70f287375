// SPDX-License-Identifier: MIT
// DeferredMatmuls (fast mode): the MATMULs of a k-outer tiled matmul — per k tile, one MATMUL
// into each of several column blocks of accumulators, with DMAs and LOAD_Ws between them, as
// libtpurt's programs run them — held back and computed per column block as one MATMUL over all
// of its k tiles, like the K chains of executor_chain.cpp, instead of one pass over the
// accumulators per k tile. A MATMUL joins when its activations (one k tile's, shared by the
// column blocks) and its weights (copied from the loaded tile) are taken. The activations stay
// where they are in the unified buffer until a DMA is about to overwrite them, which copies
// them out first (ub_will_write()); so later DMAs and LOAD_Ws may overwrite the unified buffer
// and the tile. Nothing else may touch the accumulators before flush(): the executor flushes
// before every other instruction.
// The results are those of the MATMULs one by one: int8 sums are exact, fp32 keeps one fma
// chain per output in ascending k, and a bf16 column block joins a tile only after tiles of
// whole blocks of 32 k (docs/hardware.md, Numerics); counters and timeline are the executor's,
// in program order. The copies go to buffers the Device keeps (deferred_activations: the k
// tiles' activations copied out, one after the other; deferred_rows: at flush, rows of all k
// for the kernels, unless the k tiles lie side by side in the same rows of the unified buffer,
// which the kernels then read in place; deferred_weights: every taken tile, as the source
// rows of a staged LOAD_W, else as the loaded tile's words), each within a budget: a MATMUL
// that would exceed one does not join.
#pragma once

#include <cstdint>
#include <vector>

#include "device.hpp"
#include "isa/insn.hpp"
#include "memory/extent.hpp"

namespace tpu::engine {

// A weight tile's source rows as its LOAD_W read them, not yet widened: the rows of W
// (N elements each), or when transposed N rows of K elements, stride bytes apart.
struct RawWeights {
    const uint8_t *src;
    uint64_t stride;
    bool transposed;
};

class DeferredMatmuls {
  public:
    explicit DeferredMatmuls(Device &dev);

    bool empty() const { return columns_.empty(); }

    // Takes insn, whose checks passed with accumulators acc, if it can join (else changes
    // nothing and returns false: flush, then try again or run it). Its weights are raw (of
    // insn's type, K and the tile's N: tile_n), or dev.weights' if raw is null.
    bool defer(const MatmulInsn &insn, const Extent2D &acc, uint32_t tile_n, const RawWeights *raw);
    // The unified buffer's bytes of dst are about to be overwritten: activations taken from
    // there are copied out first and can no longer be shared with a later MATMUL.
    void ub_will_write(const Extent2D &dst);
    // Computes every column block and forgets them; false if aborted on the way.
    bool flush();

  private:
    // Activations of one k tile: k elements [k0, k0 + k) of each of the m rows, in the UB at
    // ub while live, else copied out.
    struct Segment {
        uint32_t k0, k;
        Extent2D ub;
        bool live;
    };
    // One taken weight tile (k x n) in deferred_weights: its 32-bit words (as widened by
    // WeightTile), or its raw elements, k rows of n or when transposed n rows of k.
    struct Piece {
        uint64_t offset; // in bytes
        uint32_t k0, k;  // rows [k0, k0 + k) of the column block's W
        bool raw;
        bool transposed;
    };
    // One block of accumulators and the k tiles it has taken so far.
    struct Column {
        Extent2D acc;
        uint32_t n;
        bool accumulate; // its first MATMUL's flag
        uint32_t depth;  // k so far
        std::vector<Piece> pieces;
    };

    Column *column_at(uint64_t acc_addr);
    const Segment *segment_at(uint32_t k0) const;
    bool take_activations(const MatmulInsn &insn, uint32_t k0);
    void copy_out(const Segment &s);
    // Rows [k0, k0 + rows) of tile (n columns), all within piece p.
    void load_piece(WeightTile &tile, const Piece &p, uint32_t n, uint32_t k0, uint32_t rows) const;
    // The activations as rows of all k: in place in the UB, or built in deferred_rows.
    const uint8_t *activation_rows(uint64_t *stride);

    Device &dev_;
    const uint32_t max_depth_; // k per column block (the chain weight tile's)
    MxuType type_ = MxuType::Int8;
    uint32_t m_ = 0;
    std::vector<Column> columns_;
    std::vector<Segment> segments_;
    uint32_t src_depth_ = 0;    // k of activations copied so far
    uint64_t weight_bytes_ = 0; // of deferred_weights in use
};

} // namespace tpu::engine
