// SPDX-License-Identifier: MIT
// program_builder.cpp - encodes card instructions (union tpu_insn, tpu_hw.h) with range checks
// on every field.
#include "tpurt/codegen/program_builder.hpp"

#include "codegen/isa_limits.hpp"
#include "tpurt/error.hpp"

#include <bit>
#include <limits>
#include <string>
#include <utility>

namespace tpurt {

namespace {

[[noreturn]] void refuse(const std::string &message) {
    throw Error(ErrorCode::InvalidArgument, "instruction " + message);
}

// Checks that a shape dimension fits an instruction's 16-bit field and is non-zero.
std::uint16_t dim16(std::uint32_t value, const char *what) {
    if (value == 0 || value > max_dim)
        refuse(std::string(what) + " = " + std::to_string(value) + " is outside 1.." +
               std::to_string(max_dim));
    return static_cast<std::uint16_t>(value);
}

// Checks that a window or stride fits POOL's 8-bit fields and is non-zero.
std::uint8_t dim8(std::uint32_t value, const char *what) {
    if (value == 0 || value > std::numeric_limits<std::uint8_t>::max())
        refuse(std::string(what) + " = " + std::to_string(value) + " is outside 1..255");
    return static_cast<std::uint8_t>(value);
}

std::uint16_t field16(std::uint32_t value, const char *what) {
    if (value > std::numeric_limits<std::uint16_t>::max())
        refuse(std::string(what) + " = " + std::to_string(value) + " does not fit 16 bits");
    return static_cast<std::uint16_t>(value);
}

std::uint32_t field32(std::uint64_t value, const char *what) {
    if (value > std::numeric_limits<std::uint32_t>::max())
        refuse(std::string(what) + " = " + std::to_string(value) + " does not fit 32 bits");
    return static_cast<std::uint32_t>(value);
}

std::uint8_t dtype_field(DType type, const char *insn) {
    if (element_size(type) == 0)
        refuse(std::string(insn) + ": unknown dtype " + std::to_string(static_cast<int>(type)));
    return static_cast<std::uint8_t>(type);
}

std::uint8_t matmul_dtype(DType type, const char *insn) {
    if (!is_matmul_input(type))
        refuse(std::string(insn) + " takes int8, bf16 or fp32, not " + dtype_name(type));
    return static_cast<std::uint8_t>(type);
}

// An operation code in bits 3..0 of the flags, at most `last`.
std::uint16_t op_field(unsigned value, unsigned last, const char *insn) {
    if (value > last)
        refuse(std::string(insn) + ": unknown operation " + std::to_string(value));
    return static_cast<std::uint16_t>(value);
}

union tpu_insn zeroed() {
    union tpu_insn insn;
    insn.raw[0] = insn.raw[1] = insn.raw[2] = insn.raw[3] = 0;
    return insn;
}

union tpu_insn opcode_only(std::uint8_t opcode) {
    union tpu_insn insn = zeroed();
    insn.hdr.opcode = opcode;
    return insn;
}

} // namespace

ProgramBuilder &ProgramBuilder::push(const union tpu_insn &insn) {
    program_.insns.push_back(insn);
    return *this;
}

ProgramBuilder &ProgramBuilder::dma(std::uint8_t opcode, std::uint16_t flags,
                                    const DmaTransfer &transfer) {
    union tpu_insn insn = zeroed();
    insn.dma.opcode = opcode;
    insn.dma.dtype = dtype_field(transfer.type, "DMA");
    insn.dma.flags = flags;
    insn.dma.rows = dim16(transfer.rows, "rows");
    insn.dma.cols = dim16(transfer.cols, "cols");
    insn.dma.host_addr = transfer.host_addr;
    insn.dma.host_stride = field32(transfer.host_stride, "host_stride");
    insn.dma.local_addr = transfer.local_addr;
    insn.dma.local_stride = transfer.local_stride;
    return push(insn);
}

ProgramBuilder &ProgramBuilder::dma_in(const DmaTransfer &transfer) {
    return dma(TPU_OP_DMA_IN, 0, transfer);
}

ProgramBuilder &ProgramBuilder::dma_out(const DmaTransfer &transfer) {
    return dma(TPU_OP_DMA_OUT, 0, transfer);
}

ProgramBuilder &ProgramBuilder::dma_out_acc(const DmaTransfer &transfer) {
    if (transfer.type != DType::Int32 && transfer.type != DType::Fp32)
        refuse(std::string("DMA_OUT from the accumulators takes int32 or fp32, not ") +
               dtype_name(transfer.type));
    return dma(TPU_OP_DMA_OUT, TPU_F_SRC_ACC, transfer);
}

ProgramBuilder &ProgramBuilder::load_weights(const WeightLoad &load) {
    union tpu_insn insn = zeroed();
    insn.mxu.opcode = TPU_OP_LOAD_W;
    insn.mxu.dtype = matmul_dtype(load.type, "LOAD_W");
    insn.mxu.flags = load.transposed ? TPU_F_W_TRANSPOSE : 0;
    insn.mxu.rows = dim16(load.rows, "rows");
    insn.mxu.cols = dim16(load.cols, "cols");
    insn.mxu.src_addr = load.src_addr;
    insn.mxu.src_stride = load.src_stride;
    return push(insn);
}

ProgramBuilder &ProgramBuilder::load_weights(const HostWeightLoad &load) {
    union tpu_insn insn = zeroed();
    insn.dma.opcode = TPU_OP_LOAD_W;
    insn.dma.dtype = matmul_dtype(load.type, "LOAD_W");
    insn.dma.flags = TPU_F_W_HOST | (load.transposed ? TPU_F_W_TRANSPOSE : 0);
    insn.dma.rows = dim16(load.rows, "rows");
    insn.dma.cols = dim16(load.cols, "cols");
    insn.dma.host_addr = load.host_addr;
    insn.dma.host_stride = field32(load.host_stride, "host_stride");
    return push(insn);
}

ProgramBuilder &ProgramBuilder::matmul(const MatmulStep &step) {
    if (step.row_group == 0 && step.group_stride != 0)
        refuse("MATMUL group_stride = " + std::to_string(step.group_stride) +
               " without a row_group");
    union tpu_insn insn = zeroed();
    insn.mxu.opcode = TPU_OP_MATMUL;
    insn.mxu.dtype = matmul_dtype(step.type, "MATMUL");
    insn.mxu.flags = step.accumulate ? TPU_F_ACCUMULATE : 0;
    insn.mxu.rows = dim16(step.rows, "rows");
    insn.mxu.cols = dim16(step.cols, "cols");
    insn.mxu.src_addr = step.src_addr;
    insn.mxu.src_stride = step.src_stride;
    insn.mxu.acc_addr = step.acc_addr;
    insn.mxu.acc_stride = step.acc_stride;
    insn.mxu.row_group = field16(step.row_group, "row_group");
    insn.mxu.group_stride = step.group_stride;
    return push(insn);
}

ProgramBuilder &ProgramBuilder::activate(const ActivateStep &step) {
    const std::uint16_t function =
        op_field(static_cast<unsigned>(step.function), TPU_ACT_ERF, "ACTIVATE");
    union tpu_insn insn = zeroed();
    insn.act.opcode = TPU_OP_ACTIVATE;
    insn.act.dtype = dtype_field(step.out_type, "ACTIVATE");
    insn.act.flags = static_cast<std::uint16_t>(function | (step.bias_addr ? TPU_F_ACT_BIAS : 0) |
                                                (step.src_int32 ? TPU_F_ACT_SRC_INT32 : 0));
    insn.act.rows = dim16(step.rows, "rows");
    insn.act.cols = dim16(step.cols, "cols");
    insn.act.acc_addr = step.acc_addr;
    insn.act.acc_stride = step.acc_stride;
    insn.act.dst_addr = step.dst_addr;
    insn.act.dst_stride = step.dst_stride;
    insn.act.bias_addr = step.bias_addr.value_or(0);
    insn.act.scale = std::bit_cast<std::uint32_t>(step.scale);
    return push(insn);
}

ProgramBuilder &ProgramBuilder::vpu(std::uint8_t opcode, DType type, std::uint16_t flags,
                                    std::uint32_t a_addr, std::uint32_t a_stride,
                                    std::uint32_t b_addr, std::uint32_t b_stride,
                                    std::uint32_t dst_addr, std::uint32_t dst_stride,
                                    std::uint32_t rows, std::uint32_t cols) {
    union tpu_insn insn = zeroed();
    insn.vec.opcode = opcode;
    insn.vec.dtype = dtype_field(type, "VECTOR/REDUCE/TRANSPOSE");
    insn.vec.flags = flags;
    insn.vec.rows = dim16(rows, "rows");
    insn.vec.cols = dim16(cols, "cols");
    insn.vec.a_addr = a_addr;
    insn.vec.a_stride = a_stride;
    insn.vec.b_addr = b_addr;
    insn.vec.b_stride = b_stride;
    insn.vec.dst_addr = dst_addr;
    insn.vec.dst_stride = dst_stride;
    return push(insn);
}

ProgramBuilder &ProgramBuilder::vector(const VectorStep &s) {
    const auto flags =
        static_cast<std::uint16_t>(op_field(static_cast<unsigned>(s.op), TPU_VOP_EQ, "VECTOR") |
                                   (s.b_column ? TPU_F_VEC_B_COL : 0));
    return vpu(TPU_OP_VECTOR, s.type, flags, s.a_addr, s.a_stride, s.b_addr, s.b_stride, s.dst_addr,
               s.dst_stride, s.rows, s.cols);
}

ProgramBuilder &ProgramBuilder::reduce(const ReduceStep &s) {
    return vpu(TPU_OP_REDUCE, s.type, op_field(static_cast<unsigned>(s.op), TPU_ROP_MAX, "REDUCE"),
               s.a_addr, s.a_stride, 0, 0, s.dst_addr, s.dst_stride, s.rows, s.cols);
}

ProgramBuilder &ProgramBuilder::transpose(const TransposeStep &s) {
    return vpu(TPU_OP_TRANSPOSE, s.type, 0, s.src_addr, s.src_stride, 0, 0, s.dst_addr,
               s.dst_stride, s.rows, s.cols);
}

ProgramBuilder &ProgramBuilder::pool(const PoolStep &s) {
    union tpu_insn insn = zeroed();
    insn.pool.opcode = TPU_OP_POOL;
    insn.pool.dtype = dtype_field(s.type, "POOL");
    insn.pool.flags = op_field(static_cast<unsigned>(s.op), TPU_POOL_AVG, "POOL");
    insn.pool.rows = dim16(s.out_rows, "out_rows");
    insn.pool.cols = dim16(s.out_cols, "out_cols");
    insn.pool.channels = dim16(s.channels, "channels");
    insn.pool.win_h = dim8(s.win_h, "win_h");
    insn.pool.win_w = dim8(s.win_w, "win_w");
    insn.pool.stride_h = dim8(s.stride_h, "stride_h");
    insn.pool.stride_w = dim8(s.stride_w, "stride_w");
    insn.pool.src_addr = s.src_addr;
    insn.pool.src_row_stride = s.src_row_stride;
    insn.pool.dst_addr = s.dst_addr;
    insn.pool.dst_row_stride = s.dst_row_stride;
    return push(insn);
}

namespace {

union tpu_insn link_insn(std::uint8_t opcode, std::uint32_t port, std::uint32_t tag,
                         std::uint64_t addr, std::uint32_t bytes, bool host) {
    const char *name = opcode == TPU_OP_SEND ? "SEND" : "RECV";
    if (port >= TPU_ICI_MAX_PORTS)
        refuse(std::string(name) + ": port " + std::to_string(port) + " is outside 0.." +
               std::to_string(TPU_ICI_MAX_PORTS - 1));
    if (bytes == 0 || bytes > TPU_ICI_MAX_BYTES)
        refuse(std::string(name) + ": " + std::to_string(bytes) + " bytes is outside 1.." +
               std::to_string(TPU_ICI_MAX_BYTES));
    union tpu_insn insn = zeroed();
    insn.link.opcode = opcode;
    insn.link.flags = host ? TPU_F_LINK_HOST : 0;
    insn.link.port = static_cast<std::uint8_t>(port);
    insn.link.tag = tag;
    insn.link.len = bytes;
    insn.link.addr = addr;
    return insn;
}

} // namespace

ProgramBuilder &ProgramBuilder::send(const LinkSend &s) {
    return push(link_insn(TPU_OP_SEND, s.port, s.tag, s.addr, s.bytes, s.host));
}

ProgramBuilder &ProgramBuilder::recv(const LinkRecv &s) {
    union tpu_insn insn = link_insn(TPU_OP_RECV, s.port, s.tag, s.addr, s.bytes, s.host);
    if (s.skip_stale)
        insn.link.flags |= TPU_F_LINK_SKIP_STALE;
    if (s.reduce != LinkReduce::Copy) {
        if (s.type != DType::Bf16 && s.type != DType::Int32 && s.type != DType::Fp32)
            refuse(std::string("RECV reduces bf16, int32 or fp32, not ") + dtype_name(s.type));
        if (s.reduce != LinkReduce::Sum && s.reduce != LinkReduce::Max &&
            s.reduce != LinkReduce::Min)
            refuse("RECV: unknown reduce op " + std::to_string(static_cast<int>(s.reduce)));
        insn.link.dtype = static_cast<std::uint8_t>(s.type);
        insn.link.flags |= static_cast<std::uint16_t>(s.reduce);
    }
    return push(insn);
}

ProgramBuilder &ProgramBuilder::nop() {
    return push(opcode_only(TPU_OP_NOP));
}

ProgramBuilder &ProgramBuilder::sync() {
    return push(opcode_only(TPU_OP_SYNC));
}

ProgramBuilder &ProgramBuilder::timestamp(std::uint64_t host_addr, std::uint32_t tag) {
    union tpu_insn insn = zeroed();
    insn.ts.opcode = TPU_OP_TIMESTAMP;
    insn.ts.tag = tag;
    insn.ts.host_addr = host_addr;
    return push(insn);
}

ProgramBuilder &ProgramBuilder::halt() {
    return push(opcode_only(TPU_OP_HALT));
}

ProgramBuilder &ProgramBuilder::append(const Program &program) {
    program_.insns.insert(program_.insns.end(), program.insns.begin(), program.insns.end());
    return *this;
}

Program ProgramBuilder::finish() {
    return std::exchange(program_, Program{});
}

} // namespace tpurt
