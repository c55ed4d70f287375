// SPDX-License-Identifier: MIT
// The baseline: oneDNN's matmul primitive on the same shape and operands as the engine (bf16 x
// bf16 -> f32, s8 x s8 -> s32, f32 x f32 -> f32), with its own OpenMP thread count set to ours.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gemm_program.hpp"
#include "oneapi/dnnl/dnnl.hpp"

namespace tpu::bench {

class OnednnGemm {
  public:
    // a and b as for EngineGemm.
    OnednnGemm(const Gemm &g, int threads, const void *a, const void *b);

    // Seconds of one matmul execution.
    double run();

    // The implementation oneDNN chose, e.g. brg:avx512_core_bf16.
    std::string impl() const { return pd_.impl_info_str(); }
    // M x N int32 or fp32 from the last run.
    std::vector<uint8_t> c() const;

  private:
    dnnl::engine engine_;
    dnnl::stream stream_;
    dnnl::matmul::primitive_desc pd_;
    dnnl::matmul prim_;
    dnnl::memory a_, b_, c_;
};

} // namespace tpu::bench
