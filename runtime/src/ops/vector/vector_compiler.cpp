// SPDX-License-Identifier: MIT
// vector_compiler.cpp - tiles elementwise ops and row reductions for the vector unit (see
// vector_compiler.hpp).
#include "tpurt/codegen/vector_compiler.hpp"

#include "codegen/isa_limits.hpp"
#include "codegen/padded_rows.hpp"
#include "codegen/program_splitter.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <string>

namespace tpurt {

namespace {

std::uint64_t stride_of(std::uint64_t given, std::uint64_t row_bytes, const char *op,
                        const char *name) {
    if (given == 0)
        return row_bytes;
    if (given < row_bytes)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(op) + " " + name + " stride " + std::to_string(given) +
                        " is shorter than a row (" + std::to_string(row_bytes) + " bytes)");
    if (given > UINT32_MAX)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + " " + name + " stride " +
                                                    std::to_string(given) +
                                                    " is beyond the card's 32-bit DMA stride");
    return given;
}

void check_shape(const char *op, DType type, std::uint32_t rows, std::uint32_t cols) {
    if (element_size(type) == 0)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + ": unknown element type");
    if (rows == 0 || cols == 0)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + " of " + std::to_string(rows) +
                                                    " x " + std::to_string(cols) +
                                                    " elements: dimensions must be non-zero");
}

} // namespace

std::vector<Program> compile_elementwise(const ElementwiseProblem &p, const ArrayLimits &limits,
                                         std::size_t max_program_bytes) {
    check_shape("elementwise op", p.type, p.rows, p.cols);
    const std::uint32_t elem = static_cast<std::uint32_t>(element_size(p.type));
    const std::uint64_t row_bytes = std::uint64_t{p.cols} * elem;
    const std::uint64_t a_stride = stride_of(p.a_stride, row_bytes, "elementwise op", "A");
    const std::uint64_t b_stride =
        p.broadcast_b ? 0 : stride_of(p.b_stride, row_bytes, "elementwise op", "B");
    const std::uint64_t dst_stride = stride_of(p.dst_stride, row_bytes, "elementwise op", "dst");
    // Columns: two rows (a's and b's) must fit the unified buffer.
    const std::uint32_t tile_cols = static_cast<std::uint32_t>(
        std::min<std::uint64_t>({p.cols, max_dim, limits.ub_bytes / (2 * elem)}));
    if (tile_cols == 0)
        throw Error(ErrorCode::Unsupported, "the card's unified buffer of " +
                                                std::to_string(limits.ub_bytes) +
                                                " bytes holds no tile");
    const std::uint32_t tile_bytes = tile_cols * elem;
    // Rows: a's tile and b's (or b's one row) in the unified buffer.
    const std::uint64_t row_budget = p.broadcast_b ? (limits.ub_bytes - tile_bytes) / tile_bytes
                                                   : limits.ub_bytes / (2 * tile_bytes);
    const std::uint32_t tile_rows =
        static_cast<std::uint32_t>(std::min<std::uint64_t>({p.rows, max_dim, row_budget}));

    ProgramSplitter programs(max_program_bytes);
    for (std::uint32_t c0 = 0; c0 < p.cols; c0 += tile_cols) {
        const std::uint32_t cols = std::min(tile_cols, p.cols - c0);
        const std::uint32_t bytes = cols * elem;
        for (std::uint32_t r0 = 0; r0 < p.rows; r0 += tile_rows) {
            const std::uint32_t rows = std::min(tile_rows, p.rows - r0);
            // Broadcast: b's row at 0, a after it; otherwise a at 0, b after a's tile.
            const std::uint32_t a_ub = p.broadcast_b ? bytes : 0;
            const std::uint32_t b_ub = p.broadcast_b ? 0 : rows * bytes;
            ProgramBuilder block;
            block.dma_in({.type = p.type,
                          .host_addr = p.a_addr + r0 * a_stride + std::uint64_t{c0} * elem,
                          .host_stride = a_stride,
                          .local_addr = a_ub,
                          .local_stride = bytes,
                          .rows = rows,
                          .cols = cols});
            block.dma_in({.type = p.type,
                          .host_addr = p.b_addr + r0 * b_stride + std::uint64_t{c0} * elem,
                          .host_stride = p.broadcast_b ? bytes : b_stride,
                          .local_addr = b_ub,
                          .local_stride = bytes,
                          .rows = p.broadcast_b ? 1 : rows,
                          .cols = cols});
            block.vector({.type = p.type,
                          .op = p.op,
                          .a_addr = a_ub,
                          .a_stride = bytes,
                          .b_addr = b_ub,
                          .b_stride = p.broadcast_b ? 0 : bytes,
                          .dst_addr = a_ub,
                          .dst_stride = bytes,
                          .rows = rows,
                          .cols = cols});
            block.dma_out({.type = p.type,
                           .host_addr = p.dst_addr + r0 * dst_stride + std::uint64_t{c0} * elem,
                           .host_stride = dst_stride,
                           .local_addr = a_ub,
                           .local_stride = bytes,
                           .rows = rows,
                           .cols = cols});
            programs.add(block.finish());
        }
    }
    return programs.finish();
}

