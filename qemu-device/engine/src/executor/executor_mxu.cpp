// SPDX-License-Identifier: MIT
// The matrix unit's instructions: LOAD_W (from the unified buffer or host memory, optionally
// transposed) and MATMUL (with the row-group walk), computed by FastMxu or, in cycle-accurate
// mode, by the SystolicArray whose simulated cycles then go on the timeline. Floating-point
// results that are NaN are stored as kCanonicalNan in both modes.
#include <algorithm>
#include <cstring>
#include <optional>

#include "executor/cycle_model.hpp"
#include "executor/executor.hpp"

namespace tpu::engine {

uint64_t Executor::fast_matmul_cycles(const MatmulArgs &args, uint32_t k, uint32_t n) {
    const bool overlap = args.rows > 1 && args.acc_stride < 4 * uint64_t(n);
    return cycles::matmul(args.rows, k, n, overlap);
}

Fault Executor::read_host_weights(const LoadWInsn &insn) {
    // Row 0 starts at host_addr; beyond the 39-bit space it faults right there, and below it
    // the row addresses (< 2^39 + 2^12 * 2^32) cannot wrap.
    if (insn.host_addr >> TPU_VA_BITS)
        return make_fault(TPU_ERR_MMU_FAULT, insn.host_addr);
    const uint64_t row_bytes = insn.row_bytes();
    uint8_t *rows = dev_.weight_rows.data();
    uint64_t done;
    // Dense rows are one read (the same bytes and the same first fault address as row by row).
    if (insn.host_stride == row_bytes)
        return dev_.dma.read(insn.host_addr, rows, insn.bytes(), &done);
    for (uint32_t r = 0; r < insn.source_rows(); r++) {
        Fault f = dev_.dma.read(insn.host_addr + r * insn.host_stride, rows + r * row_bytes,
                                row_bytes, &done);
        if (!f.ok())
            return f;
    }
    return kOk;
}

void Executor::stage_ub_weights(const LoadWInsn &insn) {
    const uint64_t row_bytes = insn.row_bytes();
    const uint8_t *src = dev_.ub.data() + insn.src.addr;
    for (uint32_t r = 0; r < insn.source_rows(); r++)
        std::memcpy(dev_.weight_rows.data() + r * row_bytes, src + r * insn.src.stride, row_bytes);
    staged_w_ = insn;
}

Fault Executor::execute(const LoadWInsn &insn) {
    staged_w_.reset();
    if (insn.from_host) {
        Fault f = read_host_weights(insn);
        if (!f.ok())
            return f;
        result_.dma_read_bytes += insn.bytes();
        staged_w_ = insn;
    } else {
        stage_ub_weights(insn);
    }
    // The systolic array takes the tile as loaded; fast mode widens it only when needed.
    if (dev_.cycle_accurate)
        load_staged_weights();
    schedule_load_w(insn);
    return kOk;
}

void Executor::load_staged_weights() {
    if (!staged_w_)
        return;
    const LoadWInsn &w = *staged_w_;
    dev_.weights.load(w.type, w.k, w.n, dev_.weight_rows.data(), w.row_bytes(), w.transposed);
    staged_w_.reset();
}

void Executor::schedule_load_w(const LoadWInsn &insn) {
    Step step;
    step.units = kUnitWeights;
    step.cost = cycles::load_w(insn.k);
    if (insn.from_host) {
        step.units |= kUnitDma;
        step.cost += dma_cycles(insn.bytes());
    } else {
        step.add(Space::Ub, insn.src.addr, insn.src.end(), false);
    }
    const uint64_t slot = weight_loads_++ % 2;
    step.add(Space::WeightSlot, slot, slot + 1, true);
    timeline_.schedule(step);
}

Fault Executor::check_matmul(const MatmulInsn &insn, bool loaded, MxuType type, uint32_t k,
                             uint32_t n, Extent2D *acc) const {
    if (!loaded || type != insn.type || k != insn.k)
        return make_fault(TPU_ERR_NO_WEIGHTS);
    *acc = Extent2D{insn.acc_addr, insn.acc_stride, insn.m, 4 * uint64_t(n)};
    uint64_t bad;
    if (!extent_fits(*acc, dev_.acc.size(), &bad))
        return make_fault(TPU_ERR_ACC_RANGE, bad);
    return kOk;
}

MatmulArgs Executor::matmul_args(const MatmulInsn &insn, const Extent2D &acc) {
    MatmulArgs args;
    args.src = dev_.ub.data() + insn.src_addr;
    args.src_stride = insn.src_stride;
    args.row_group = insn.row_group;
    args.group_stride = insn.group_stride;
    args.acc = dev_.acc.data() + acc.addr;
    args.acc_stride = acc.stride;
    args.rows = insn.m;
    args.accumulate = insn.accumulate;
    return args;
}

bool Executor::run_fast(const WeightTile &tile, const MatmulArgs &args) {
    // FastMxu takes plain strided rows. Row groups of a few rows (a convolution's output rows
    // of a narrow image) are gathered into dense rows, kChainSrcBytes at a time, so that each
    // call covers many groups; larger groups go one call each, in ascending m. Every output row
    // is computed the same either way.
    const uint32_t group = args.row_group ? std::min(args.row_group, args.rows) : args.rows;
    const uint64_t row_bytes = uint64_t(tile.k()) * mxu_elem_bytes(tile.type());
    const uint32_t block = group < kGatherGroupRows
                               ? uint32_t(std::min<uint64_t>(args.rows, kChainSrcBytes / row_bytes))
                               : group;
    for (uint32_t first = 0; first < args.rows; first += block) {
        MatmulArgs part = args;
        part.row_group = 0;
        part.group_stride = 0;
        part.acc = args.acc + first * args.acc_stride;
        part.rows = std::min(block, args.rows - first);
        if (block == group) {
            part.src = args.src_row(first);
        } else {
            // A group's rows are one copy when they are dense (a convolution at stride 1).
            const uint32_t run = args.src_stride == row_bytes ? group : 1;
            for (uint32_t r = 0; r < part.rows;) {
                const uint32_t m = first + r;
                const uint32_t rows = std::min(run - m % run, part.rows - r);
                std::memcpy(dev_.chain_src.data() + r * row_bytes, args.src_row(m),
                            rows * row_bytes);
                r += rows;
            }
            part.src = dev_.chain_src.data();
            part.src_stride = row_bytes;
        }
        if (!dev_.mxu.run(tile, part, dev_.abort_requested))
            return false;
    }
    return true;
}

uint64_t Executor::run_matmul(const MatmulArgs &args, bool *aborted) {
    const WeightTile &w = dev_.weights;
    if (dev_.cycle_accurate) {
        // The array takes the tile of the latest LOAD_W (the shadow slot becomes active).
        if (array_tile_ != weight_loads_) {
            dev_.array->load_weights(w);
            array_tile_ = weight_loads_;
        }
        const std::optional<uint64_t> cycles = dev_.array->run(args, &dev_.abort_requested);
        *aborted = !cycles;
        return cycles.value_or(0);
    }

    *aborted = !run_fast(w, args);
    return fast_matmul_cycles(args, w.k(), w.n());
}

void Executor::finish_matmul(const MatmulInsn &insn, uint32_t n, const Extent2D &acc,
                             uint64_t busy) {
    const uint64_t macs = uint64_t(insn.m) * insn.k * n;
    result_.macs += macs;
    (insn.type == MxuType::Int8   ? result_.macs_int8
     : insn.type == MxuType::Bf16 ? result_.macs_bf16
                                  : result_.macs_fp32) += macs;
    result_.mxu_busy_cycles += busy;

    Step step;
    step.units = kUnitMxu;
    step.cost = busy;
    const uint64_t slot = (weight_loads_ - 1) % 2;
    step.add(Space::Ub, insn.src_addr, insn.src_end, false)
        .add(Space::WeightSlot, slot, slot + 1, false)
        .add(Space::Acc, acc.addr, acc.end(), true);
    timeline_.schedule(step);
}

Fault Executor::execute(const MatmulInsn &insn) {
    const WeightTile &w = dev_.weights;
    const LoadWInsn *staged = staged_w_ ? &*staged_w_ : nullptr;
    const MxuType type = staged ? staged->type : w.type();
    const uint32_t k = staged ? staged->k : w.k();
    const uint32_t n = staged ? staged->n : w.n();
    Extent2D acc;
    Fault f = check_matmul(insn, staged || w.loaded(), type, k, n, &acc);
    if (!f.ok())
        return f;
    dev_.acc.mark_dirty(acc.addr, acc.end());

    if (!dev_.cycle_accurate) {
        // Joins the deferred MATMULs, or starts anew after computing them, or runs now.
        const RawWeights rows{dev_.weight_rows.data(), staged ? staged->row_bytes() : 0,
                              staged && staged->transposed};
        const RawWeights *raw = staged ? &rows : nullptr;
        bool deferred = deferred_.defer(insn, acc, n, raw);
        if (!deferred && !deferred_.empty()) {
            f = flush_deferred();
            if (!f.ok())
                return f;
            deferred = deferred_.defer(insn, acc, n, raw);
        }
        if (deferred) {
            finish_matmul(insn, n, acc, fast_matmul_cycles(matmul_args(insn, acc), k, n));
            return kOk;
        }
        load_staged_weights();
    }

    bool aborted;
    const uint64_t busy = run_matmul(matmul_args(insn, acc), &aborted);
    if (aborted)
        return make_fault(TPU_ERR_ABORTED);
    finish_matmul(insn, n, acc, busy);
    return kOk;
}

} // namespace tpu::engine
