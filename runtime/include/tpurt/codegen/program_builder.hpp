// SPDX-License-Identifier: MIT
// program_builder.hpp - a card program (a vector of 32-byte union tpu_insn) and the builder
// that encodes it: every instruction of spec 1.1 (DMA, LOAD_W from the unified buffer or host,
// MATMUL with row groups, ACTIVATE, VECTOR, REDUCE, TRANSPOSE, POOL, SYNC, TIMESTAMP) and the
// link instructions of spec 2.0 (SEND, RECV). This is
// the one place in the runtime that fills in instruction fields; it rejects values that would
// not fit their fields, and types or operations the instruction does not take, instead of
// truncating them. Alignment and on-chip ranges are the card's to check.
#pragma once

#include "tpurt/card/vpu_ops.hpp"
#include "tpurt/types/dtype.hpp"

#include <tpu_hw.h>

#include <cstddef>
#include <cstdint>
#include <optional>
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

// Weights W[k][n] (rows = K <= mxu_rows, cols = N <= mxu_cols; Int8, Bf16 or Fp32) from the
// unified buffer, row k at src_addr + k * src_stride; `transposed`: the buffer holds N rows of
// K elements, element (n, k) = W[k][n].
struct WeightLoad {
    DType type = DType::Int8;
    std::uint32_t src_addr = 0;
    std::uint32_t src_stride = 0;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    bool transposed = false;
};

// The same weights straight from host memory (device virtual addresses, rows host_stride bytes
// apart), without staging them in the unified buffer.
struct HostWeightLoad {
    DType type = DType::Int8;
    std::uint64_t host_addr = 0;
    std::uint64_t host_stride = 0;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    bool transposed = false;
};

// rows(M) x cols(K) activations from the unified buffer through the loaded weights into the
// accumulators: acc[acc_addr + m * acc_stride + 4 * n] (= or +=) sum_k a[m][k] * w[k][n].
// Row m is read at src_addr + (m / G) * group_stride + (m % G) * src_stride, G = row_group, or
// G = rows when row_group is 0 (then group_stride must be 0): one convolution tap per MATMUL.
struct MatmulStep {
    DType type = DType::Int8; // must equal the loaded weights' type
    std::uint32_t src_addr = 0;
    std::uint32_t src_stride = 0;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint32_t acc_addr = 0;
    std::uint32_t acc_stride = 0;
    bool accumulate = false; // add into the accumulators instead of overwriting them
    std::uint32_t row_group = 0;
    std::uint32_t group_stride = 0;
};

// rows x cols accumulators -> [+ bias[n]] -> * scale -> function -> out_type in the unified
// buffer at dst_addr + m * dst_stride + n * size(out_type). The accumulators hold fp32, or
// int32 (the result of an int8 matmul) with src_int32.
struct ActivateStep {
    DType out_type = DType::Fp32;
    Activation function = Activation::None;
    bool src_int32 = false;
    std::uint32_t acc_addr = 0;
    std::uint32_t acc_stride = 0;
    std::uint32_t dst_addr = 0;
    std::uint32_t dst_stride = 0;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::optional<std::uint32_t> bias_addr = std::nullopt; // fp32[cols] in the unified buffer
    float scale = 1.0f;
};

// dst[r][c] = a[r][c] op b[r][c] over rows x cols elements of `type` in the unified buffer;
// b_stride 0 broadcasts b's first row.
struct VectorStep {
    DType type = DType::Fp32;
    VectorOp op = VectorOp::Add;
    std::uint32_t a_addr = 0;
    std::uint32_t a_stride = 0;
    std::uint32_t b_addr = 0;
    std::uint32_t b_stride = 0;
    std::uint32_t dst_addr = 0;
    std::uint32_t dst_stride = 0;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    bool b_column = false; // spec 1.4 TPU_F_VEC_B_COL: b[r][c] = b[r][0] (b_stride 0: a scalar)
};

// dst[r] = op over c of a[r][c]; dst elements dst_stride bytes apart (SUM: 4-byte int32 or
// fp32, MAX: `type`).
struct ReduceStep {
    DType type = DType::Fp32;
    ReduceOp op = ReduceOp::Sum;
    std::uint32_t a_addr = 0;
    std::uint32_t a_stride = 0;
    std::uint32_t dst_addr = 0;
    std::uint32_t dst_stride = 0;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
};

// dst[c][r] = src[r][c]: rows x cols elements become cols x rows (dst rows dst_stride apart).
struct TransposeStep {
    DType type = DType::Fp32;
    std::uint32_t src_addr = 0;
    std::uint32_t src_stride = 0;
    std::uint32_t dst_addr = 0;
    std::uint32_t dst_stride = 0;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
};