std::vector<Program> compile_unary(const UnaryProblem &p, const ArrayLimits &limits,
                                   std::size_t max_program_bytes) {
    if (!is_matmul_input(p.type))
        throw Error(ErrorCode::InvalidArgument,
                    std::string("unary ") + activation_name(p.function) + " of " +
                        dtype_name(p.type) +
                        " elements: the card applies functions to int8, bf16 or fp32 inputs");
    if (element_size(p.out_type) == 0 || p.elements == 0)
        throw Error(ErrorCode::InvalidArgument,
                    std::string("unary ") + activation_name(p.function) +
                        ": an output type and at least one element are needed");
    const std::uint32_t elem = static_cast<std::uint32_t>(element_size(p.type));
    const std::uint32_t out_elem = static_cast<std::uint32_t>(element_size(p.out_type));
    // UB: the constant 1 at 0, a chunk of x at 64, its results after it; ACC: 4 bytes each.
    constexpr std::uint32_t x_ub = 64;
    const std::uint64_t chunk = std::min<std::uint64_t>(
        {max_dim, p.elements,
         limits.ub_bytes > x_ub ? (limits.ub_bytes - x_ub) / (elem + out_elem) : 0,
         limits.acc_bytes / 4});
    if (chunk == 0 || limits.mxu_rows == 0 || limits.mxu_cols == 0)
        throw Error(ErrorCode::Unsupported, "the card's memories hold no chunk of a unary op");
    const auto out_ub = static_cast<std::uint32_t>((x_ub + chunk * elem + 3) / 4 * 4);
    const std::size_t max_insns = max_program_bytes / TPU_INSN_SIZE;
    if (max_insns < 3 + 4 + 1)
        throw Error(ErrorCode::InvalidArgument, "program size limit below one chunk");
    const std::uint64_t chunks_per_program = (max_insns - 3 - 1) / 4;
    std::vector<Program> programs;
    ProgramBuilder b;
    std::uint64_t in_program = 0;
    for (std::uint64_t e0 = 0; e0 < p.elements; e0 += chunk) {
        if (in_program == chunks_per_program) {
            programs.push_back(b.halt().finish());
            in_program = 0;
        }
        if (in_program++ == 0) {
            b.activate({.out_type = p.type,
                        .function = Activation::Exp,
                        .acc_addr = 0,
                        .acc_stride = 4,
                        .dst_addr = 0,
                        .dst_stride = elem,
                        .rows = 1,
                        .cols = 1});
            b.load_weights(
                {.type = p.type, .src_addr = 0, .src_stride = elem, .rows = 1, .cols = 1});
        }
        const auto rows = static_cast<std::uint32_t>(std::min(chunk, p.elements - e0));
        b.dma_in({.type = p.type,
                  .host_addr = p.a_addr + e0 * elem,
                  .host_stride = rows * elem,
                  .local_addr = x_ub,
                  .local_stride = rows * elem,
                  .rows = 1,
                  .cols = rows});
        b.matmul({.type = p.type,
                  .src_addr = x_ub,
                  .src_stride = elem,
                  .rows = rows,
                  .cols = 1,
                  .acc_addr = 0,
                  .acc_stride = 4});
        b.activate({.out_type = p.out_type,
                    .function = p.function,
                    .src_int32 = p.type == DType::Int8,
                    .acc_addr = 0,
                    .acc_stride = 4,
                    .dst_addr = out_ub,
                    .dst_stride = out_elem,
                    .rows = rows,
                    .cols = 1,
                    .scale = p.scale});
        b.dma_out({.type = p.out_type,
                   .host_addr = p.dst_addr + e0 * out_elem,
                   .host_stride = rows * out_elem,
                   .local_addr = out_ub,
                   .local_stride = rows * out_elem,
                   .rows = 1,
                   .cols = rows});
    }
    programs.push_back(b.halt().finish());
    return programs;
}

