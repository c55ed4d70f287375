// SPDX-License-Identifier: MIT
// conv2d_compiler.cpp - compiles a convolution into row_group MATMUL programs: stacks of whole
// images walked as one tall image, or blocks of output rows of an image (see conv2d.hpp).
#include "codegen/isa_limits.hpp"
#include "tpurt/error.hpp"
#include "tpurt/ops/conv2d.hpp"

#include <tpu_hw.h>

#include <algorithm>
#include <string>

namespace tpurt {

namespace {

[[noreturn]] void invalid(const std::string &what) {
    throw Error(ErrorCode::InvalidArgument, "conv2d: " + what);
}

void check_shape(DType type, const Conv2dShape &s) {
    if (!is_matmul_input(type))
        invalid(std::string("inputs are int8, bf16 or fp32, not ") + dtype_name(type));
    if (s.batch == 0 || s.height == 0 || s.width == 0 || s.channels == 0 || s.kernel_h == 0 ||
        s.kernel_w == 0 || s.filters == 0 || s.stride_h == 0 || s.stride_w == 0)
        invalid("every dimension and stride must be non-zero");
    if (s.kernel_h > s.height + 2ull * s.pad_h || s.kernel_w > s.width + 2ull * s.pad_w)
        invalid("the kernel is larger than the padded image");
}

// Everything about the problem one block's instructions need.
struct Geometry {
    std::uint64_t elem, acc_elem;
    std::uint64_t out_elem; // bytes of an output element (the epilogue's type, or acc_elem)
    std::uint64_t oh, ow;
    std::uint64_t padded_h;   // rows of a padded image
    std::uint64_t padded_w;   // pixels of a padded row
    std::uint64_t pixel;      // bytes of one pixel (C elements)
    std::uint64_t padded_row; // bytes of one padded row in the unified buffer
    std::uint64_t slot_rows;  // padded rows an image of a stack takes (padded_h up to stride_h)
    std::uint64_t tile_c, tile_f;
    // Output pixels one MATMUL row computes (pack_pixels() below): 1, or with one channel P
    // pixels side by side against a block-diagonal tile of P copies of a tap's weights, built
    // per tap at tile_addr.
    std::uint64_t pack = 1, tile_addr = 0;
    // Stacks of whole images take two halves of the window and of the accumulators in turn
    // (bytes from the start of each; 0: one stack uses them whole), so that the next stack's
    // input and MATMULs can run beside this one's epilogue (the graphs' schedule moves them).
    std::uint64_t window_half = 0, acc_half = 0;
    std::uint64_t block_rows; // output rows of the largest block
    // The epilogue's staging area at the top of the unified buffer: bias (tile_f fp32) at
    // stage_addr, then up to stage_pixels activated pixels of a filter tile.
    std::uint64_t stage_addr, stage_pixels;

    std::uint64_t c_tiles(const Conv2dShape &s) const { return (s.channels + tile_c - 1) / tile_c; }
    std::uint64_t f_tiles(const Conv2dShape &s) const { return (s.filters + tile_f - 1) / tile_f; }
    // Output rows the MATMULs of a stack of `images` walk: each image's oh rows, slot_rows /
    // stride_h apart (the rows between them straddle two images and are never written out).
    std::uint64_t stack_rows(std::uint64_t images, std::uint32_t stride_h) const {
        return (images - 1) * (slot_rows / stride_h) + oh;
    }
};

class BlockEmitter {
  public:
    BlockEmitter(const Conv2dProblem &p, const Geometry &g) : p_(p), s_(p.shape), g_(g) {}

    // Output rows [oy0, oy0 + rows) of image `image`.
    Program emit(std::uint32_t image, std::uint64_t oy0, std::uint64_t rows) const {
        ProgramBuilder out;
        load_input(out, image, oy0, rows, 0);
        compute(out, rows * g_.ow, {}, [&](std::uint64_t f0, std::uint64_t f_cols) {
            write_out(out, (std::uint64_t{image} * g_.oh + oy0) * g_.ow, rows * g_.ow, {}, 0, f0,
                      f_cols);
        });
        return out.halt().finish();
    }

