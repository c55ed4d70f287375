// SPDX-License-Identifier: MIT
// Executor: runs one job on a Device — validates the program size, binds the context, starts
// from clean on-chip state, fetches instructions through the MMU a page-sized window at a time,
// decodes and executes them in order until HALT, the end of the program, the first fault or an
// abort request, places each on the cycle model's Timeline, and reports the outcome and
// counters as a tpu_job_result. Instructions take effect one after another (the timeline only
// decides when they would have run), so both engine modes share everything here except how a
// MATMUL is computed: FastMxu, or the SystolicArray in cycle-accurate mode.
#pragma once

#include <array>
#include <cstdint>

#include "decoder.hpp"
#include "device.hpp"
#include "fault.hpp"
#include "timeline.hpp"
#include "tpu_engine.h"

namespace tpu::engine {

class Executor {
  public:
    explicit Executor(Device &dev) : dev_(dev) {}

    tpu_job_result run(uint32_t ctx_id, uint64_t program_addr, uint32_t program_size);

  private:
    static constexpr uint32_t kFetchWindow = TPU_PAGE_SIZE / TPU_INSN_SIZE;

    Fault start(uint32_t ctx_id, uint32_t program_size);
    Fault fetch(uint64_t program_addr, uint32_t pc, uint32_t count);

    Fault execute(const NopInsn &);
    Fault execute(const HaltInsn &);
    Fault execute(const SyncInsn &);
    Fault execute(const TimestampInsn &insn);
    Fault execute(const DmaInsn &insn);
    // executor_mxu.cpp
    Fault execute(const LoadWInsn &insn);
    Fault execute(const MatmulInsn &insn);
    Fault load_weights_from_host(const LoadWInsn &insn);
    uint64_t run_matmul(const MatmulArgs &args, bool *aborted);
    // executor_vpu.cpp
    Fault execute(const ActivateInsn &insn);
    Fault execute(const VectorInsn &insn);
    Fault execute(const ReduceInsn &insn);
    Fault execute(const PoolInsn &insn);
    Fault execute(const TransposeInsn &insn);

    uint64_t dma_cycles(uint64_t bytes) const;

    Device &dev_;
    tpu_job_result result_{};
    Timeline timeline_;
    uint32_t pc_ = 0;

    // LOAD_Ws so far: LOAD_W number i fills weight slot i % 2 (the timeline's double buffer).
    uint64_t weight_loads_ = 0;
    // The LOAD_W whose tile the systolic array holds (cycle-accurate mode); 0 = none.
    uint64_t array_tile_ = 0;

    // Instructions [window_begin_, window_end_) of the program are in window_; fetch_fault_
    // is the fault that ended the last fetch early, raised when execution reaches it.
    std::array<tpu_insn, kFetchWindow> window_;
    uint32_t window_begin_ = 0;
    uint32_t window_end_ = 0;
    Fault fetch_fault_ = kOk;
};

} // namespace tpu::engine