std::vector<Program> compile_transpose(const TransposeProblem &p, const ArrayLimits &limits,
                                       std::size_t max_program_bytes) {
    check_shape("transpose", p.type, p.rows, p.cols);
    const std::uint32_t elem = static_cast<std::uint32_t>(element_size(p.type));
    const std::uint64_t a_stride =
        stride_of(p.a_stride, std::uint64_t{p.cols} * elem, "transpose", "A");
    const std::uint64_t dst_stride =
        stride_of(p.dst_stride, std::uint64_t{p.rows} * elem, "transpose", "dst");
    const std::uint64_t half = limits.ub_bytes / 2 / elem; // elements of one tile
    const auto tile_cols =
        static_cast<std::uint32_t>(std::min<std::uint64_t>({p.cols, max_dim, half}));
    const auto tile_rows = static_cast<std::uint32_t>(
        std::min<std::uint64_t>({p.rows, max_dim, tile_cols ? half / tile_cols : 0}));
    if (tile_rows == 0 || tile_cols == 0)
        throw Error(ErrorCode::Unsupported, "the card's unified buffer holds no transpose tile");
    const std::uint32_t dst_ub = static_cast<std::uint32_t>(half * elem);
    ProgramSplitter programs(max_program_bytes);
    for (std::uint32_t r0 = 0; r0 < p.rows; r0 += tile_rows) {
        const std::uint32_t rows = std::min(tile_rows, p.rows - r0);
        for (std::uint32_t c0 = 0; c0 < p.cols; c0 += tile_cols) {
            const std::uint32_t cols = std::min(tile_cols, p.cols - c0);
            ProgramBuilder block;
            block.dma_in({.type = p.type,
                          .host_addr = p.a_addr + r0 * a_stride + std::uint64_t{c0} * elem,
                          .host_stride = a_stride,
                          .local_addr = 0,
                          .local_stride = cols * elem,
                          .rows = rows,
                          .cols = cols});
            block.transpose({.type = p.type,
                             .src_addr = 0,
                             .src_stride = cols * elem,
                             .dst_addr = dst_ub,
                             .dst_stride = rows * elem,
                             .rows = rows,
                             .cols = cols});
            block.dma_out({.type = p.type,
                           .host_addr = p.dst_addr + c0 * dst_stride + std::uint64_t{r0} * elem,
                           .host_stride = dst_stride,
                           .local_addr = dst_ub,
                           .local_stride = rows * elem,
                           .rows = cols,
                           .cols = rows});
            programs.add(block.finish());
        }
    }
    return programs.finish();
}