    // Whole images [first, first + count) as stacks of `stack` images, one stack after another
    // in one program. A stack's images lie one below the other in the unified buffer, slot_rows
    // padded rows apart, so that every MATMUL walks all of them as one tall image; the output
    // rows between two images are computed and dropped. Every stack writes the same part of the
    // buffer (its images' rows at their places in the padded slots), so the padding stays zero
    // from the job's start and no image sees another's.
    Program emit_stacks(std::uint32_t first, std::uint32_t count, std::uint32_t stack) const {
        ProgramBuilder out;
        for (std::uint32_t i = first, k = 0; i < first + count; i += stack, ++k)
            emit_stack(out, i, std::min(stack, first + count - i),
                       {.window = k % 2 * g_.window_half, .acc = k % 2 * g_.acc_half});
        return out.halt().finish();
    }

    // Instructions of a stack of `images` whole images (HALT not included).
    std::uint64_t stack_instructions(std::uint64_t images) const {
        return images + g_.f_tiles(s_) * (tap_insns() * taps() * g_.c_tiles(s_) + bias_insns() +
                                          images * out_insns(g_.oh * g_.ow));
    }

    // Instructions of the largest row block (HALT included).
    std::uint64_t block_instructions() const {
        return 2 + g_.f_tiles(s_) * (tap_insns() * taps() * g_.c_tiles(s_) + bias_insns() +
                                     out_insns(g_.block_rows * g_.ow));
    }

  private:
    // Where a stack's window and accumulators start (bytes into the unified buffer and the
    // accumulators).
    struct Place {
        std::uint64_t window = 0, acc = 0;
    };

    std::uint64_t taps() const { return std::uint64_t{s_.kernel_h} * s_.kernel_w; }
    // A tap's instructions: LOAD_W and MATMUL, and packed the DMA of its tile's diagonal.
    std::uint64_t tap_insns() const { return g_.pack > 1 ? 3 : 2; }
    std::uint64_t bias_insns() const { return p_.epilogue && p_.epilogue->bias_addr ? 1 : 0; }
    // Instructions writing `pixels` pixels of one filter tile out.
    std::uint64_t out_insns(std::uint64_t pixels) const {
        return p_.epilogue ? 2 * ((pixels + g_.stage_pixels - 1) / g_.stage_pixels) : 1;
    }

    void emit_stack(ProgramBuilder &out, std::uint32_t first, std::uint32_t images,
                    const Place &at) const {
        const std::uint64_t slot = g_.slot_rows * g_.padded_row;
        const std::uint64_t slot_pixels = g_.slot_rows / s_.stride_h * g_.ow;
        for (std::uint32_t i = 0; i < images; ++i)
            load_input(out, first + i, 0, g_.oh, at.window + i * slot);
        compute(out, g_.stack_rows(images, s_.stride_h) * g_.ow, at,
                [&](std::uint64_t f0, std::uint64_t f_cols) {
                    for (std::uint32_t i = 0; i < images; ++i)
                        write_out(out, std::uint64_t{first + i} * g_.oh * g_.ow, g_.oh * g_.ow, at,
                                  i * slot_pixels, f0, f_cols);
                });
    }

    // Per filter tile: every tap's channel tiles into the accumulators over `pixels` output
    // pixels (row groups of one output row), then `finish(f0, f_cols)` writes the tile out.
    template <typename Finish>
    void compute(ProgramBuilder &out, std::uint64_t pixels, const Place &at,
                 Finish &&finish) const {
        for (std::uint64_t f0 = 0; f0 < s_.filters; f0 += g_.tile_f) {
            const std::uint64_t f_cols = std::min<std::uint64_t>(g_.tile_f, s_.filters - f0);
            bool first = true;
            for (std::uint64_t ky = 0; ky < s_.kernel_h; ++ky)
                for (std::uint64_t kx = 0; kx < s_.kernel_w; ++kx)
                    for (std::uint64_t c0 = 0; c0 < s_.channels; c0 += g_.tile_c) {
                        tap(out, ky, kx, c0, f0, f_cols, pixels, at, first);
                        first = false;
                    }
            if (p_.epilogue && p_.epilogue->bias_addr)
                load_bias(out, f0, f_cols);
            finish(f0, f_cols);
        }
    }

