// SPDX-License-Identifier: MIT
// matmul_compiler.cpp - emits the card programs of a tiled matmul, with or without an
// ACTIVATE epilogue (see matmul_compiler.hpp).
#include "tpurt/codegen/matmul_compiler.hpp"

#include "codegen/program_splitter.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <string>

namespace tpurt {

namespace {

std::uint64_t row_stride(std::uint64_t given, std::uint64_t row_bytes, const char *name) {
    if (given == 0)
        return row_bytes;
    if (given < row_bytes)
        throw Error(ErrorCode::InvalidArgument,
                    std::string("matmul ") + name + " stride " + std::to_string(given) +
                        " is shorter than a row (" + std::to_string(row_bytes) + " bytes)");
    return given;
}

// The element type of C: the accumulators', or the epilogue's output type.
DType c_type(const MatmulProblem &problem) {
    return problem.epilogue ? problem.epilogue->out_type : accumulator_type(problem.type);
}

// Emits the instructions of one accumulator block: rows [m0, m0 + rows) of C by the column
// tiles of one group starting at column n0, every k tile of the weights, the A tiles streamed
// through each (or loaded once per k tile when they fit at once), then the block out to C.
class BlockEmitter {
  public:
    BlockEmitter(const MatmulProblem &problem, const MatmulTiling &tiling, std::uint32_t ub_bytes)
        : p_(problem), t_(tiling), ub_bytes_(ub_bytes), elem_(element_size(problem.type)),
          acc_elem_(element_size(accumulator_type(problem.type))),
          c_elem_(element_size(c_type(problem))),
          a_stride_(row_stride(problem.a_stride, std::uint64_t{problem.k} * elem_, "A")),
          b_stride_(row_stride(problem.b_stride, std::uint64_t{problem.n} * elem_, "B")),
          c_stride_(row_stride(problem.c_stride, std::uint64_t{problem.n} * c_elem_, "C")) {}

    // Returns the number of weight tiles loaded.
    std::uint64_t emit(ProgramBuilder &out, std::uint32_t m0, std::uint32_t rows,
                       std::uint32_t n0) const {
        const std::uint32_t group_end = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(p_.n, n0 + std::uint64_t{t_.group_n} * t_.tile_n));
        const bool a_resident = rows <= t_.tile_m;
        // Resident A tiles go side by side (tile k0 at column k0 of rows of all K) when the
        // block's A fits at once, so that no DMA overwrites a tile a later MATMUL of the block
        // may read: the card can overlap the next tile's DMA with this one's MATMULs, and fast
        // mode reads the rows in place. Otherwise each k tile reuses the same place.
        const bool side_by_side =
            a_resident && t_.ub_a_offset + std::uint64_t{rows} * p_.k * elem_ <= ub_bytes_;
        std::uint64_t weight_loads = 0;
        for (std::uint32_t k0 = 0; k0 < p_.k; k0 += t_.tile_k) {
            const std::uint32_t depth = std::min(t_.tile_k, p_.k - k0);
            bool a_loaded = false;
            for (std::uint32_t col = n0; col < group_end; col += t_.tile_n) {
                const std::uint32_t cols = std::min(t_.tile_n, group_end - col);
                load_weights(out, k0, depth, col, cols);
                ++weight_loads;
                for (std::uint32_t r = 0; r < rows; r += t_.tile_m) {
                    const std::uint32_t tile_rows = std::min(t_.tile_m, rows - r);
                    const std::uint32_t a_addr = t_.ub_a_offset + (side_by_side ? k0 * elem_ : 0);
                    const std::uint32_t a_stride = (side_by_side ? p_.k : depth) * elem_;
                    if (!(a_resident && a_loaded))
                        load_a(out, m0 + r, tile_rows, k0, depth, a_addr, a_stride);
                    a_loaded = true;
                    out.matmul({.type = p_.type,
                                .src_addr = a_addr,
                                .src_stride = a_stride,
                                .rows = tile_rows,
                                .cols = depth,
                                .acc_addr = r * t_.acc_stride + (col - n0) * acc_elem_,
                                .acc_stride = t_.acc_stride,
                                .accumulate = k0 > 0});
                }
            }
        }
        if (p_.epilogue)
            activate_out(out, m0, rows, n0, group_end - n0);
        else
            out.dma_out_acc({.type = accumulator_type(p_.type),
                             .host_addr = p_.c_addr + m0 * c_stride_ + n0 * acc_elem_,
                             .host_stride = c_stride_,
                             .local_addr = 0,
                             .local_stride = t_.acc_stride,
                             .rows = rows,
                             .cols = group_end - n0});
        return weight_loads;
    }

