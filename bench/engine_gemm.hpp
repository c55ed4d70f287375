// SPDX-License-Identifier: MIT
// EngineGemm: one GEMM shape on the card's engine through its public C API (tpu_engine.h), on
// simulated host memory with a page-table address space as the driver builds it. Times the
// tiled GEMM job and its DMA-only twin (the MXU time is the difference), and the programs the
// runtime compiles for the same matmul (libtpurt's compile_matmul for this card).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gemm_program.hpp"
#include "tpu_engine.h"
#include "tpu_test/address_space.hpp"
#include "tpu_test/card.hpp"
#include "tpu_test/host_memory.hpp"

namespace tpu::bench {

class EngineGemm {
  public:
    // a and b: the operands in the GEMM's dtype, row-major. The engine has a mxu_dim x mxu_dim
    // array, threads workers and runs in mode (enum tpu_engine_mode).
    EngineGemm(const Gemm &g, uint32_t mxu_dim, uint32_t threads, uint32_t mode, const void *a,
               const void *b);

    // Seconds of one GEMM job / one DMA-only job; throw std::runtime_error if the job fails.
    double run_gemm() { return run_once(kGemmVa, gemm_bytes_); }
    double run_dma_only() { return run_once(kDmaVa, dma_bytes_); }
    // Seconds of the runtime's programs for the matmul, one job each, in order.
    double run_runtime();

    // The last job's result, and C as the last GEMM job left it (M x N int32 or fp32; read it
    // before a DMA-only job overwrites C).
    const tpu_job_result &result() const { return result_; }
    std::vector<uint8_t> c() const;

    const tpu_engine_config &config() const { return card_->config(); }

  private:
    static constexpr uint64_t kGemmVa = 0x7e0000000ull;
    static constexpr uint64_t kDmaVa = 0x7e8000000ull;
    static constexpr uint64_t kRuntimeVa = 0x7f0000000ull;

    double run_once(uint64_t va, uint32_t bytes);

    Gemm gemm_;
    std::unique_ptr<tpu::test::HostMemory> mem_;
    std::unique_ptr<tpu::test::Card> card_;
    std::unique_ptr<tpu::test::AddressSpace> space_;
    uint32_t gemm_bytes_ = 0;
    uint32_t dma_bytes_ = 0;
    std::vector<uint32_t> runtime_bytes_; // of each runtime program, one after the other
    tpu_job_result result_{};
};

} // namespace tpu::bench
