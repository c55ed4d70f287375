// SPDX-License-Identifier: MIT
// Sequences (fast mode): a run of LOAD_W (from the UB) / MATMUL pairs in which every MATMUL
// after the first accumulates into the same accumulator rows, but whose tiles cannot be joined
// into one K chain (executor_chain.cpp) — tiles of a few k, or bf16 tiles that are not whole
// blocks of 32 k, such as a convolution's nine taps over a one-channel image — is computed
// block of rows by block of rows (FastMxu::run_sequence): every output still sees each MATMUL's
// products in program order, exactly as one by one, but the accumulators are walked once
// instead of once per MATMUL. Tiles may come from the UB or from host memory. As with chains,
// everything architectural is as if the instructions ran one by one: only pairs whose checks
// pass join, a LOAD_W from host memory that faults ends the sequence there (the pairs before it
// computed, the fault reported at its pc), each instruction goes through the counters and the
// timeline in order, and the last LOAD_W's tile is left loaded.
#include <array>

#include "executor/executor.hpp"
#include "mxu/bf16_numerics.hpp"

namespace tpu::engine {

bool Executor::sequences_with(const LoadWInsn &load, const MatmulInsn &matmul, uint32_t links,
                              uint32_t /*depth*/) const {
    Extent2D acc;
    if (load.k > kMaxSequenceTileK ||
        !check_matmul(matmul, true, load.type, load.k, load.n, &acc).ok())
        return false;
    if (links == 0) {
        // Tiles that chains_with() would join are left to it; one column of fp32 weights is
        // the training programs' way of moving values (weight_column.hpp), and a few
        // accumulators stay in the cache anyway. Overlapping accumulator rows run one by one.
        const bool joins =
            load.k >= kMinChainTileK && (load.type != MxuType::Bf16 || load.k % bf16::kBlock == 0);
        return !joins && load.n > 1 && uint64_t(matmul.m) * load.n * 4 >= kSequenceMinAccBytes &&
               matmul.acc_stride >= 4 * uint64_t(load.n);
    }
    const MatmulInsn &m0 = chain_[0].matmul;
    return load.type == chain_[0].load.type && load.n == chain_[0].load.n && matmul.accumulate &&
           matmul.m == m0.m && matmul.acc_addr == m0.acc_addr && matmul.acc_stride == m0.acc_stride;
}

Fault Executor::execute_sequence(uint32_t links) {
    std::vector<std::unique_ptr<WeightTile>> &tiles = dev_.sequence_weights;
    while (tiles.size() < links)
        tiles.push_back(std::make_unique<WeightTile>(kMaxSequenceTileK, dev_.limits.mxu_cols));
    // Every tile loaded, in order, up to a LOAD_W from host memory that faults.
    Fault fault = kOk;
    uint32_t loaded = 0;
    for (; loaded < links; loaded++) {
        const LoadWInsn &load = chain_[loaded].load;
        if (load.from_host) {
            fault = read_host_weights(load);
            if (!fault.ok())
                break;
            result_.dma_read_bytes += load.bytes();
            tiles[loaded]->load(load.type, load.k, load.n, dev_.weight_rows.data(),
                                load.row_bytes(), load.transposed);
        } else {
            tiles[loaded]->load(load.type, load.k, load.n, dev_.ub.data() + load.src.addr,
                                load.src.stride, load.transposed);
        }
    }
    if (loaded == 0)
        return fault; // the first LOAD_W faulted, at pc_
    const MatmulInsn &first = chain_[0].matmul;
    const uint32_t n = chain_[0].load.n;
    Extent2D acc{first.acc_addr, first.acc_stride, first.m, 4 * uint64_t(n)};
    dev_.acc.mark_dirty(acc.addr, acc.end());
    std::array<const WeightTile *, kMaxSequenceLinks> used;
    std::array<MatmulArgs, kMaxSequenceLinks> args;
    for (uint32_t i = 0; i < loaded; i++) {
        used[i] = tiles[i].get();
        args[i] = matmul_args(chain_[i].matmul, acc);
    }
    if (!dev_.mxu.run_sequence(used.data(), args.data(), loaded, dev_.abort_requested)) {
        // Stopped in the first MATMUL, its LOAD_W done (the job ends here).
        schedule_load_w(chain_[0].load);
        pc_++;
        return make_fault(TPU_ERR_ABORTED);
    }
    for (uint32_t i = 0; i < loaded; i++) {
        schedule_load_w(chain_[i].load);
        finish_matmul(chain_[i].matmul, n, acc, fast_matmul_cycles(args[i], chain_[i].load.k, n));
    }
    if (!fault.ok()) {
        pc_ += 2 * loaded; // at the LOAD_W that faulted
        return fault;
    }
    // The last tile stays loaded, staged as its LOAD_W left it.
    const LoadWInsn &last = chain_[links - 1].load;
    if (last.from_host)
        staged_w_ = last; // its rows are still in weight_rows
    else
        stage_ub_weights(last);
    pc_ += 2 * links - 1;
    return kOk;
}

} // namespace tpu::engine
