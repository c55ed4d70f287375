// SPDX-License-Identifier: MIT
// program_builder.cpp - encodes card instructions (union tpu_insn, tpu_hw.h) with range checks
// on every field.
#include "tpurt/program_builder.hpp"

#include "tpurt/error.hpp"

#include <limits>
#include <string>
#include <utility>

namespace tpurt {

namespace {

// Checks that a shape dimension fits an instruction's 16-bit rows/cols field and is non-zero.
std::uint16_t dim16(std::uint32_t value, const char *what) {
    if (value == 0 || value > std::numeric_limits<std::uint16_t>::max())
        throw Error(ErrorCode::InvalidArgument, std::string("instruction ") + what + " = " +
                                                    std::to_string(value) + " is outside 1..65535");
    return static_cast<std::uint16_t>(value);
}

std::uint32_t field32(std::uint64_t value, const char *what) {
    if (value > std::numeric_limits<std::uint32_t>::max())
        throw Error(ErrorCode::InvalidArgument, std::string("instruction ") + what + " = " +
                                                    std::to_string(value) +
                                                    " does not fit 32 bits");
    return static_cast<std::uint32_t>(value);
}

void require_matmul_input(DType type, const char *insn) {
    if (!is_matmul_input(type))
        throw Error(ErrorCode::InvalidArgument,
                    std::string(insn) + " takes int8 or bf16, not " + dtype_name(type));
}

union tpu_insn zeroed() {
    union tpu_insn insn;
    insn.raw[0] = insn.raw[1] = insn.raw[2] = insn.raw[3] = 0;
    return insn;
}

} // namespace

ProgramBuilder &ProgramBuilder::dma(std::uint8_t opcode, std::uint16_t flags,
                                    const DmaTransfer &transfer) {
    union tpu_insn insn = zeroed();
    insn.dma.opcode = opcode;
    insn.dma.dtype = static_cast<std::uint8_t>(transfer.type);
    insn.dma.flags = flags;
    insn.dma.rows = dim16(transfer.rows, "rows");
    insn.dma.cols = dim16(transfer.cols, "cols");
    insn.dma.host_addr = transfer.host_addr;
    insn.dma.host_stride = field32(transfer.host_stride, "host_stride");
    insn.dma.local_addr = transfer.local_addr;
    insn.dma.local_stride = transfer.local_stride;
    program_.insns.push_back(insn);
    return *this;
}

ProgramBuilder &ProgramBuilder::dma_in(const DmaTransfer &transfer) {
    return dma(TPU_OP_DMA_IN, 0, transfer);
}

ProgramBuilder &ProgramBuilder::dma_out(const DmaTransfer &transfer) {
    return dma(TPU_OP_DMA_OUT, 0, transfer);
}

ProgramBuilder &ProgramBuilder::dma_out_acc(const DmaTransfer &transfer) {
    if (transfer.type != DType::Int32 && transfer.type != DType::Fp32)
        throw Error(ErrorCode::InvalidArgument, std::string("DMA_OUT from the accumulators takes "
                                                            "int32 or fp32, not ") +
                                                    dtype_name(transfer.type));
    return dma(TPU_OP_DMA_OUT, TPU_F_SRC_ACC, transfer);
}

ProgramBuilder &ProgramBuilder::load_weights(const WeightLoad &load) {
    require_matmul_input(load.type, "LOAD_W");
    union tpu_insn insn = zeroed();
    insn.mxu.opcode = TPU_OP_LOAD_W;
    insn.mxu.dtype = static_cast<std::uint8_t>(load.type);
    insn.mxu.rows = dim16(load.rows, "rows");
    insn.mxu.cols = dim16(load.cols, "cols");
    insn.mxu.src_addr = load.src_addr;
    insn.mxu.src_stride = load.src_stride;
    program_.insns.push_back(insn);
    return *this;
}

ProgramBuilder &ProgramBuilder::matmul(const MatmulStep &step) {
    require_matmul_input(step.type, "MATMUL");
    union tpu_insn insn = zeroed();
    insn.mxu.opcode = TPU_OP_MATMUL;
    insn.mxu.dtype = static_cast<std::uint8_t>(step.type);
    insn.mxu.flags = step.accumulate ? TPU_F_ACCUMULATE : 0;
    insn.mxu.rows = dim16(step.rows, "rows");
    insn.mxu.cols = dim16(step.cols, "cols");
    insn.mxu.src_addr = step.src_addr;
    insn.mxu.src_stride = step.src_stride;
    insn.mxu.acc_addr = step.acc_addr;
    insn.mxu.acc_stride = step.acc_stride;
    program_.insns.push_back(insn);
    return *this;
}

ProgramBuilder &ProgramBuilder::halt() {
    union tpu_insn insn = zeroed();
    insn.hdr.opcode = TPU_OP_HALT;
    program_.insns.push_back(insn);
    return *this;
}

ProgramBuilder &ProgramBuilder::append(const Program &program) {
    program_.insns.insert(program_.insns.end(), program.insns.begin(), program.insns.end());
    return *this;
}

Program ProgramBuilder::finish() {
    return std::exchange(program_, Program{});
}

} // namespace tpurt