    // `pixels` output pixels from output pixel `first_pixel` on, held in the accumulators from
    // pixel `acc_pixel` of the stack's on: as accumulators, or through the epilogue.
    void write_out(ProgramBuilder &out, std::uint64_t first_pixel, std::uint64_t pixels,
                   const Place &at, std::uint64_t acc_pixel, std::uint64_t f0,
                   std::uint64_t f_cols) const {
        if (p_.epilogue)
            return activate_out(out, first_pixel, pixels, at.acc + acc_pixel * f_cols * g_.acc_elem,
                                f0, f_cols);
        const std::uint64_t out_pixel = std::uint64_t{s_.filters} * g_.acc_elem;
        out.dma_out_acc(
            {.type = accumulator_type(p_.type),
             .host_addr = p_.output_addr + first_pixel * out_pixel + f0 * g_.acc_elem,
             .host_stride = out_pixel,
             .local_addr = static_cast<std::uint32_t>(at.acc + acc_pixel * f_cols * g_.acc_elem),
             .local_stride = static_cast<std::uint32_t>(f_cols * g_.acc_elem),
             .rows = static_cast<std::uint32_t>(pixels),
             .cols = static_cast<std::uint32_t>(f_cols)});
    }

    // The filter tile's bias at the bottom of the epilogue's staging area.
    void load_bias(ProgramBuilder &out, std::uint64_t f0, std::uint64_t f_cols) const {
        const auto bias_bytes = static_cast<std::uint32_t>(f_cols * 4);
        out.dma_in({.type = DType::Fp32,
                    .host_addr = *p_.epilogue->bias_addr + f0 * 4,
                    .host_stride = bias_bytes,
                    .local_addr = static_cast<std::uint32_t>(g_.stage_addr),
                    .local_stride = bias_bytes,
                    .rows = 1,
                    .cols = static_cast<std::uint32_t>(f_cols)});
    }

    // A finished filter tile through ACTIVATE into the output, stage_pixels pixels at a time,
    // staged above the input window (above the bias, when there is one).
    void activate_out(ProgramBuilder &out, std::uint64_t first_pixel, std::uint64_t pixels,
                      std::uint64_t acc, std::uint64_t f0, std::uint64_t f_cols) const {
        const MatmulEpilogue &e = *p_.epilogue;
        const auto cols = static_cast<std::uint32_t>(f_cols);
        const std::uint32_t bias_bytes = e.bias_addr ? cols * 4 : 0;
        const auto stage = static_cast<std::uint32_t>(g_.stage_addr);
        const auto row_bytes = static_cast<std::uint32_t>(f_cols * g_.out_elem);
        const std::uint64_t out_pixel = std::uint64_t{s_.filters} * g_.out_elem;
        for (std::uint64_t p0 = 0; p0 < pixels; p0 += g_.stage_pixels) {
            const auto height = static_cast<std::uint32_t>(std::min(g_.stage_pixels, pixels - p0));
            out.activate(
                {.out_type = e.out_type,
                 .function = e.function,
                 .src_int32 = p_.type == DType::Int8,
                 .acc_addr = static_cast<std::uint32_t>(acc + p0 * f_cols * g_.acc_elem),
                 .acc_stride = static_cast<std::uint32_t>(f_cols * g_.acc_elem),
                 .dst_addr = stage + bias_bytes,
                 .dst_stride = row_bytes,
                 .rows = height,
                 .cols = cols,
                 .bias_addr = e.bias_addr ? std::optional<std::uint32_t>(stage) : std::nullopt,
                 .scale = e.scale});
            out.dma_out(
                {.type = e.out_type,
                 .host_addr = p_.output_addr + (first_pixel + p0) * out_pixel + f0 * g_.out_elem,
                 .host_stride = out_pixel,
                 .local_addr = stage + bias_bytes,
                 .local_stride = row_bytes,
                 .rows = height,
                 .cols = cols});
        }
    }

    // The input rows output rows [oy0, oy0 + rows) read, at their places in the zero-padded
    // window that starts `base` bytes into the unified buffer: window row 0 is padded row
    // oy0 * stride_h.
    void load_input(ProgramBuilder &out, std::uint32_t image, std::uint64_t oy0, std::uint64_t rows,
                    std::uint64_t base) const {
        const std::int64_t py0 = static_cast<std::int64_t>(oy0 * s_.stride_h);
        const std::int64_t py1 =
            py0 + static_cast<std::int64_t>((rows - 1) * s_.stride_h + s_.kernel_h); // exclusive
        const std::int64_t iy0 = std::max<std::int64_t>(py0 - s_.pad_h, 0);
        const std::int64_t iy1 = std::min<std::int64_t>(py1 - s_.pad_h, s_.height);
        if (iy1 <= iy0)
            return; // the block sees only padding
        const std::uint64_t in_row = std::uint64_t{s_.width} * g_.pixel;
        out.dma_in({.type = p_.type,
                    .host_addr = p_.input_addr + (std::uint64_t{image} * s_.height + iy0) * in_row,
                    .host_stride = in_row,
                    .local_addr = static_cast<std::uint32_t>(
                        base + (iy0 + s_.pad_h - py0) * g_.padded_row + s_.pad_w * g_.pixel),
                    .local_stride = static_cast<std::uint32_t>(g_.padded_row),
                    .rows = static_cast<std::uint32_t>(iy1 - iy0),
                    .cols = static_cast<std::uint32_t>(std::uint64_t{s_.width} * s_.channels)});
    }