  private:
    // The finished block through ACTIVATE into C, in slices of columns (bias at UB 0) and rows
    // (the activated values after the bias) that fit the unified buffer.
    void activate_out(ProgramBuilder &out, std::uint32_t m0, std::uint32_t rows, std::uint32_t n0,
                      std::uint32_t cols) const {
        const MatmulEpilogue &e = *p_.epilogue;
        const std::uint32_t bias_elem = e.bias_addr ? 4 : 0;
        const std::uint32_t slice = std::min(cols, ub_bytes_ / (bias_elem + c_elem_));
        for (std::uint32_t c0 = 0; c0 < cols; c0 += slice) {
            const std::uint32_t width = std::min(slice, cols - c0);
            const std::uint32_t bias_bytes = width * bias_elem;
            const std::uint32_t row_bytes = width * c_elem_;
            if (e.bias_addr)
                out.dma_in({.type = DType::Fp32,
                            .host_addr = *e.bias_addr + std::uint64_t{n0 + c0} * 4,
                            .host_stride = bias_bytes,
                            .local_addr = 0,
                            .local_stride = bias_bytes,
                            .rows = 1,
                            .cols = width});
            const std::uint32_t chunk = std::min((ub_bytes_ - bias_bytes) / row_bytes, rows);
            for (std::uint32_t r0 = 0; r0 < rows; r0 += chunk) {
                const std::uint32_t height = std::min(chunk, rows - r0);
                out.activate(
                    {.out_type = e.out_type,
                     .function = e.function,
                     .src_int32 = p_.type == DType::Int8,
                     .acc_addr = r0 * t_.acc_stride + c0 * acc_elem_,
                     .acc_stride = t_.acc_stride,
                     .dst_addr = bias_bytes,
                     .dst_stride = row_bytes,
                     .rows = height,
                     .cols = width,
                     .bias_addr = e.bias_addr ? std::optional<std::uint32_t>(0) : std::nullopt,
                     .scale = e.scale});
                out.dma_out({.type = e.out_type,
                             .host_addr = p_.c_addr + (m0 + r0) * c_stride_ +
                                          std::uint64_t{n0 + c0} * c_elem_,
                             .host_stride = c_stride_,
                             .local_addr = bias_bytes,
                             .local_stride = row_bytes,
                             .rows = height,
                             .cols = width});
            }
        }
    }

    // B[k0 .. k0 + depth)[col .. col + cols) into the unified buffer at 0, then into the array.
    void load_weights(ProgramBuilder &out, std::uint32_t k0, std::uint32_t depth, std::uint32_t col,
                      std::uint32_t cols) const {
        const std::uint32_t w_stride = cols * elem_;
        out.dma_in({.type = p_.type,
                    .host_addr = p_.b_addr + k0 * b_stride_ + std::uint64_t{col} * elem_,
                    .host_stride = b_stride_,
                    .local_addr = 0,
                    .local_stride = w_stride,
                    .rows = depth,
                    .cols = cols});
        out.load_weights(
            {.type = p_.type, .src_addr = 0, .src_stride = w_stride, .rows = depth, .cols = cols});
    }

    // A[row .. row + a_rows)[k0 .. k0 + depth) into the unified buffer after the weights, at
    // ub_addr with rows ub_stride apart.
    void load_a(ProgramBuilder &out, std::uint32_t row, std::uint32_t a_rows, std::uint32_t k0,
                std::uint32_t depth, std::uint32_t ub_addr, std::uint32_t ub_stride) const {
        out.dma_in({.type = p_.type,
                    .host_addr = p_.a_addr + row * a_stride_ + std::uint64_t{k0} * elem_,
                    .host_stride = a_stride_,
                    .local_addr = ub_addr,
                    .local_stride = ub_stride,
                    .rows = a_rows,
                    .cols = depth});
    }

  private:
    const MatmulProblem &p_;
    const MatmulTiling &t_;
    std::uint32_t ub_bytes_;
    std::uint32_t elem_;
    std::uint32_t acc_elem_;
    std::uint32_t c_elem_;
    std::uint64_t a_stride_;
    std::uint64_t b_stride_;
    std::uint64_t c_stride_;
};

} // namespace

MatmulPlan compile_matmul(const MatmulProblem &problem, const ArrayLimits &limits,
                          std::size_t max_program_bytes) {
    MatmulPlan plan;
    plan.tiling = choose_matmul_tiling(problem.type, problem.m, problem.k, problem.n, limits,
                                       max_program_bytes);
    const MatmulTiling &t = plan.tiling;
    if (problem.epilogue) {
        const DType out = problem.epilogue->out_type;
        if (element_size(out) == 0)
            throw Error(ErrorCode::InvalidArgument, "matmul epilogue: unknown output type");
        if (limits.ub_bytes < element_size(out) + (problem.epilogue->bias_addr ? 4 : 0))
            throw Error(ErrorCode::Unsupported,
                        "matmul epilogue does not fit the card: unified buffer of " +
                            std::to_string(limits.ub_bytes) + " bytes");
    }
    const BlockEmitter emitter(problem, t, limits.ub_bytes);
    const std::size_t max_insns = max_program_bytes / TPU_INSN_SIZE;

    ProgramSplitter programs(max_program_bytes);
    ProgramBuilder block;
    const std::uint64_t group_cols = std::uint64_t{t.group_n} * t.tile_n;
    for (std::uint64_t m0 = 0; m0 < problem.m; m0 += t.block_m) {
        const auto rows =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(t.block_m, problem.m - m0));
        for (std::uint64_t n0 = 0; n0 < problem.n; n0 += group_cols) {
            plan.weight_loads += emitter.emit(block, static_cast<std::uint32_t>(m0), rows,
                                              static_cast<std::uint32_t>(n0));
            if (block.size() + 1 > max_insns)
                throw Error(ErrorCode::Unsupported, "matmul block of " +
                                                        std::to_string(block.size()) +
                                                        " instructions does not fit one program");
            programs.add(block.finish());
        }
    }
    plan.programs = programs.finish();
    for (const Program &p : plan.programs)
        plan.instructions += p.insns.size();
    return plan;
}

} // namespace tpurt
