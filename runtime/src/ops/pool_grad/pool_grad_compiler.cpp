// SPDX-License-Identifier: MIT
// pool_grad_compiler.cpp - the gradient of max and average pooling with any windows and strides
// as card programs (see train_compiler.hpp). Windows that tile the image exactly (window =
// stride, the image a whole number of windows: the usual 2 x 2 pooling) take the tiled path: a
// chunk of window rows at a time, every pixel of the chunk in each instruction (the x rows of
// one window row r gathered densely, so that window column j of all windows is one strided
// operand). Any other windows take the row path: one tile per dx row, accumulated in the
// unified buffer: +0, turned into -0 at the elements some window covers (strided VECTOR MULs by
// -1 that reach each of them once), then per covering window row its contributions added at
// the window stride (VECTOR ADD with strided a and dst), for MAX from hits recomputed out of
// strided gathers of x. Both give the same bits: with one window per element the sum from -0 is
// the window's contribution. Bf16 operands are widened on the way in and the rows rounded on
// the way out (train_block.hpp's Staging, after the fp32 rows). With padding, both run over the
// padded image: x copied into its padding (padded_rows.hpp) first, dx cut out of it last.
#include "codegen/isa_limits.hpp"
#include "codegen/padded_rows.hpp"
#include "codegen/program_splitter.hpp"
#include "codegen/train_block.hpp"
#include "tpurt/codegen/train_compiler.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <string>

