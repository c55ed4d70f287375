// SPDX-License-Identifier: MIT
// Executor: runs one job on a Device — validates the program size, binds the context, starts
// from clean on-chip state, fetches instructions through the MMU a page-sized window at a time,
// decodes and executes them in order until HALT, the end of the program, the first fault or an
// abort request, and reports the outcome and counters as a tpu_job_result.
#pragma once

#include <array>
#include <cstdint>

#include "decoder.hpp"
#include "device.hpp"
#include "fault.hpp"
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
    Fault execute(const DmaInsn &insn);
    Fault execute(const LoadWInsn &insn);
    Fault execute(const MatmulInsn &insn);

    Device &dev_;
    tpu_job_result result_{};

    // Instructions [window_begin_, window_end_) of the program are in window_; fetch_fault_
    // is the fault that ended the last fetch early, raised when execution reaches it.
    std::array<tpu_insn, kFetchWindow> window_;
    uint32_t window_begin_ = 0;
    uint32_t window_end_ = 0;
    Fault fetch_fault_ = kOk;
};

} // namespace tpu::engine