// Max or average over win_h x win_w windows of an HWC image: output pixel (oy, ox) of
// out_rows x out_cols x channels reads input pixels (oy * stride_h + i, ox * stride_w + j).
// Pixel (y, x) channel c is at src_addr + y * src_row_stride + (x * channels + c) * size.
struct PoolStep {
    DType type = DType::Fp32;
    PoolOp op = PoolOp::Max;
    std::uint32_t src_addr = 0;
    std::uint32_t src_row_stride = 0;
    std::uint32_t dst_addr = 0;
    std::uint32_t dst_row_stride = 0;
    std::uint32_t out_rows = 0;
    std::uint32_t out_cols = 0;
    std::uint32_t channels = 0;
    std::uint32_t win_h = 0;
    std::uint32_t win_w = 0;
    std::uint32_t stride_h = 0;
    std::uint32_t stride_w = 0;
};

// Spec 2.0 (docs/hardware.md section 10): one message of `bytes` bytes with `tag` over the
// link on `port`, from the unified buffer at `addr`, or with `host` from host memory at device
// VA `addr`.
struct LinkSend {
    std::uint32_t port = 0;
    std::uint32_t tag = 0;
    std::uint64_t addr = 0;
    std::uint32_t bytes = 0;
    bool host = false;
};

// How a RECV combines the message with its destination.
enum class LinkReduce : std::uint8_t {
    Copy = TPU_LINK_COPY, // dst = msg
    Sum = TPU_LINK_SUM,   // dst = dst + msg, elements of `type`
    Max = TPU_LINK_MAX,
    Min = TPU_LINK_MIN,
};

// The next message on `port` (its tag and length must be these) stored at, or reduced into, the
// unified buffer at `addr`, or with `host` host memory at device VA `addr`; `type` (Bf16, Int32,
// Fp32) only for a reduction.
struct LinkRecv {
    std::uint32_t port = 0;
    std::uint32_t tag = 0;
    std::uint64_t addr = 0;
    std::uint32_t bytes = 0;
    bool host = false;
    LinkReduce reduce = LinkReduce::Copy;
    DType type = DType::Fp32;
    // Spec 2.2 (TPU_F_LINK_SKIP_STALE): messages of other tags waiting before this one (left by
    // a failed job) are dropped instead of failing LINK_MISMATCH.
    bool skip_stale = false;
};

class ProgramBuilder {
  public:
    ProgramBuilder &dma_in(const DmaTransfer &transfer);      // host -> unified buffer
    ProgramBuilder &dma_out(const DmaTransfer &transfer);     // unified buffer -> host
    ProgramBuilder &dma_out_acc(const DmaTransfer &transfer); // accumulators -> host
    ProgramBuilder &load_weights(const WeightLoad &load);     // unified buffer -> array
    ProgramBuilder &load_weights(const HostWeightLoad &load); // host -> array
    ProgramBuilder &matmul(const MatmulStep &step);
    ProgramBuilder &activate(const ActivateStep &step);
    ProgramBuilder &vector(const VectorStep &step);
    ProgramBuilder &reduce(const ReduceStep &step);
    ProgramBuilder &transpose(const TransposeStep &step);
    ProgramBuilder &pool(const PoolStep &step);
    ProgramBuilder &send(const LinkSend &step); // spec 2.0: unified buffer or host -> link
    ProgramBuilder &recv(const LinkRecv &step); // spec 2.0: link -> (reduce into) UB or host
    ProgramBuilder &nop();
    ProgramBuilder &sync(); // waits until every earlier instruction has finished
    // Writes struct tpu_timestamp {cycle, tag, pc} to host_addr (device VA, 8-byte aligned).
    ProgramBuilder &timestamp(std::uint64_t host_addr, std::uint32_t tag);
    ProgramBuilder &halt();
    // Appends the instructions of another program verbatim.
    ProgramBuilder &append(const Program &program);

    std::size_t size() const { return program_.insns.size(); }
    bool empty() const { return program_.insns.empty(); }
    // Hands out the program built so far and leaves the builder empty.
    Program finish();

  private:
    ProgramBuilder &dma(std::uint8_t opcode, std::uint16_t flags, const DmaTransfer &transfer);
    ProgramBuilder &vpu(std::uint8_t opcode, DType type, std::uint16_t flags, std::uint32_t a_addr,
                        std::uint32_t a_stride, std::uint32_t b_addr, std::uint32_t b_stride,
                        std::uint32_t dst_addr, std::uint32_t dst_stride, std::uint32_t rows,
                        std::uint32_t cols);
    ProgramBuilder &push(const union tpu_insn &insn);

    Program program_;
};

} // namespace tpurt
