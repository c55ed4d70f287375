// SPDX-License-Identifier: MIT
// DeferredMatmuls (fast mode): the MATMULs of a k-outer tiled matmul — per k tile, one MATMUL
// into each of several column blocks of accumulators, with DMAs and LOAD_Ws between them, as
// libtpurt's programs run them — held back and computed per column block as one MATMUL over all
// of its k tiles, like the K chains of executor_chain.cpp, instead of one pass over the
// accumulators per k tile. A MATMUL joins when its activations (copied at once, one copy per k
// tile shared by the column blocks) and its weights (copied from the loaded tile) are taken,
// so later DMAs and LOAD_Ws may overwrite the unified buffer and the tile. Nothing else may
// touch the accumulators before flush(): the executor flushes before every other instruction.
// The results are those of the MATMULs one by one: int8 sums are exact, fp32 keeps one fma
// chain per output in ascending k, and a bf16 column block joins a tile only after tiles of
// whole blocks of 32 k (docs/hardware.md, Numerics); counters and timeline are the executor's,
// in program order. The copies go to buffers the Device keeps (deferred_activations: the k
// tiles' activations one after the other; deferred_rows: at flush, rows of all k for the
// kernels; deferred_weights: every taken tile's words), each within a budget: a MATMUL that
// would exceed one does not join.
#pragma once

#include <cstdint>
#include <vector>

#include "device.hpp"
#include "isa/insn.hpp"
#include "memory/extent.hpp"

namespace tpu::engine {

class DeferredMatmuls {
  public:
    explicit DeferredMatmuls(Device &dev);

    bool empty() const { return columns_.empty(); }

    // Takes insn, whose checks passed against dev.weights with accumulators acc, if it can
    // join (else changes nothing and returns false: flush, then try again or run it).
    bool defer(const MatmulInsn &insn, const Extent2D &acc);
    // The unified buffer's bytes [begin, end) were overwritten: activations read from there
    // can no longer be shared with a later MATMUL.
    void ub_written(uint64_t begin, uint64_t end);
    // Computes every column block and forgets them; false if aborted on the way.
    bool flush();

  private:
    // Activations of one k tile: k elements [k0, k0 + k) of each of the m rows, copied from UB
    // bytes [ub_begin, ub_end) (rows ub_stride apart), still unchanged there while live.
    struct Segment {
        uint32_t k0, k;
        uint64_t ub_begin, ub_end, ub_stride;
        bool live;
    };
    // The words of one taken weight tile (k x n) in deferred_weights.
    struct Piece {
        uint64_t offset; // in words
        uint32_t k;
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

    Device &dev_;
    const uint32_t max_depth_; // k per column block (the chain weight tile's)
    MxuType type_ = MxuType::Int8;
    uint32_t m_ = 0;
    std::vector<Column> columns_;
    std::vector<Segment> segments_;
    uint32_t src_depth_ = 0;    // k of activations copied so far
    uint64_t weight_words_ = 0; // of deferred_weights in use
};

} // namespace tpu::engine
