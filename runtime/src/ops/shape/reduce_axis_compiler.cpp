// SPDX-License-Identifier: MIT
// reduce_axis_compiler.cpp - sums, maxima and means over one axis of a tensor as card programs
// (see axis_compiler.hpp): whole rows through REDUCE for the last axis, DMA_IN of strided
// columns, TRANSPOSE and REDUCE for any other.
#include "tpurt/codegen/axis_compiler.hpp"

#include "codegen/isa_limits.hpp"
#include "codegen/program_splitter.hpp"
#include "codegen/train_block.hpp"
#include "tpurt/codegen/vector_compiler.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <string>

namespace tpurt {

using namespace train_detail;

namespace {

std::uint32_t align64(std::uint64_t v) {
    return static_cast<std::uint32_t>((v + 63) / 64 * 64);
}

std::string op_name(const AxisReduceProblem &p) {
    return p.mean ? "mean" : p.op == ReduceOp::Sum ? "sum" : "max";
}

} // namespace

DType axis_reduce_result_type(const AxisReduceProblem &p) {
    return p.mean ? DType::Fp32 : reduce_result_type(p.type, p.op);
}

std::vector<Program> compile_reduce_axis(const AxisReduceProblem &p, const ArrayLimits &limits,
                                         std::size_t max_program_bytes) {
    const std::string name = op_name(p) + " over an axis";
    if (p.outer == 0 || p.length == 0 || p.inner == 0)
        throw Error(ErrorCode::InvalidArgument, name + ": every dimension must be non-zero");
    if (p.mean && (p.op != ReduceOp::Sum || (p.type != DType::Bf16 && p.type != DType::Fp32)))
        throw Error(ErrorCode::InvalidArgument,
                    name + " of " + dtype_name(p.type) + ": a mean needs bf16 or fp32 values");
    const DType out_type = axis_reduce_result_type(p);
    const std::uint64_t e = element_size(p.type), oe = element_size(out_type);
    const std::uint64_t ub = limits.ub_bytes > data_ub + 128 ? limits.ub_bytes - data_ub - 128 : 0;
    const std::uint64_t acc_rows = p.mean ? limits.acc_bytes / 4 : max_dim;
    const float inv = 1.0f / static_cast<float>(p.length);
    const bool last = p.inner == 1;
    // Rows of one REDUCE: whole rows of the tensor (last axis) or columns of one outer block.
    const std::uint64_t per_row = last ? p.length * e + 4 : 2 * p.length * e + 4;
    const std::uint64_t tile =
        std::min<std::uint64_t>({last ? p.outer : p.inner, max_dim, ub / per_row, acc_rows});
    if (p.length > max_dim || tile == 0)
        unsupported(name + " of length " + std::to_string(p.length), limits);
    const auto dma = [](DType type, std::uint64_t host, std::uint64_t host_stride,
                        std::uint32_t local, std::uint32_t rows, std::uint32_t cols) {
        const auto row = static_cast<std::uint32_t>(cols * element_size(type));
        return DmaTransfer{.type = type,
                           .host_addr = host,
                           .host_stride = host_stride,
                           .local_addr = local,
                           .local_stride = row,
                           .rows = rows,
                           .cols = cols};
    };
    // REDUCE rows x length at `src` (rows length apart), the mean's scale, DMA_OUT of the rows
    // results to `host`.
    const auto finish = [&](Block &b, std::uint32_t src, std::uint32_t red, std::uint32_t rows,
                            std::uint64_t host) {
        b.builder().reduce({.type = p.type,
                            .op = p.op,
                            .a_addr = src,
                            .a_stride = static_cast<std::uint32_t>(p.length * e),
                            .dst_addr = red,
                            .dst_stride = static_cast<std::uint32_t>(
                                p.op == ReduceOp::Sum ? 4 : element_size(p.type)),
                            .rows = rows,
                            .cols = p.length});
        if (p.mean)
            b.apply(Activation::None, inv, red, red, rows);
        b.builder().dma_out(dma(out_type, host, rows * oe, red, 1, rows));
    };
    ProgramSplitter programs(max_program_bytes, p.mean ? start_program() : Program{});
    const std::uint32_t in = data_ub;
    if (last) {
        for (std::uint64_t r0 = 0; r0 < p.outer; r0 += tile) {
            const auto rows =
                static_cast<std::uint32_t>(std::min<std::uint64_t>(tile, p.outer - r0));
            Block b;
            b.builder().dma_in(
                dma(p.type, p.a_addr + r0 * p.length * e, p.length * e, in, rows, p.length));
            finish(b, in, align64(in + rows * p.length * e), rows, p.dst_addr + r0 * oe);
            programs.add(b.finish());
        }
        return programs.finish();
    }
    for (std::uint64_t o = 0; o < p.outer; ++o) {
        for (std::uint64_t i0 = 0; i0 < p.inner; i0 += tile) {
            const auto cols =
                static_cast<std::uint32_t>(std::min<std::uint64_t>(tile, p.inner - i0));
            const std::uint32_t tr = align64(in + p.length * cols * e);
            const std::uint32_t red = align64(tr + p.length * cols * e);
            Block b;
            b.builder().dma_in(dma(p.type, p.a_addr + (o * p.length * p.inner + i0) * e,
                                   p.inner * e, in, p.length, cols));
            b.builder().transpose({.type = p.type,
                                   .src_addr = in,
                                   .src_stride = static_cast<std::uint32_t>(cols * e),
                                   .dst_addr = tr,
                                   .dst_stride = static_cast<std::uint32_t>(p.length * e),
                                   .rows = p.length,
                                   .cols = cols});
            finish(b, tr, red, cols, p.dst_addr + (o * p.inner + i0) * oe);
            programs.add(b.finish());
        }
    }
    return programs.finish();
}

} // namespace tpurt