    // One kernel tap's channel tile: its weights from host memory, then the MATMUL walking
    // `pixels` output pixels (row group = one output row) from the window's start.
    void tap(ProgramBuilder &out, std::uint64_t ky, std::uint64_t kx, std::uint64_t c0,
             std::uint64_t f0, std::uint64_t f_cols, std::uint64_t pixels, const Place &at,
             bool first) const {
        const std::uint64_t c_rows = std::min<std::uint64_t>(g_.tile_c, s_.channels - c0);
        const std::uint64_t w_row = p_.weight_channel_stride ? p_.weight_channel_stride
                                                             : std::uint64_t{s_.filters} * g_.elem;
        const std::uint64_t w_tap =
            p_.weight_tap_stride ? p_.weight_tap_stride : std::uint64_t{s_.channels} * w_row;
        const std::uint64_t weights =
            p_.weight_addr + (ky * s_.kernel_w + kx) * w_tap + c0 * w_row + f0 * g_.elem;
        const std::uint64_t p = g_.pack;
        if (p > 1) {
            // The tap's one row of weights P times down the diagonal of its P x P F tile, whose
            // other elements stay zero: row j holds them at columns j F ... j F + F - 1.
            const std::uint64_t tile_row = p * f_cols * g_.elem;
            const auto tile =
                static_cast<std::uint32_t>(g_.tile_addr + (ky * s_.kernel_w + kx) * p * tile_row);
            out.dma_in({.type = p_.type,
                        .host_addr = weights,
                        .host_stride = 0,
                        .local_addr = tile,
                        .local_stride = static_cast<std::uint32_t>(tile_row + f_cols * g_.elem),
                        .rows = static_cast<std::uint32_t>(p),
                        .cols = static_cast<std::uint32_t>(f_cols)});
            out.load_weights(WeightLoad{.type = p_.type,
                                        .src_addr = tile,
                                        .src_stride = static_cast<std::uint32_t>(tile_row),
                                        .rows = static_cast<std::uint32_t>(p),
                                        .cols = static_cast<std::uint32_t>(p * f_cols)});
        } else {
            out.load_weights(HostWeightLoad{.type = p_.type,
                                            .host_addr = weights,
                                            .host_stride = w_row,
                                            .rows = static_cast<std::uint32_t>(c_rows),
                                            .cols = static_cast<std::uint32_t>(f_cols)});
        }
        out.matmul({.type = p_.type,
                    .src_addr = static_cast<std::uint32_t>(at.window + ky * g_.padded_row +
                                                           kx * g_.pixel + c0 * g_.elem),
                    .src_stride = static_cast<std::uint32_t>(p * s_.stride_w * g_.pixel),
                    .rows = static_cast<std::uint32_t>(pixels / p),
                    .cols = static_cast<std::uint32_t>(p * c_rows),
                    .acc_addr = static_cast<std::uint32_t>(at.acc),
                    .acc_stride = static_cast<std::uint32_t>(p * f_cols * g_.acc_elem),
                    .accumulate = !first,
                    .row_group = static_cast<std::uint32_t>(g_.ow / p),
                    .group_stride = static_cast<std::uint32_t>(s_.stride_h * g_.padded_row)});
    }

