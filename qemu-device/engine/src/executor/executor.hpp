// SPDX-License-Identifier: MIT
// Executor: runs one job on a Device — validates the program size, binds the context, starts
// from clean on-chip state, fetches instructions through the MMU a page-sized window at a time,
// decodes and executes them in order until HALT, the end of the program, the first fault or an
// abort request, places each on the cycle model's Timeline, and reports the outcome and
// counters as a tpu_job_result. Instructions take effect one after another (the timeline only
// decides when they would have run), so both engine modes share everything here except how a
// MATMUL is computed: FastMxu, or the SystolicArray in cycle-accurate mode. In fast mode a run of
// LOAD_W / MATMUL pairs that chain through the same accumulators is computed as one MATMUL over
// the concatenated K (executor_chain.cpp), pairs whose tiles do not concatenate (a few k, or
// bf16 tiles not whole blocks) block of rows by block of rows (executor_sequence.cpp), and the
// MATMULs of a k-outer tiled matmul are held
// back and computed per accumulator block over all their k tiles (deferred_matmuls.hpp): only
// DMAs into the unified buffer, LOAD_Ws and MATMULs that join run while MATMULs wait; any other
// instruction, and the end of the job, computes them first. Both keep the same effects and the
// same timeline.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "device.hpp"
#include "executor/deferred_matmuls.hpp"
#include "executor/fault.hpp"
#include "executor/timeline.hpp"
#include "isa/decoder.hpp"
#include "tpu_engine.h"

namespace tpu::engine {

class Executor {
  public:
    explicit Executor(Device &dev) : dev_(dev), deferred_(dev) {}

    tpu_job_result run(uint32_t ctx_id, uint64_t program_addr, uint32_t program_size);

  private:
    static constexpr uint32_t kFetchWindow = TPU_PAGE_SIZE / TPU_INSN_SIZE;
    // Most LOAD_W / MATMUL pairs fused into one chain; a chain scanned from one window may
    // need the next fetched, and both fit the window buffer.
    static constexpr uint32_t kMaxChainLinks = 64;
    static_assert(2 * kMaxChainLinks <= kFetchWindow);

    // One LOAD_W (from the UB) of a K chain, and the MATMUL that uses its tile.
    struct ChainLink {
        LoadWInsn load;
        MatmulInsn matmul;
    };

    Fault start(uint32_t ctx_id, uint32_t program_size);
    // Fetches the instructions from window_end_ on, up to a page's worth, keeping those of the
    // window from keep_from on before them.
    Fault fetch(uint64_t program_addr, uint32_t count, uint32_t keep_from);

    Fault execute(const NopInsn &);
    Fault execute(const HaltInsn &);
    Fault execute(const SyncInsn &);
    Fault execute(const TimestampInsn &insn);
    Fault execute(const DmaInsn &insn);
    // executor_mxu.cpp
    Fault execute(const LoadWInsn &insn);
    Fault execute(const MatmulInsn &insn);
    // The source rows of a LOAD_W into dev_.weight_rows, from host memory or the UB (staged).
    Fault read_host_weights(const LoadWInsn &insn);
    void stage_ub_weights(const LoadWInsn &insn);
    void schedule_load_w(const LoadWInsn &insn);
    // The checks of a MATMUL against loaded weights of type, k x n (loaded or not); *acc is
    // its accumulator extent.
    Fault check_matmul(const MatmulInsn &insn, bool loaded, MxuType type, uint32_t k, uint32_t n,
                       Extent2D *acc) const;
    MatmulArgs matmul_args(const MatmulInsn &insn, const Extent2D &acc);
    uint64_t run_matmul(const MatmulArgs &args, bool *aborted);
    // The MXU cycles of args against a k x n tile (the cycle model; the array takes as many).
    static uint64_t fast_matmul_cycles(const MatmulArgs &args, uint32_t k, uint32_t n);
    // FastMxu over tile, one call per row group; false if aborted.
    bool run_fast(const WeightTile &tile, const MatmulArgs &args);
    // Counters and timeline of a completed MATMUL of k x n with accumulators acc.
    void finish_matmul(const MatmulInsn &insn, uint32_t n, const Extent2D &acc, uint64_t busy);
    // executor_chain.cpp
    // Whether a LOAD_W / MATMUL pair joins the links (0 ..) already in chain_, whose tiles
    // hold depth k in all.
    using JoinsLinks = bool (Executor::*)(const LoadWInsn &load, const MatmulInsn &matmul,
                                          uint32_t links, uint32_t depth) const;
    // The pairs from pc_ on that `joins` takes, at most max_links, into chain_; 0 unless two.
    uint32_t pair_links(uint64_t program_addr, uint32_t count, uint32_t max_links,
                        JoinsLinks joins);
    bool peek(uint64_t program_addr, uint32_t count, uint32_t pc, Insn *insn);
    bool chains_with(const LoadWInsn &load, const MatmulInsn &matmul, uint32_t links,
                     uint32_t depth) const;
    Fault execute_chain(uint32_t links);
    // executor_sequence.cpp: pairs whose tiles do not concatenate, into chain_ too.
    bool sequences_with(const LoadWInsn &load, const MatmulInsn &matmul, uint32_t links,
                        uint32_t depth) const;
    Fault execute_sequence(uint32_t links);
    bool run_gathered(uint32_t links, uint32_t depth, const MatmulArgs &args);
    // executor_vpu.cpp
    Fault execute(const ActivateInsn &insn);
    Fault execute(const VectorInsn &insn);
    Fault execute(const ReduceInsn &insn);
    Fault execute(const PoolInsn &insn);
    Fault execute(const TransposeInsn &insn);
    // executor_link.cpp (spec 2.0)
    Fault execute(const SendInsn &insn);
    Fault execute(const RecvInsn &insn);
    // A link error on port: counted in the port's registers, the job ends with status.
    Fault link_error(uint32_t port, uint32_t status);
    // Stores (or reduces) one packet's payload at the RECV's destination, offset bytes in.
    Fault receive_payload(const RecvInsn &insn, uint64_t offset, const uint8_t *data,
                          uint32_t bytes);

    // Widens the staged LOAD_W's tile into dev_.weights (nothing if none is staged).
    void load_staged_weights();

    uint64_t dma_cycles(uint64_t bytes) const;
    // Computes the deferred MATMULs (fast mode); a fault if aborted on the way.
    Fault flush_deferred();

    Device &dev_;
    DeferredMatmuls deferred_;
    tpu_job_result result_{};
    Timeline timeline_;
    uint32_t pc_ = 0;

    // LOAD_Ws so far: LOAD_W number i fills weight slot i % 2 (the timeline's double buffer).
    uint64_t weight_loads_ = 0;
    // The latest LOAD_W, its source rows in dev_.weight_rows but its tile not yet widened into
    // dev_.weights (fast mode: a MATMUL that joins the deferred ones takes the rows instead).
    std::optional<LoadWInsn> staged_w_;
    // The LOAD_W whose tile the systolic array holds (cycle-accurate mode); 0 = none.
    uint64_t array_tile_ = 0;

    // Instructions [window_begin_, window_end_) of the program are in window_; fetch_fault_
    // is the fault that ended the last fetch early, raised when execution reaches it.
    std::array<tpu_insn, 2 * kFetchWindow> window_;
    uint32_t window_begin_ = 0;
    uint32_t window_end_ = 0;
    Fault fetch_fault_ = kOk;

    // The links of the K chain being fused (fast mode).
    std::array<ChainLink, kMaxChainLinks> chain_;
};

} // namespace tpu::engine