std::vector<Program> compile_pool(const PoolProblem &p, const ArrayLimits &limits,
                                  std::size_t max_program_bytes) {
    check_shape("pool", p.type, p.height, p.width);
    if (p.batch == 0 || p.channels == 0 || p.win_h == 0 || p.win_w == 0 || p.stride_h == 0 ||
        p.stride_w == 0 || p.win_h > TPU_POOL_MAX_WINDOW || p.win_w > TPU_POOL_MAX_WINDOW ||
        p.pad_h >= p.win_h || p.pad_w >= p.win_w || p.win_h > p.height + 2ull * p.pad_h ||
        p.win_w > p.width + 2ull * p.pad_w || p.stride_h > 255 || p.stride_w > 255)
        throw Error(ErrorCode::InvalidArgument,
                    "pool: windows of 1.." + std::to_string(TPU_POOL_MAX_WINDOW) +
                        " inside the padded image, padding below the window, strides of 1..255 "
                        "and non-empty shapes are needed");
    const detail::PaddedImage image{.type = p.type,
                                    .height = p.height,
                                    .width = p.width,
                                    .channels = p.channels,
                                    .pad_h = p.pad_h,
                                    .pad_w = p.pad_w};
    const auto pad = p.op == PoolOp::Max ? detail::PadValue::Lowest : detail::PadValue::Zero;
    const std::uint32_t elem = static_cast<std::uint32_t>(element_size(p.type));
    const std::uint64_t row_elems = image.padded_width() * p.channels;
    const std::uint32_t oh = p.out_height(), ow = p.out_width();
    const std::uint64_t in_row = image.padded_row_bytes(),
                        out_row = std::uint64_t{ow} * p.channels * elem;
    // A band of b output rows reads (b - 1) * stride_h + win_h padded input rows.
    const auto fits = [&](std::uint64_t b) {
        const std::uint64_t in_rows = (b - 1) * p.stride_h + p.win_h;
        return in_rows <= max_dim && in_rows * in_row + 3 + b * out_row <= limits.ub_bytes;
    };
    if (row_elems > max_dim || std::uint64_t{ow} * p.channels > max_dim || !fits(1))
        throw Error(ErrorCode::Unsupported, "pool: an image row of " + std::to_string(row_elems) +
                                                " elements (padding included) does not fit the "
                                                "card");
    std::uint32_t band = 1;
    while (band < oh && band < max_dim && fits(band + 1))
        ++band;
    const std::uint64_t image_bytes = std::uint64_t{p.height} * p.width * p.channels * elem;
    ProgramSplitter programs(max_program_bytes);
    for (std::uint32_t n = 0; n < p.batch; ++n) {
        const std::uint64_t out_base = p.dst_addr + std::uint64_t{n} * oh * out_row;
        for (std::uint32_t oy0 = 0; oy0 < oh; oy0 += band) {
            const std::uint32_t rows = std::min(band, oh - oy0);
            const std::uint32_t in_rows = (rows - 1) * p.stride_h + p.win_h;
            const auto out_ub = static_cast<std::uint32_t>((in_rows * in_row + 3) / 4 * 4);
            ProgramBuilder block;
            detail::load_padded_rows(block, image, pad, p.a_addr + n * image_bytes,
                                     std::uint64_t{oy0} * p.stride_h, in_rows, 0);
            block.pool({.type = p.type,
                        .op = p.op,
                        .src_addr = 0,
                        .src_row_stride = static_cast<std::uint32_t>(in_row),
                        .dst_addr = out_ub,
                        .dst_row_stride = static_cast<std::uint32_t>(out_row),
                        .out_rows = rows,
                        .out_cols = ow,
                        .channels = p.channels,
                        .win_h = p.win_h,
                        .win_w = p.win_w,
                        .stride_h = p.stride_h,
                        .stride_w = p.stride_w});
            block.dma_out({.type = p.type,
                           .host_addr = out_base + std::uint64_t{oy0} * out_row,
                           .host_stride = out_row,
                           .local_addr = out_ub,
                           .local_stride = static_cast<std::uint32_t>(out_row),
                           .rows = rows,
                           .cols = ow * p.channels});
            programs.add(block.finish());
        }
    }
    return programs.finish();
}

namespace {

// ReduceProblem::columns: per block of c columns, a's rows of them in (rows x c, dense), their
// TRANSPOSE (c x rows) and its rows reduced; blocks in two halves of the buffer in turn.
std::vector<Program> reduce_columns(const ReduceProblem &p, const ArrayLimits &limits,
                                    std::size_t max_program_bytes) {
    const std::uint64_t elem = element_size(p.type);
    const std::uint64_t out_elem = element_size(reduce_result_type(p.type, p.op));
    const std::uint64_t a_stride = stride_of(p.a_stride, p.cols * elem, "reduction", "A");
    // A block of c columns: the rows in, transposed, the results (from a 4-byte boundary).
    const auto block_bytes = [&](std::uint64_t c) {
        return (2 * p.rows * c * elem + 3) / 4 * 4 + c * out_elem;
    };
    std::uint64_t cols = std::min<std::uint64_t>(p.cols, max_dim);
    while (cols > 0 && 2 * block_bytes(cols) > limits.ub_bytes)
        cols /= 2;
    if (p.rows > max_dim || cols == 0)
        throw Error(ErrorCode::Unsupported,
                    "a reduction over columns of " + std::to_string(p.rows) + " " +
                        dtype_name(p.type) + " elements does not fit one REDUCE (at most " +
                        std::to_string(max_dim) + " and a unified buffer of " +
                        std::to_string(limits.ub_bytes) + " bytes)");
    const DType out_type = reduce_result_type(p.type, p.op);
    const auto half = static_cast<std::uint32_t>(limits.ub_bytes / 2 / 64 * 64);
    ProgramSplitter programs(max_program_bytes);
    for (std::uint32_t c0 = 0, k = 0; c0 < p.cols; c0 += cols, ++k) {
        const auto c = static_cast<std::uint32_t>(std::min<std::uint64_t>(cols, p.cols - c0));
        const std::uint32_t in = k % 2 * half,
                            t = in + static_cast<std::uint32_t>(p.rows * c * elem),
                            out = static_cast<std::uint32_t>((t + p.rows * c * elem + 3) / 4 * 4);
        ProgramBuilder block;
        block.dma_in({.type = p.type,
                      .host_addr = p.a_addr + c0 * elem,
                      .host_stride = a_stride,
                      .local_addr = in,
                      .local_stride = static_cast<std::uint32_t>(c * elem),
                      .rows = p.rows,
                      .cols = c});
        block.transpose({.type = p.type,
                         .src_addr = in,
                         .src_stride = static_cast<std::uint32_t>(c * elem),
                         .dst_addr = t,
                         .dst_stride = static_cast<std::uint32_t>(p.rows * elem),
                         .rows = p.rows,
                         .cols = c});
        block.reduce({.type = p.type,
                      .op = p.op,
                      .a_addr = t,
                      .a_stride = static_cast<std::uint32_t>(p.rows * elem),
                      .dst_addr = out,
                      .dst_stride = static_cast<std::uint32_t>(out_elem),
                      .rows = c,
                      .cols = p.rows});
        block.dma_out({.type = out_type,
                       .host_addr = p.dst_addr + c0 * out_elem,
                       .host_stride = c * out_elem,
                       .local_addr = out,
                       .local_stride = static_cast<std::uint32_t>(c * out_elem),
                       .rows = 1,
                       .cols = c});
        programs.add(block.finish());
    }
    return programs.finish();
}

} // namespace

