// SPDX-License-Identifier: MIT
// program_fusion.cpp - joining a captured sequence's programs into few jobs, with a reset of the
// on-chip state each program may have written between two that share a job (program_fusion.hpp).
#include "exec/program_fusion.hpp"

#include "tpurt/error.hpp"

#include <algorithm>

namespace tpurt::detail {

namespace {

// Bytes [begin, end) of an on-chip memory that a program may have written.
struct Extent {
    std::uint64_t begin = UINT64_MAX, end = 0;

    bool empty() const { return begin >= end; }
    // rows of `row_bytes` bytes, `stride` apart, from `addr`.
    void add(std::uint64_t addr, std::uint64_t rows, std::uint64_t stride,
             std::uint64_t row_bytes) {
        if (rows == 0 || row_bytes == 0)
            return;
        begin = std::min(begin, addr);
        end = std::max(end, addr + (rows - 1) * stride + row_bytes);
    }
};

struct Written {
    Extent ub, acc;
};

std::uint64_t size_of(std::uint8_t dtype) {
    return element_size(static_cast<DType>(dtype));
}

// Adds what `insn` may write on chip to `w`; `weight_cols` is the loaded tile's N.
void add_writes(const union tpu_insn &insn, std::uint64_t weight_cols, Written &w) {
    switch (insn.hdr.opcode) {
    case TPU_OP_DMA_IN:
        w.ub.add(insn.dma.local_addr, insn.dma.rows, insn.dma.local_stride,
                 insn.dma.cols * size_of(insn.hdr.dtype));
        break;
    case TPU_OP_MATMUL:
        w.acc.add(insn.mxu.acc_addr, insn.mxu.rows, insn.mxu.acc_stride, 4 * weight_cols);
        break;
    case TPU_OP_ACTIVATE:
        w.ub.add(insn.act.dst_addr, insn.act.rows, insn.act.dst_stride,
                 insn.act.cols * size_of(insn.hdr.dtype));
        break;
    case TPU_OP_VECTOR:
        w.ub.add(insn.vec.dst_addr, insn.vec.rows, insn.vec.dst_stride,
                 insn.vec.cols * size_of(insn.hdr.dtype));
        break;
    case TPU_OP_REDUCE: // a SUM's elements are 4 bytes whatever the input type
        w.ub.add(insn.vec.dst_addr, insn.vec.rows, insn.vec.dst_stride,
                 std::max<std::uint64_t>(4, size_of(insn.hdr.dtype)));
        break;
    case TPU_OP_TRANSPOSE:
        w.ub.add(insn.vec.dst_addr, insn.vec.cols, insn.vec.dst_stride,
                 insn.vec.rows * size_of(insn.hdr.dtype));
        break;
    case TPU_OP_POOL:
        w.ub.add(insn.pool.dst_addr, insn.pool.rows, insn.pool.dst_row_stride,
                 std::uint64_t{insn.pool.cols} * insn.pool.channels * size_of(insn.hdr.dtype));
        break;
    default: // DMA_OUT, LOAD_W, NOP, SYNC, TIMESTAMP write nothing on chip
        break;
    }
}

// The instructions of one job's program up to its first HALT (nothing after it runs), and
// what they may write on chip.
std::span<const union tpu_insn> body(const Program &program, std::size_t index, Written &w) {
    std::uint64_t weight_cols = 0;
    std::size_t n = 0;
    for (; n < program.insns.size(); ++n) {
        const union tpu_insn &insn = program.insns[n];
        const std::uint8_t op = insn.hdr.opcode;
        if (op == TPU_OP_HALT)
            break;
        if (op == TPU_OP_SEND || op == TPU_OP_RECV)
            throw Error(ErrorCode::Unsupported,
                        "captured program " + std::to_string(index) +
                            " sends or receives over a link: collectives cannot be captured "
                            "(queue them outside begin_capture() / end_capture())");
        if (op == TPU_OP_LOAD_W)
            weight_cols = (insn.hdr.flags & TPU_F_W_HOST) ? insn.dma.cols : insn.mxu.cols;
        add_writes(insn, weight_cols, w);
    }
    return {program.insns.data(), n};
}

// Zeros over `e` of the unified buffer: int8 rows of up to `row` bytes from the zero region.
void clear_ub(ProgramBuilder &b, Extent e, const FusionTarget &t) {
    constexpr std::uint64_t row = 32768;
    while (!e.empty()) {
        const std::uint64_t len = e.end - e.begin;
        const std::uint64_t cols = std::min(len, row);
        const std::uint64_t rows = std::min<std::uint64_t>(len / cols, t.limits.ub_bytes / cols);
        b.dma_in({.type = DType::Int8,
                  .host_addr = t.zeros,
                  .host_stride = cols,
                  .local_addr = static_cast<std::uint32_t>(e.begin),
                  .local_stride = static_cast<std::uint32_t>(cols),
                  .rows = static_cast<std::uint32_t>(rows),
                  .cols = static_cast<std::uint32_t>(cols)});
        e.begin += rows * cols;
    }
}

// Zeros over `e` of the accumulators (4-byte aligned): MATMULs of zero activations (the unified
// buffer is zero after clear_ub) through a zero 1 x N tile, one accumulator row of N per row.
void clear_acc(ProgramBuilder &b, Extent e, const FusionTarget &t) {
    e.begin &= ~std::uint64_t{3};
    e.end = std::min<std::uint64_t>((e.end + 3) & ~std::uint64_t{3}, t.limits.acc_bytes);
    const std::uint64_t size = element_size(t.zero_type);
    std::uint64_t loaded = 0;
    while (!e.empty()) {
        const std::uint64_t words = (e.end - e.begin) / 4;
        const std::uint64_t n = std::min<std::uint64_t>(words, t.limits.mxu_cols);
        const std::uint64_t rows = std::min<std::uint64_t>(words / n, 65535);
        if (n != loaded)
            b.load_weights(HostWeightLoad{.type = t.zero_type,
                                          .host_addr = t.zeros,
                                          .host_stride = n * size,
                                          .rows = 1,
                                          .cols = static_cast<std::uint32_t>(n)});
        loaded = n;
        b.matmul({.type = t.zero_type,
                  .src_addr = 0,
                  .src_stride = static_cast<std::uint32_t>(size),
                  .rows = static_cast<std::uint32_t>(rows),
                  .cols = 1,
                  .acc_addr = static_cast<std::uint32_t>(e.begin),
                  .acc_stride = static_cast<std::uint32_t>(4 * n)});
        e.begin += rows * 4 * n;
    }
}

} // namespace

std::vector<Program> fuse_programs(std::span<const Program> programs, const FusionTarget &target) {
    const std::size_t max_insns = target.max_program_bytes / TPU_INSN_SIZE;
    const auto halt = [](Program &p) {
        union tpu_insn end = {};
        end.hdr.opcode = TPU_OP_HALT;
        p.insns.push_back(end);
    };
    std::vector<Program> jobs;
    Program current;
    Written dirty; // by the current job's last program
    for (std::size_t i = 0; i < programs.size(); ++i) {
        Written writes;
        const std::span<const union tpu_insn> insns = body(programs[i], i, writes);
        if (!current.insns.empty()) {
            ProgramBuilder reset;
            reset.sync();
            clear_ub(reset, dirty.ub, target);
            if (!dirty.acc.empty())
                clear_acc(reset, dirty.acc, target);
            const Program r = reset.finish();
            // The reset, the program and a HALT must fit; else this program starts a job.
            if (current.insns.size() + r.insns.size() + insns.size() + 1 <= max_insns) {
                current.insns.insert(current.insns.end(), r.insns.begin(), r.insns.end());
            } else {
                halt(current);
                jobs.push_back(std::move(current));
                current = Program{};
            }
        }
        current.insns.insert(current.insns.end(), insns.begin(), insns.end());
        dirty = writes;
    }
    if (!current.insns.empty() || jobs.empty()) {
        halt(current);
        jobs.push_back(std::move(current));
    }
    return jobs;
}

} // namespace tpurt::detail