    const Conv2dProblem &p_;
    const Conv2dShape &s_;
    const Geometry &g_;
};

// Output pixels a MATMUL row computes: with one channel, stride 1 across and one filter tile, P
// adjacent pixels of an output row (P dividing OW, P F columns, P <= 32 rows: one bf16 block)
// against a P x P F tile holding the tap's weights w[f] at (j, j F + f) and zeros elsewhere,
// instead of a K = 1 MATMUL row per pixel. Pixel j's column sees its own product at k = j and
// products with zero weights elsewhere, which change no sum of finite values (a step from +0
// keeps +0; int8 adds 0; bf16 adds E + O, where the zero chain stays +0 and a -0 from the other
// chain becomes +0 as it does against O = +0 unpacked), so the results are bit for bit those of
// one pixel a row; an infinite or NaN input pixel makes the other pixels of its MATMUL rows NaN
// (0 x inf), where unpacked only its own outputs see it. The accumulators hold the same layout.
std::uint64_t pack_pixels(const Conv2dShape &s, std::uint64_t ow, const ArrayLimits &limits) {
    if (s.channels != 1 || s.stride_w != 1 || s.filters > limits.mxu_cols)
        return 1;
    std::uint64_t p =
        std::min<std::uint64_t>({limits.mxu_cols / s.filters, limits.mxu_rows, TPU_BF16_BLOCK_K});
    while (p > 1 && ow % p != 0)
        --p;
    return p;
}

// The most whole images one stack holds: their slots in the window, the output rows their
// MATMULs walk in one MATMUL and in the accumulators, their instructions in one program.
std::uint64_t stack_images(const Conv2dShape &s, const Geometry &g, const BlockEmitter &emitter,
                           std::uint64_t window_bytes, std::uint64_t acc_bytes,
                           std::size_t max_program_bytes) {
    const std::uint64_t max_insns = max_program_bytes / TPU_INSN_SIZE - 1;
    const auto fits = [&](std::uint64_t images) {
        const std::uint64_t pixels = g.stack_rows(images, s.stride_h) * g.ow;
        const std::uint64_t last = (g.oh - 1) * s.stride_h + s.kernel_h; // rows the last reads
        return ((images - 1) * g.slot_rows + last) * g.padded_row <= window_bytes &&
               pixels <= max_dim && pixels * g.tile_f * g.acc_elem <= acc_bytes &&
               emitter.stack_instructions(images) <= max_insns;
    };
    if (!fits(1))
        return 0;
    std::uint64_t images = 1;
    while (images < s.batch && fits(images + 1))
        ++images;
    return images;
}

} // namespace

Conv2dPlan compile_conv2d(const Conv2dProblem &problem, const ArrayLimits &limits,
                          std::size_t max_program_bytes) {
    const Conv2dShape &s = problem.shape;
    check_shape(problem.type, s);
    if (limits.mxu_rows == 0 || limits.mxu_cols == 0)
        throw Error(ErrorCode::Unsupported, "conv2d: the card reports an empty matrix unit");
    Geometry g{};
    g.elem = element_size(problem.type);
    g.acc_elem = element_size(accumulator_type(problem.type));
    g.oh = s.out_height();
    g.ow = s.out_width();
    g.padded_h = s.height + 2ull * s.pad_h;
    g.padded_w = s.width + 2ull * s.pad_w;
    g.slot_rows = (g.padded_h + s.stride_h - 1) / s.stride_h * s.stride_h;
    g.pixel = std::uint64_t{s.channels} * g.elem;
    g.padded_row = g.padded_w * g.pixel;
    g.tile_c = std::min<std::uint64_t>(s.channels, limits.mxu_rows);
    // bf16 sums channels in blocks of 32: a tile of a tap's channels must not split a block.
    if (problem.type == DType::Bf16 && g.tile_c < s.channels) {
        if (g.tile_c < TPU_BF16_BLOCK_K)
            throw Error(ErrorCode::Unsupported, "conv2d: bf16 with more than " +
                                                    std::to_string(g.tile_c) +
                                                    " channels needs a matrix unit of at least " +
                                                    std::to_string(TPU_BF16_BLOCK_K) + " rows");
        g.tile_c -= g.tile_c % TPU_BF16_BLOCK_K;
    }
    g.tile_f = std::min<std::uint64_t>(s.filters, limits.mxu_cols);
    g.pack = pack_pixels(s, g.ow, limits);
    if (std::uint64_t{s.width} * s.channels > max_dim)
        throw Error(ErrorCode::Unsupported,
                    "conv2d: an input row of " + std::to_string(s.width * s.channels) +
                        " elements is longer than one DMA row (" + std::to_string(max_dim) + ")");

    // The epilogue's staging area: a quarter of the unified buffer, and at least the bias and
    // one output row of a filter tile.
    std::uint64_t window_bytes = limits.ub_bytes;
    g.out_elem = g.acc_elem;
    g.stage_addr = g.stage_pixels = 0;
    if (problem.epilogue) {
        g.out_elem = element_size(problem.epilogue->out_type);
        if (g.out_elem == 0)
            invalid("the epilogue has no output type");
        const std::uint64_t bias = problem.epilogue->bias_addr ? g.tile_f * 4 : 0;
        const std::uint64_t pixel_bytes = g.tile_f * g.out_elem;
        const std::uint64_t stage =
            std::max<std::uint64_t>(limits.ub_bytes / 4, bias + g.ow * pixel_bytes + 64) / 64 * 64;
        if (stage >= limits.ub_bytes)
            throw Error(ErrorCode::Unsupported,
                        "conv2d: the epilogue of one output row does not fit the card's unified "
                        "buffer (" +
                            std::to_string(limits.ub_bytes) + " bytes)");
        g.stage_addr = (limits.ub_bytes - stage) / 64 * 64; // ACTIVATE's bias: 4-aligned
        window_bytes = g.stage_addr;
        g.stage_pixels =
            std::min<std::uint64_t>((limits.ub_bytes - g.stage_addr - bias) / pixel_bytes, max_dim);
    }

    if (g.pack > 1) { // the packed taps' tiles below the staging area
        const std::uint64_t tiles =
            std::uint64_t{s.kernel_h} * s.kernel_w * g.pack * g.pack * g.tile_f * g.elem;
        if (tiles + 64 > window_bytes)
            g.pack = 1;
        else
            window_bytes = g.tile_addr = (window_bytes - tiles) / 64 * 64;
    }

    // The most output rows whose pixels fit a MATMUL and the accumulators (one filter tile),
    // and whose padded input rows fit the unified buffer (below the epilogue's staging area).
    std::uint64_t rows = std::min<std::uint64_t>(g.oh, max_dim / g.ow);
    rows = std::min(rows, limits.acc_bytes / (g.ow * g.tile_f * g.acc_elem));
    if (g.padded_row * s.kernel_h > window_bytes)
        rows = 0;
    else
        rows = std::min(rows, (window_bytes / g.padded_row - s.kernel_h) / s.stride_h + 1);
    if (rows == 0)
        throw Error(ErrorCode::Unsupported,
                    "conv2d: one output row does not fit the card's matrix unit, accumulators (" +
                        std::to_string(limits.acc_bytes) + " bytes) or unified buffer (" +
                        std::to_string(limits.ub_bytes) + " bytes)");
    g.block_rows = rows;
    const BlockEmitter emitter(problem, g);
    Conv2dPlan plan;
    plan.block_rows = static_cast<std::uint32_t>(rows);
    if (rows == g.oh && emitter.stack_instructions(1) + 1 <= max_program_bytes / TPU_INSN_SIZE) {
        // Whole images, stacked: as many stacks per program (one job) as it holds; at least four
        // stacks, in the two halves in turn, where a batch has four images and they fit.
        g.window_half = window_bytes / 2 / 64 * 64;
        g.acc_half = limits.acc_bytes / 2 / 64 * 64;
        std::uint64_t stack =
            s.batch < 4 ? 0
                        : std::min<std::uint64_t>(stack_images(s, g, emitter, g.window_half,
                                                               g.acc_half, max_program_bytes),
                                                  (s.batch + 3) / 4);
        if (stack == 0) {
            g.window_half = g.acc_half = 0;
            stack = stack_images(s, g, emitter, window_bytes, limits.acc_bytes, max_program_bytes);
        }
        const std::uint64_t per_stack = emitter.stack_instructions(stack);
        const std::uint64_t stacks =
            std::max<std::uint64_t>(1, (max_program_bytes / TPU_INSN_SIZE - 1) / per_stack);
        const auto images =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(s.batch, stacks * stack));
        for (std::uint32_t first = 0; first < s.batch; first += images)
            plan.programs.push_back(emitter.emit_stacks(first, std::min(images, s.batch - first),
                                                        static_cast<std::uint32_t>(stack)));
        return plan;
    }
    if (emitter.block_instructions() * TPU_INSN_SIZE > max_program_bytes)
        throw Error(ErrorCode::Unsupported, "conv2d: the " +
                                                std::to_string(emitter.block_instructions()) +
                                                " instructions of one block exceed a program");
    for (std::uint32_t image = 0; image < s.batch; ++image)
        for (std::uint64_t oy0 = 0; oy0 < g.oh; oy0 += rows)
            plan.programs.push_back(emitter.emit(image, oy0, std::min(rows, g.oh - oy0)));
    return plan;
}

} // namespace tpurt