std::vector<Program> compile_reduce(const ReduceProblem &p, const ArrayLimits &limits,
                                    std::size_t max_program_bytes) {
    check_shape("reduction", p.type, p.rows, p.cols);
    if (p.columns)
        return reduce_columns(p, limits, max_program_bytes);
    const std::uint32_t elem = static_cast<std::uint32_t>(element_size(p.type));
    const DType out_type = reduce_result_type(p.type, p.op);
    const std::uint32_t out_elem = static_cast<std::uint32_t>(element_size(out_type));
    const std::uint64_t row_bytes = std::uint64_t{p.cols} * elem;
    const std::uint64_t a_stride = stride_of(p.a_stride, row_bytes, "reduction", "A");
    // A tile: its rows of a, then their results from the next 4-byte boundary.
    const auto tile_bytes = [&](std::uint64_t rows) {
        return (rows * row_bytes + 3) / 4 * 4 + rows * out_elem;
    };
    if (p.cols > max_dim || tile_bytes(1) > limits.ub_bytes)
        throw Error(ErrorCode::Unsupported,
                    "a reduction over rows of " + std::to_string(p.cols) + " " +
                        dtype_name(p.type) + " elements does not fit one REDUCE (at most " +
                        std::to_string(max_dim) + " and a unified buffer of " +
                        std::to_string(limits.ub_bytes) + " bytes)");
    std::uint64_t fit =
        std::min<std::uint64_t>({p.rows, max_dim, limits.ub_bytes / (row_bytes + out_elem)});
    while (tile_bytes(fit) > limits.ub_bytes) // at most the 3 bytes of alignment over
        --fit;
    const std::uint32_t tile_rows = static_cast<std::uint32_t>(fit);
    ProgramSplitter programs(max_program_bytes);
    for (std::uint32_t r0 = 0; r0 < p.rows; r0 += tile_rows) {
        const std::uint32_t rows = std::min(tile_rows, p.rows - r0);
        const std::uint32_t out_ub = static_cast<std::uint32_t>((rows * row_bytes + 3) / 4 * 4);
        ProgramBuilder block;
        block.dma_in({.type = p.type,
                      .host_addr = p.a_addr + r0 * a_stride,
                      .host_stride = a_stride,
                      .local_addr = 0,
                      .local_stride = static_cast<std::uint32_t>(row_bytes),
                      .rows = rows,
                      .cols = p.cols});
        block.reduce({.type = p.type,
                      .op = p.op,
                      .a_addr = 0,
                      .a_stride = static_cast<std::uint32_t>(row_bytes),
                      .dst_addr = out_ub,
                      .dst_stride = out_elem,
                      .rows = rows,
                      .cols = p.cols});
        block.dma_out({.type = out_type,
                       .host_addr = p.dst_addr + std::uint64_t{r0} * out_elem,
                       .host_stride = out_elem * rows,
                       .local_addr = out_ub,
                       .local_stride = out_elem * rows,
                       .rows = 1,
                       .cols = rows});
        programs.add(block.finish());
    }
    return programs.finish();
}

} // namespace tpurt