namespace tpurt {

using namespace train_detail;

namespace {

struct Sizes {
    std::uint32_t x, dy, dx; // element bytes
};

// Whether the tiled path is tiled_max_grad_bf16's (x, y and dx in bf16).
bool max_bf16(const PoolGradProblem &p) {
    return p.op == PoolOp::Max && p.x_type == DType::Bf16 && p.dx_type == DType::Bf16;
}

// Window rows (one window high, the whole image wide) per chunk of the tiled path: each
// instruction's operand within the card's limits and the chunk's buffers within the unified
// buffer and the accumulators. 0: not even one fits.
std::uint32_t tiled_chunk_rows(const PoolGradProblem &p, const ArrayLimits &limits) {
    const std::uint64_t row_m = std::uint64_t{p.out_width()} * p.channels; // values per window row
    const std::uint64_t row_n = std::uint64_t{p.width} * p.channels;       // values per image row
    const std::uint32_t staged = staging_bytes({p.x_type, p.dy_type, p.dx_type});
    // fp32: d, y, avail and the hits (m values each), x and dx (n each), staging (n). bf16
    // (tiled_max_grad_bf16): dy and its rounding (12 m, Block::round_vpu_work_bytes), or a bf16
    // dy (2 m), y, avail and the hits (2 m each), x and dx of each window row (2 n each).
    const std::uint64_t ub_per_row = max_bf16(p) ? (p.dy_type == DType::Fp32 ? 12 : 2) * row_m +
                                                       6 * row_m + 4ull * p.window_h * row_n
                                                 : 4 * (4 * row_m + 2 * row_n) + staged * row_n;
    const std::uint32_t first = data_ub + Block::round_vpu_work_bytes(0) + 64; // + alignment
    if (first + ub_per_row > limits.ub_bytes)
        return 0;
    std::uint64_t rows = (limits.ub_bytes - first) / ub_per_row;
    rows = std::min(rows, max_dim / row_n);                        // widening, rounding, DMA
    rows = std::min<std::uint64_t>(rows, max_dim / p.out_width()); // VECTOR rows
    rows = std::min<std::uint64_t>(rows, limits.acc_bytes / (4 * row_n));
    return static_cast<std::uint32_t>(rows);
}

// Windows that tile the image exactly: window row `w` (image n, window row oy) covers image rows
// w kh .. w kh + kh - 1 (H = OH kh), and the windows of a chunk of them are rows of `q` = pixels
// of dy. Per chunk: dy (and y) in; for MAX avail = 1, then per window row r the x rows r of the
// chunk's windows gathered densely, per window column j (ascending: row-major within a window)
// hit = (x == y) avail, avail -= hit, dx = hit dy at column j of every window, and the dx rows
// r out; for AVG dx = dy / (kh kw) at every column j, stored as each row r.
std::vector<Program> tiled_pool_grad(const PoolGradProblem &p, const Sizes &size,
                                     std::uint32_t chunk, const ArrayLimits &limits,
                                     std::size_t max_program_bytes) {
    const bool max = p.op == PoolOp::Max;
    const std::uint32_t kh = p.window_h, kw = p.window_w, c = p.channels;
    const std::uint32_t windows = p.batch * p.out_height(), ow = p.out_width();
    const std::uint64_t row_m = std::uint64_t{ow} * c, row_n = std::uint64_t{p.width} * c;
    const auto m = static_cast<std::uint32_t>(chunk * row_m),
               n = static_cast<std::uint32_t>(chunk * row_n);
    const std::uint32_t d = data_ub, y = d + 4 * m, a = y + 4 * m, hits = a + 4 * m,
                        x = hits + 4 * m, dx = x + 4 * n;
    const Staging staging{.zeros = dx + 4 * n, .capacity = n};
    constexpr std::uint32_t area = const_ub;
    const std::uint32_t pixel = 4 * c, window = kw * pixel;
    // dst = a op b over the chunk's q pixels (`rows`) of c values, at the given pixel strides.
    const auto per_pixel = [&](Block &b, VectorOp op, std::uint32_t a_addr, std::uint32_t a_stride,
                               std::uint32_t b_addr, std::uint32_t b_stride, std::uint32_t dst,
                               std::uint32_t dst_stride, std::uint32_t rows, bool scalar = false) {
        b.builder().vector({.type = DType::Fp32,
                            .op = op,
                            .a_addr = a_addr,
                            .a_stride = a_stride,
                            .b_addr = b_addr,
                            .b_stride = b_stride,
                            .dst_addr = dst,
                            .dst_stride = dst_stride,
                            .rows = rows,
                            .cols = c,
                            .b_column = scalar});
    };
    ProgramSplitter programs(max_program_bytes, start_program());
    for (std::uint32_t w0 = 0; w0 < windows; w0 += chunk) {
        const std::uint32_t rows = std::min(chunk, windows - w0), q = rows * ow;
        const auto values = static_cast<std::uint32_t>(rows * row_m);
        Block b(limits.mxu_cols);
        b.load_typed(p.dy_type, p.dy_addr + w0 * row_m * size.dy, d, 1, values, staging);
        if (max) {
            b.load_typed(p.x_type, p.y_addr + w0 * row_m * size.x, y, 1, values, staging);
            b.fill(1.0f, a, values);
        } else {
            b.constant(static_cast<float>(kh * kw), area);
            for (std::uint32_t j = 0; j < kw; ++j)
                per_pixel(b, VectorOp::Div, d, pixel, area, 0, dx + j * pixel, window, q, true);
        }
        for (std::uint32_t r = 0; r < kh; ++r) {
            const std::uint64_t first_row = std::uint64_t{w0} * kh + r;
            if (max) {
                b.gather_typed(p.x_type, p.x_addr + first_row * row_n * size.x, kh * row_n * size.x,
                               x, rows, static_cast<std::uint32_t>(row_n), staging);
                for (std::uint32_t j = 0; j < kw; ++j) {
                    per_pixel(b, VectorOp::Eq, x + j * pixel, window, y, pixel, hits, pixel, q);
                    b.vec(VectorOp::Mul, hits, a, hits, q, c);
                    b.vec(VectorOp::Sub, a, hits, a, q, c);
                    per_pixel(b, VectorOp::Mul, hits, pixel, d, pixel, dx + j * pixel, window, q);
                }
            }
            b.scatter_typed(p.dx_type, p.dx_addr + first_row * row_n * size.dx,
                            kh * row_n * size.dx, dx, rows, static_cast<std::uint32_t>(row_n),
                            staging);
        }
        programs.add(b.finish());
    }
    return programs.finish();
}

// The tiled path of MAX with x, y and dx in bf16: the same hits, but computed by bf16 VECTORs on
// x and y as they come (the widening to fp32 is exact, so bf16 EQ is fp32 EQ), and dx = hit x
// bf16(dy) in bf16, so only dy (a quarter of dx's elements for 2 x 2 windows) is rounded, on the
// vector unit (Block::round_to_bf16_vpu), instead of every element of dx. That is bf16(hit x dy)
// bit for bit (hit is 0 or 1, the rounding keeps the sign and NaN goes to 0x7fc0 either way),
// except where a finite dy of at least 2^128 - 2^119 rounds to infinity: there the window's other
// elements get NaN (0 x inf) instead of a signed zero. avail = (y == y): NaN only where y is NaN,
// and no x equals a NaN y, so no hit there either way.
std::vector<Program> tiled_max_grad_bf16(const PoolGradProblem &p, std::uint32_t chunk,
                                         const ArrayLimits &limits, std::size_t max_program_bytes) {
    const std::uint32_t kh = p.window_h, kw = p.window_w, c = p.channels;
    const std::uint32_t windows = p.batch * p.out_height(), ow = p.out_width();
    const std::uint64_t row_m = std::uint64_t{ow} * c, row_n = std::uint64_t{p.width} * c;
    const auto m = static_cast<std::uint32_t>(chunk * row_m),
               n = static_cast<std::uint32_t>(chunk * row_n);
    const bool dy_fp32 = p.dy_type == DType::Fp32;
    // A chunk's set of buffers: fp32 dy as it comes (4 m bytes) and the work area of its
    // rounding, which ends with the bf16 dy (Block::round_to_bf16_vpu); a bf16 dy straight into
    // db. Then bf16 regions: y, avail, hits (m each), and per window row x and dx (n each).
    // Chunks take two sets in turn where both fit, so that the next chunk's loads have bytes of
    // their own and can run while this one computes (the graphs' schedule moves them there).
    const std::uint32_t round_bytes = dy_fp32 ? 4 * m + Block::round_vpu_work_bytes(m) : 2 * m;
    const std::uint32_t set_bytes = (round_bytes + 6 * m + 4 * kh * n + 63) / 64 * 64;
    const std::uint32_t sets = data_ub + 2 * set_bytes <= limits.ub_bytes ? 2 : 1;
    const std::uint32_t pixel = 2 * c, window = kw * pixel;
    const auto per_pixel = [&](Block &b, VectorOp op, std::uint32_t a_addr, std::uint32_t a_stride,
                               std::uint32_t b_addr, std::uint32_t b_stride, std::uint32_t dst,
                               std::uint32_t dst_stride, std::uint32_t rows) {
        b.builder().vector({.type = DType::Bf16,
                            .op = op,
                            .a_addr = a_addr,
                            .a_stride = a_stride,
                            .b_addr = b_addr,
                            .b_stride = b_stride,
                            .dst_addr = dst,
                            .dst_stride = dst_stride,
                            .rows = rows,
                            .cols = c});
    };
    // rows of cols bf16 between host rows host_stride bytes apart and dense rows at ub.
    const auto bf16_rows = [&](std::uint64_t host, std::uint64_t host_stride, std::uint32_t ub,
                               std::uint32_t rows, std::uint64_t cols) {
        return DmaTransfer{.type = DType::Bf16,
                           .host_addr = host,
                           .host_stride = host_stride,
                           .local_addr = ub,
                           .local_stride = static_cast<std::uint32_t>(2 * cols),
                           .rows = rows,
                           .cols = static_cast<std::uint32_t>(cols)};
    };
    ProgramSplitter programs(max_program_bytes, start_program());
    for (std::uint32_t w0 = 0; w0 < windows; w0 += chunk) {
        const std::uint32_t rows = std::min(chunk, windows - w0), q = rows * ow;
        const auto values = static_cast<std::uint32_t>(rows * row_m);
        const std::uint32_t d = data_ub + w0 / chunk % sets * set_bytes, work = d + 4 * m,
                            db = d + round_bytes - 2 * m, y = db + 2 * m, a = y + 2 * m,
                            hits = a + 2 * m, xs = hits + 2 * m, dxs = xs + 2 * kh * n;
        Block b(limits.mxu_cols);
        if (dy_fp32) {
            b.load(p.dy_addr + w0 * row_m * 4, d, 1, values);
            b.round_to_bf16_vpu(d, work, m, values);
        } else {
            b.builder().dma_in(bf16_rows(p.dy_addr + w0 * row_m * 2, 2 * row_m, db, rows, row_m));
        }
        b.builder().dma_in(bf16_rows(p.y_addr + w0 * row_m * 2, 2 * row_m, y, rows, row_m));
        per_pixel(b, VectorOp::Eq, y, pixel, y, pixel, a, pixel, q);
        for (std::uint32_t r = 0; r < kh; ++r) {
            const std::uint64_t first_row = std::uint64_t{w0} * kh + r;
            const std::uint32_t x = xs + 2 * r * n, dx = dxs + 2 * r * n;
            b.builder().dma_in(
                bf16_rows(p.x_addr + first_row * row_n * 2, kh * row_n * 2, x, rows, row_n));
            for (std::uint32_t j = 0; j < kw; ++j) {
                per_pixel(b, VectorOp::Eq, x + j * pixel, window, y, pixel, hits, pixel, q);
                per_pixel(b, VectorOp::Mul, hits, pixel, a, pixel, hits, pixel, q);
                per_pixel(b, VectorOp::Sub, a, pixel, hits, pixel, a, pixel, q);
                per_pixel(b, VectorOp::Mul, hits, pixel, db, pixel, dx + j * pixel, window, q);
            }
            b.builder().dma_out(
                bf16_rows(p.dx_addr + first_row * row_n * 2, kh * row_n * 2, dx, rows, row_n));
        }
        programs.add(b.finish());
    }
    return programs.finish();
}

// Bands of `rows_per_band` rows of every image, `emit(n, y0, rows)` the instructions of one.
template <typename Emit>
std::vector<Program> per_band(const PoolGradProblem &p, std::uint64_t height,
                              std::uint64_t row_bytes, const ArrayLimits &limits,
                              std::size_t max_program_bytes, Emit &&emit) {
    const std::uint64_t band = std::min<std::uint64_t>(limits.ub_bytes / row_bytes, max_dim);
    ProgramSplitter programs(max_program_bytes);
    for (std::uint32_t n = 0; n < p.batch; ++n)
        for (std::uint64_t y0 = 0; y0 < height; y0 += band) {
            ProgramBuilder b;
            emit(b, n, y0, std::min(band, height - y0));
            programs.add(b.finish());
        }
    return programs.finish();
}

// With padding: x into its padding of -inf (MAX), the gradient over the padded image into dxp,
// and dx cut out of dxp's interior.
std::vector<Program> padded_pool_grad(const PoolGradProblem &p, const Sizes &size,
                                      const ArrayLimits &limits, std::size_t max_program_bytes) {
    const std::uint64_t hp = p.height + 2ull * p.pad_h, wp = p.width + 2ull * p.pad_w;
    const std::uint64_t c = p.channels;
    if (wp * c > max_dim || wp * c * 4 > limits.ub_bytes)
        unsupported("a pool gradient over padded image rows of " + std::to_string(wp * c) +
                        " values",
                    limits);
    std::vector<Program> programs;
    const auto append = [&](std::vector<Program> more) {
        for (Program &program : more)
            programs.push_back(std::move(program));
    };
    PoolGradProblem inner = p;
    inner.height = static_cast<std::uint32_t>(hp);
    inner.width = static_cast<std::uint32_t>(wp);
    inner.pad_h = inner.pad_w = 0;
    inner.dx_addr = p.dxp_addr;
    if (p.op == PoolOp::Max) {
        inner.x_addr = p.xp_addr;
        const detail::PaddedImage image{.type = p.x_type,
                                        .height = p.height,
                                        .width = p.width,
                                        .channels = p.channels,
                                        .pad_h = p.pad_h,
                                        .pad_w = p.pad_w};
        const std::uint64_t prow = image.padded_row_bytes();
        const std::uint64_t image_bytes = std::uint64_t{p.height} * p.width * c * size.x;
        append(
            per_band(p, hp, prow, limits, max_program_bytes,
                     [&](ProgramBuilder &b, std::uint32_t n, std::uint64_t y0, std::uint64_t rows) {
                         detail::load_padded_rows(b, image, detail::PadValue::Lowest,
                                                  p.x_addr + n * image_bytes, y0, rows, 0);
                         b.dma_out({.type = p.x_type,
                                    .host_addr = p.xp_addr + (n * hp + y0) * prow,
                                    .host_stride = prow,
                                    .local_addr = 0,
                                    .local_stride = static_cast<std::uint32_t>(prow),
                                    .rows = static_cast<std::uint32_t>(rows),
                                    .cols = static_cast<std::uint32_t>(wp * c)});
                     }));
    }
    append(compile_pool_grad(inner, limits, max_program_bytes));
    const std::uint64_t row = std::uint64_t{p.width} * c * size.dx, prow = wp * c * size.dx;
    append(
        per_band(p, p.height, row, limits, max_program_bytes,
                 [&](ProgramBuilder &b, std::uint32_t n, std::uint64_t y0, std::uint64_t rows) {
                     b.dma_in({.type = p.dx_type,
                               .host_addr = p.dxp_addr +
                                            ((n * hp + p.pad_h + y0) * wp + p.pad_w) * c * size.dx,
                               .host_stride = prow,
                               .local_addr = 0,
                               .local_stride = static_cast<std::uint32_t>(row),
                               .rows = static_cast<std::uint32_t>(rows),
                               .cols = static_cast<std::uint32_t>(p.width * c)});
                     b.dma_out({.type = p.dx_type,
                                .host_addr = p.dx_addr + (std::uint64_t{n} * p.height + y0) * row,
                                .host_stride = row,
                                .local_addr = 0,
                                .local_stride = static_cast<std::uint32_t>(row),
                                .rows = static_cast<std::uint32_t>(rows),
                                .cols = static_cast<std::uint32_t>(p.width * c)});
                 }));
    return programs;
}

} // namespace

std::vector<Program> compile_pool_grad(const PoolGradProblem &p, const ArrayLimits &limits,
                                       std::size_t max_program_bytes) {
    const bool max = p.op == PoolOp::Max;
    const std::string name = max ? "max pool gradient" : "average pool gradient";
    const std::uint32_t kh = p.window_h, kw = p.window_w, sh = p.stride_h, sw = p.stride_w;
    const std::uint32_t oh = p.out_height(), ow = p.out_width(), c = p.channels;
    if (p.batch == 0 || c == 0 || kh == 0 || kw == 0 || oh == 0 || ow == 0)
        throw Error(ErrorCode::InvalidArgument,
                    name +
                        ": non-empty images holding at least one window and windows and "
                        "strides of at least 1 are needed (images of " +
                        std::to_string(p.height) + " x " + std::to_string(p.width) +
                        ", windows of " + std::to_string(kh) + " x " + std::to_string(kw) +
                        " at strides " + std::to_string(sh) + " x " + std::to_string(sw) + ")");
    const std::uint32_t x_size = float_operand(name, "x", p.x_type),
                        dy_size = float_operand(name, "dy", p.dy_type),
                        dx_size = float_operand(name, "dx", p.dx_type);
    if (p.padded()) {
        if (p.pad_h >= kh || p.pad_w >= kw)
            throw Error(ErrorCode::InvalidArgument,
                        name + ": padding of " + std::to_string(p.pad_h) + " x " +
                            std::to_string(p.pad_w) + " must be below the window (" +
                            std::to_string(kh) + " x " + std::to_string(kw) + ")");
        return padded_pool_grad(p, {x_size, dy_size, dx_size}, limits, max_program_bytes);
    }
    if (kh == sh && kw == sw && std::uint64_t{oh} * sh == p.height &&
        std::uint64_t{ow} * sw == p.width && std::uint64_t{p.width} * c <= max_dim)
        if (const std::uint32_t chunk = tiled_chunk_rows(p, limits))
            return max_bf16(p) ? tiled_max_grad_bf16(p, chunk, limits, max_program_bytes)
                               : tiled_pool_grad(p, {x_size, dy_size, dx_size}, chunk, limits,
                                                 max_program_bytes);
    const std::uint32_t staged = staging_bytes({p.x_type, p.dy_type, p.dx_type});
    const std::uint64_t in_row = std::uint64_t{p.width} * c, out_row = std::uint64_t{ow} * c;
    const std::uint64_t slots = max ? 4 + kw : 1; // fp32 rows of out_row values
    if (in_row > max_dim ||
        data_ub + (4 + staged) * in_row + 4 * slots * out_row > limits.ub_bytes ||
        4 * in_row > limits.acc_bytes)
        unsupported(name + " over image rows of " + std::to_string(in_row) + " values", limits);
    const auto n = static_cast<std::uint32_t>(in_row), m = static_cast<std::uint32_t>(out_row);
    // The dx row, dy's row, and for MAX y's row, avail, the gathered x and the hits of one
    // window row (kw rows).
    const std::uint32_t acc = data_ub, d = acc + 4 * n, y = d + 4 * m, a = y + 4 * m, x = a + 4 * m,
                        hits = x + 4 * m;
    const Staging staging{.zeros = static_cast<std::uint32_t>(d + 4 * slots * m), .capacity = n};
    constexpr std::uint32_t neg_one = const_ub, area = const_ub + 4;
    // acc op= b over `rows` runs of `pixels` pixels from pixel `at` on, sw pixels apart: b the
    // rows of m values at `src`, or (scalar) the value there.
    const auto on_acc = [&](Block &b, VectorOp op, std::uint32_t at, std::uint32_t rows,
                            std::uint32_t pixels, std::uint32_t src, bool scalar) {
        b.builder().vector({.type = DType::Fp32,
                            .op = op,
                            .a_addr = acc + 4 * at * c,
                            .a_stride = 4 * sw * c,
                            .b_addr = src,
                            .b_stride = scalar ? 0 : 4 * c,
                            .dst_addr = acc + 4 * at * c,
                            .dst_stride = 4 * sw * c,
                            .rows = rows,
                            .cols = pixels * c,
                            .b_column = scalar});
    };
    ProgramSplitter programs(max_program_bytes, start_program());
    for (std::uint32_t img = 0; img < p.batch; ++img) {
        for (std::uint32_t iy = 0; iy < p.height; ++iy) {
            // The window rows oy with oy sh <= iy < oy sh + kh.
            const std::uint32_t first = iy + 1 >= kh ? (iy + 1 - kh + sh - 1) / sh : 0;
            const std::uint32_t last = std::min(oh - 1, iy / sh);
            Block b(limits.mxu_cols);
            b.fill(0.0f, acc, n);
            if (first <= last) {
                // -0 at the covered pixels, each once: the first min(kw, sw) of every window's
                // columns, then the last window's columns past them.
                b.constant(-1.0f, neg_one);
                on_acc(b, VectorOp::Mul, 0, ow, std::min(kw, sw), neg_one, true);
                if (kw > sw)
                    on_acc(b, VectorOp::Mul, ow * sw, 1, kw - sw, neg_one, true);
                if (!max)
                    b.constant(static_cast<float>(kh * kw), area);
            }
            for (std::uint32_t oy = first; oy <= last; ++oy) {
                const std::uint32_t i = iy - oy * sh; // the window row that is dx row iy
                const std::uint64_t out_at = (std::uint64_t{img} * oh + oy) * m;
                b.load_typed(p.dy_type, p.dy_addr + out_at * dy_size, d, 1, m, staging);
                if (!max) {
                    b.vec(VectorOp::Div, d, area, d, 1, m, Bcast::Scalar); // dy / (kh kw)
                    for (std::uint32_t j = kw; j-- > 0;)
                        on_acc(b, VectorOp::Add, j, ow, 1, d, false);
                    continue;
                }
                b.load_typed(p.x_type, p.y_addr + out_at * x_size, y, 1, m, staging);
                b.fill(1.0f, a, m);
                for (std::uint32_t r = 0; r <= i; ++r)
                    for (std::uint32_t j = 0; j < kw; ++j) {
                        // x[img][oy sh + r][j + ox sw] for every ox: pixels sw apart.
                        const std::uint64_t at =
                            ((std::uint64_t{img} * p.height + std::uint64_t{oy} * sh + r) *
                                 p.width +
                             j) *
                            c;
                        const std::uint32_t h = hits + (r == i ? 4 * m * j : 0);
                        b.gather_typed(p.x_type, p.x_addr + at * x_size,
                                       std::uint64_t{sw} * c * x_size, x, ow, c, staging);
                        b.vec(VectorOp::Eq, x, y, h, 1, m);
                        b.vec(VectorOp::Mul, h, a, h, 1, m);
                        b.vec(VectorOp::Sub, a, h, a, 1, m);
                        if (r == i)
                            b.vec(VectorOp::Mul, h, d, h, 1, m);
                    }
                // Descending window columns: ascending ox for each dx element.
                for (std::uint32_t j = kw; j-- > 0;)
                    on_acc(b, VectorOp::Add, j, ow, 1, hits + 4 * m * j, false);
            }
            b.store_typed(p.dx_type, p.dx_addr + (std::uint64_t{img} * p.height + iy) * n * dx_size,
                          acc, 1, n, staging);
            programs.add(b.finish());
        }
    }
    return programs.finish();
}

} // namespace tpurt
