// SPDX-License-Identifier: MIT
// program_builder.hpp - a card program (a vector of 32-byte union tpu_insn) and the builder
// that encodes it. This is the one place in the runtime that fills in instruction fields; it
// rejects values that would not fit their fields instead of truncating them.
#pragma once

#include "tpurt/dtype.hpp"

#include <tpu_hw.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpurt {

struct Program {
    std::vector<union tpu_insn> insns;

    std::size_t size_bytes() const { return insns.size() * sizeof(union tpu_insn); }
};

// Most instructions a program can hold (TPU_PROGRAM_MAX_BYTES).
inline constexpr std::size_t max_program_insns = TPU_PROGRAM_MAX_BYTES / TPU_INSN_SIZE;

// A rows x cols block of `type` elements moved between host memory (device virtual addresses)
// and on-chip memory (unified buffer, or the accumulators for ProgramBuilder::dma_out_acc).
struct DmaTransfer {
    DType type = DType::Int8;
    std::uint64_t host_addr = 0;
    std::uint64_t host_stride = 0; // bytes between host rows
    std::uint32_t local_addr = 0;
    std::uint32_t local_stride = 0; // bytes between on-chip rows
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
};

// Weights W[k][n] (rows = K <= mxu_rows, cols = N <= mxu_cols) read from the unified buffer.
struct WeightLoad {
    DType type = DType::Int8; // Int8 or Bf16
    std::uint32_t src_addr = 0;
    std::uint32_t src_stride = 0;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
};

// rows(M) x cols(K) activations from the unified buffer through the loaded weights into the
// accumulators: acc[acc_addr + m * acc_stride + 4 * n] (= or +=) sum_k a[m][k] * w[k][n].
struct MatmulStep {
    DType type = DType::Int8; // must equal the loaded weights' type
    std::uint32_t src_addr = 0;
    std::uint32_t src_stride = 0;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint32_t acc_addr = 0;
    std::uint32_t acc_stride = 0;
    bool accumulate = false; // add into the accumulators instead of overwriting them
};

class ProgramBuilder {
  public:
    ProgramBuilder &dma_in(const DmaTransfer &transfer);      // host -> unified buffer
    ProgramBuilder &dma_out(const DmaTransfer &transfer);     // unified buffer -> host
    ProgramBuilder &dma_out_acc(const DmaTransfer &transfer); // accumulators -> host
    ProgramBuilder &load_weights(const WeightLoad &load);
    ProgramBuilder &matmul(const MatmulStep &step);
    ProgramBuilder &halt();
    // Appends the instructions of another program verbatim.
    ProgramBuilder &append(const Program &program);

    std::size_t size() const { return program_.insns.size(); }
    bool empty() const { return program_.insns.empty(); }
    // Hands out the program built so far and leaves the builder empty.
    Program finish();

  private:
    ProgramBuilder &dma(std::uint8_t opcode, std::uint16_t flags, const DmaTransfer &transfer);

    Program program_;
};

} // namespace tpurt
