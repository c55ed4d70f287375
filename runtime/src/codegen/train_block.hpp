// SPDX-License-Identifier: MIT
// train_block.hpp - what the training-op compilers share: the unified-buffer layout of their
// constants, the start of every program (the constant 1 as a 1 x 1 fp32 weight), Block (one
// tile's instructions on fp32 operands: functions and constants through the accumulators,
// VECTOR with the four kinds of b, REDUCE, TRANSPOSE, dense DMA, bf16 operands widened on the
// way in and rounded on the way out through a Staging area, and the same rounding on the vector
// unit alone). Tiles go into programs through a ProgramSplitter (program_splitter.hpp) with
// start_program() as the prologue.
#pragma once

#include "codegen/isa_limits.hpp"
#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/error.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tpurt::train_detail {

// Unified buffer: the constant 1 at 0, constants and hyperparameters from 64, operands from 128.
constexpr std::uint32_t one_ub = 0;
constexpr std::uint32_t const_ub = 64;
constexpr std::uint32_t data_ub = 128;
// The two constants of the rounding to bf16 (Block::store_typed): 2^-100 as a weight and -2^-100.
constexpr std::uint32_t round_weight_ub = 120;
constexpr std::uint32_t round_tiny_ub = 124;

// Where a tile's bf16 operands pass through the unified buffer: `zeros` holds `capacity` bf16
// zeros that no instruction writes (every job starts with the unified buffer zeroed), and the
// staging row of `capacity` bf16 follows them. Widening is a TRANSPOSE of the 2 x n bf16 matrix
// (zeros, staged values) into n x 2, whose rows are the values' fp32 bits (bf16 in the upper
// half, zeros in the lower): exact for every value, subnormals and -0 included.
struct Staging {
    std::uint32_t zeros = 0;
    std::uint32_t capacity = 0;
    std::uint32_t row() const { return zeros + 2 * capacity; }
    static constexpr std::uint32_t bytes_per_element = 4;
};

// The start of every program (the prologue of its ProgramSplitter): 1.0 at one_ub (exp of a
// still zero accumulator), loaded as the 1 x 1 fp32 weight tile that moves values into the
// accumulators.
inline Program start_program() {
    ProgramBuilder b;
    b.activate({.out_type = DType::Fp32,
                .function = Activation::Exp,
                .acc_addr = 0,
                .acc_stride = 4,
                .dst_addr = one_ub,
                .dst_stride = 4,
                .rows = 1,
                .cols = 1});
    b.load_weights(
        WeightLoad{.type = DType::Fp32, .src_addr = one_ub, .src_stride = 4, .rows = 1, .cols = 1});
    return b.finish();
}

// How b is combined with a in a VECTOR: same shape, b's first row, one value per row
// (TPU_F_VEC_B_COL), or one value for all (B_COL with stride 0).
enum class Bcast { Full, Row, Column, Scalar };

// The instructions of one tile, on fp32 operands in the unified buffer.
class Block {
  public:
    // array_cols: the matrix unit's columns (ArrayLimits::mxu_cols), how many accumulators one
    // MATMUL row clears for round_to_bf16.
    explicit Block(std::uint32_t array_cols = 1) : array_cols_(array_cols) {}
    // dst[i] = f(scale x src[i]) for n values, through the accumulators.
    void apply(Activation f, float scale, std::uint32_t src, std::uint32_t dst, std::uint32_t n,
               DType out = DType::Fp32) {
        b_.matmul({.type = DType::Fp32,
                   .src_addr = src,
                   .src_stride = 4,
                   .rows = n,
                   .cols = 1,
                   .acc_addr = 0,
                   .acc_stride = 4});
        activate_column(f, scale, dst, n, out);
    }
    // apply() `side` values a MATMUL row: through the side x side identity tile that
    // make_identity() wrote at `identity`, n / side + 2 side cycles instead of n. Each column's
    // accumulator starts at +0 and adds the row's products with 0 (+0 or -0) and its own value x
    // 1, so it holds apply()'s value (x, or +0 for -0) wherever src holds no infinity or NaN; an
    // infinity or NaN makes the side values of its row NaN (0 x inf).
    void apply_finite(Activation f, float scale, std::uint32_t src, std::uint32_t dst,
                      std::uint32_t n, std::uint32_t identity, std::uint32_t side,
                      DType out = DType::Fp32) {
        const std::uint32_t full = n / side, rest = n % side;
        for (const auto &[rows, k, at] :
             {std::array<std::uint32_t, 3>{full, side, 0}, {1, rest, full * side}}) {
            if (rows == 0 || k == 0)
                continue;
            b_.load_weights({.type = DType::Fp32,
                             .src_addr = identity,
                             .src_stride = 4 * side,
                             .rows = k,
                             .cols = k});
            b_.matmul({.type = DType::Fp32,
                       .src_addr = src + 4 * at,
                       .src_stride = 4 * k,
                       .rows = rows,
                       .cols = k,
                       .acc_addr = 4 * at,
                       .acc_stride = 4 * k});
        }
        b_.load_weights(
            {.type = DType::Fp32, .src_addr = one_ub, .src_stride = 4, .rows = 1, .cols = 1});
        activate_column(f, scale, dst, n, out);
    }
    // The side x side fp32 identity at `identity` for apply_finite(): zeros (int32 x - x, whatever
    // the bytes held), then 1 x 1 on the diagonal.
    void make_identity(std::uint32_t identity, std::uint32_t side) {
        b_.vector({.type = DType::Int32,
                   .op = VectorOp::Sub,
                   .a_addr = identity,
                   .a_stride = 4 * side,
                   .b_addr = identity,
                   .b_stride = 4 * side,
                   .dst_addr = identity,
                   .dst_stride = 4 * side,
                   .rows = side,
                   .cols = side});
        b_.vector({.type = DType::Fp32,
                   .op = VectorOp::Mul,
                   .a_addr = one_ub,
                   .a_stride = 0,
                   .b_addr = one_ub,
                   .b_stride = 0,
                   .dst_addr = identity,
                   .dst_stride = 4 * (side + 1),
                   .rows = side,
                   .cols = 1,
                   .b_column = true});
    }
    // c at dst.
    void constant(float c, std::uint32_t dst) { apply(Activation::None, c, one_ub, dst, 1); }
    // n copies of c from dst on (a MATMUL that reads the 1 for every row).
    void fill(float c, std::uint32_t dst, std::uint32_t n) {
        b_.matmul({.type = DType::Fp32,
                   .src_addr = one_ub,
                   .src_stride = 0,
                   .rows = n,
                   .cols = 1,
                   .acc_addr = 0,
                   .acc_stride = 4});
        b_.activate({.out_type = DType::Fp32,
                     .function = Activation::None,
                     .acc_addr = 0,
                     .acc_stride = 4,
                     .dst_addr = dst,
                     .dst_stride = 4,
                     .rows = n,
                     .cols = 1,
                     .scale = c});
    }
    void vec(VectorOp op, std::uint32_t a, std::uint32_t b, std::uint32_t dst, std::uint32_t rows,
             std::uint32_t cols, Bcast mode = Bcast::Full) {
        const std::uint32_t row = cols * 4;
        b_.vector({.type = DType::Fp32,
                   .op = op,
                   .a_addr = a,
                   .a_stride = row,
                   .b_addr = b,
                   .b_stride = mode == Bcast::Full     ? row
                               : mode == Bcast::Column ? 4
                                                       : 0,
                   .dst_addr = dst,
                   .dst_stride = row,
                   .rows = rows,
                   .cols = cols,
                   .b_column = mode == Bcast::Column || mode == Bcast::Scalar});
    }
    void reduce(ReduceOp op, std::uint32_t a, std::uint32_t dst, std::uint32_t rows,
                std::uint32_t cols) {
        b_.reduce({.type = DType::Fp32,
                   .op = op,
                   .a_addr = a,
                   .a_stride = cols * 4,
                   .dst_addr = dst,
                   .dst_stride = 4,
                   .rows = rows,
                   .cols = cols});
    }
    // dst[c][r] = src[r][c] for a dense rows x cols fp32 block; dst rows dst_stride bytes apart.
    void transpose(std::uint32_t src, std::uint32_t dst, std::uint32_t rows, std::uint32_t cols,
                   std::uint32_t dst_stride) {
        b_.transpose({.type = DType::Fp32,
                      .src_addr = src,
                      .src_stride = cols * 4,
                      .dst_addr = dst,
                      .dst_stride = dst_stride,
                      .rows = rows,
                      .cols = cols});
    }
    // rows x cols fp32 (or `type`) between dense host rows and dense unified-buffer rows.
    void load(std::uint64_t host, std::uint32_t ub, std::uint32_t rows, std::uint32_t cols) {
        b_.dma_in(transfer(DType::Fp32, host, ub, rows, cols));
    }
    void store(std::uint64_t host, std::uint32_t ub, std::uint32_t rows, std::uint32_t cols,
               DType type = DType::Fp32) {
        b_.dma_out(transfer(type, host, ub, rows, cols));
    }
    // rows x cols fp32 from host rows host_stride bytes apart into dense unified-buffer rows, and
    // back (as `type`).
    void gather(std::uint64_t host, std::uint64_t host_stride, std::uint32_t ub, std::uint32_t rows,
                std::uint32_t cols) {
        DmaTransfer t = transfer(DType::Fp32, host, ub, rows, cols);
        t.host_stride = host_stride;
        b_.dma_in(t);
    }
    void scatter(std::uint64_t host, std::uint64_t host_stride, std::uint32_t ub,
                 std::uint32_t rows, std::uint32_t cols, DType type = DType::Fp32) {
        DmaTransfer t = transfer(type, host, ub, rows, cols);
        t.host_stride = host_stride;
        b_.dma_out(t);
    }
    // rows x cols values of `type` (fp32 or bf16) from dense host rows (host_stride bytes apart
    // for gather_typed) into dense fp32 unified-buffer rows at ub; bf16 through s.
    void load_typed(DType type, std::uint64_t host, std::uint32_t ub, std::uint32_t rows,
                    std::uint32_t cols, const Staging &s) {
        gather_typed(type, host, cols * element_size(type), ub, rows, cols, s);
    }
    void gather_typed(DType type, std::uint64_t host, std::uint64_t host_stride, std::uint32_t ub,
                      std::uint32_t rows, std::uint32_t cols, const Staging &s) {
        if (type == DType::Fp32)
            return gather(host, host_stride, ub, rows, cols);
        DmaTransfer t = transfer(DType::Bf16, host, s.row(), rows, cols);
        t.host_stride = host_stride;
        b_.dma_in(t);
        b_.transpose({.type = DType::Bf16,
                      .src_addr = s.zeros,
                      .src_stride = s.row() - s.zeros,
                      .dst_addr = ub,
                      .dst_stride = 4,
                      .rows = 2,
                      .cols = rows * cols});
    }
    // rows x cols fp32 values at ub into dense host rows (host_stride bytes apart for
    // scatter_typed) as `type`: fp32 unchanged, bf16 rounded to nearest even (-0 kept, NaN
    // 0x7fc0) by ACTIVATE's conversion of accumulators that hold the values exactly: a MATMUL of
    // -2^-100 by the weight 2^-100 makes them -0 (the product, -2^-200, rounds to -0), then the
    // values x 1 accumulate onto them (x + -0 is x for every x, +0 and -0 included). Both
    // factors are normal numbers: a subnormal operand (the -2^-149 this once used) makes every
    // fma of an x86 host's engine take a microcode assist, 40 times the time of the rest.
    void store_typed(DType type, std::uint64_t host, std::uint32_t ub, std::uint32_t rows,
                     std::uint32_t cols, const Staging &s) {
        scatter_typed(type, host, cols * element_size(type), ub, rows, cols, s);
    }
    void scatter_typed(DType type, std::uint64_t host, std::uint64_t host_stride, std::uint32_t ub,
                       std::uint32_t rows, std::uint32_t cols, const Staging &s) {
        if (type == DType::Fp32)
            return scatter(host, host_stride, ub, rows, cols);
        round_to_bf16(ub, s.row(), rows * cols);
        scatter(host, host_stride, s.row(), rows, cols, DType::Bf16);
    }
    // n fp32 values at src as bf16 at dst (store_typed's rounding). The -0 that the values
    // accumulate onto is written array_cols accumulators a MATMUL row (a 1 x array_cols tile of
    // 2^-100, one row of -2^-100 per array_cols values): n / array_cols + array_cols cycles
    // instead of the n of the values' own MATMUL.
    void round_to_bf16(std::uint32_t src, std::uint32_t dst, std::uint32_t n) {
        constant(0x1p-100f, round_weight_ub);
        constant(-0x1p-100f, round_tiny_ub);
        const std::uint32_t full = n / array_cols_, rest = n % array_cols_;
        for (const auto &[rows, cols, at] :
             {std::array<std::uint32_t, 3>{full, array_cols_, 0}, {1, rest, full * array_cols_}}) {
            if (rows == 0 || cols == 0)
                continue;
            // W[0][c] = 2^-100 for every c: cols rows of one element, all at round_weight_ub.
            b_.load_weights({.type = DType::Fp32,
                             .src_addr = round_weight_ub,
                             .src_stride = 0,
                             .rows = 1,
                             .cols = cols,
                             .transposed = true});
            b_.matmul({.type = DType::Fp32,
                       .src_addr = round_tiny_ub,
                       .src_stride = 0,
                       .rows = rows,
                       .cols = 1,
                       .acc_addr = 4 * at,
                       .acc_stride = 4 * cols});
        }
        b_.load_weights(
            {.type = DType::Fp32, .src_addr = one_ub, .src_stride = 4, .rows = 1, .cols = 1});
        b_.matmul({.type = DType::Fp32,
                   .src_addr = src,
                   .src_stride = 4,
                   .rows = n,
                   .cols = 1,
                   .acc_addr = 0,
                   .acc_stride = 4,
                   .accumulate = true});
        b_.activate({.out_type = DType::Bf16,
                     .function = Activation::None,
                     .acc_addr = 0,
                     .acc_stride = 4,
                     .dst_addr = dst,
                     .dst_stride = 2,
                     .rows = n,
                     .cols = 1});
    }
    // The bytes round_to_bf16_vpu() needs at `work` for up to `capacity` values.
    static constexpr std::uint32_t round_vpu_work_bytes(std::uint32_t capacity) {
        return 16 + 8 * capacity;
    }
    // round_to_bf16()'s bits (nearest even, -0 kept, NaN 0x7fc0) on the vector unit alone, about
    // 7 n / 128 cycles instead of the n of a MATMUL row per value. The n fp32 values at src
    // (overwritten) times 1 (NaN becomes 0x7fc00000, everything else stays), then as int32 bits
    // b: t = b + 0x7fff + bit 16 of b (wrapping: the carry of a rounding up runs into the
    // exponent, the largest finite values' into infinity; 0x7fc00000 gives 0x7fc0), whose upper
    // half is the bf16 value. Bit 16 is the sign of b x 2^15; the upper halves are row 1 of the
    // TRANSPOSE of the n x 2 bf16 halves. `work` holds round_vpu_work_bytes(capacity) bytes,
    // n <= capacity; the bf16 values end it (its last 2 capacity bytes).
    void round_to_bf16_vpu(std::uint32_t src, std::uint32_t work, std::uint32_t capacity,
                           std::uint32_t n) {
        const std::uint32_t half = work, one = work + 4, minus_one = work + 8,
                            not_bit16 = work + 16, halves = not_bit16 + 4 * capacity;
        constant(std::bit_cast<float>(0x8000u), half);
        constant(std::bit_cast<float>(1u), one);
        constant(0.0f, minus_one);
        int32(VectorOp::Sub, minus_one, 0, one, minus_one, 1); // 0 - 1
        b_.vector({.type = DType::Fp32,
                   .op = VectorOp::Mul,
                   .a_addr = src,
                   .a_stride = 4 * n,
                   .b_addr = one_ub,
                   .b_stride = 0,
                   .dst_addr = src,
                   .dst_stride = 4 * n,
                   .rows = 1,
                   .cols = n,
                   .b_column = true});
        int32(VectorOp::Mul, src, 4 * n, half, not_bit16, n);           // bit 16 as the sign
        int32(VectorOp::Gt, not_bit16, 4 * n, minus_one, not_bit16, n); // 1 - bit 16
        int32(VectorOp::Add, src, 4 * n, half, src, n);                 // b + 0x8000
        int32(VectorOp::Sub, src, 4 * n, not_bit16, src, n, false);     // - (1 - bit 16)
        b_.transpose({.type = DType::Bf16,
                      .src_addr = src,
                      .src_stride = 4,
                      .dst_addr = halves,
                      .dst_stride = 2 * capacity,
                      .rows = n,
                      .cols = 2});
    }
    // The builder itself, for instructions on other dtypes.
    ProgramBuilder &builder() { return b_; }
    Program finish() { return b_.finish(); }

  private:
    // dst = a op b over n int32 values (a_stride: one row of them, or 0 for one value): b the
    // scalar at b, or (scalar false) n values like a.
    void int32(VectorOp op, std::uint32_t a, std::uint32_t a_stride, std::uint32_t b,
               std::uint32_t dst, std::uint32_t n, bool scalar = true) {
        b_.vector({.type = DType::Int32,
                   .op = op,
                   .a_addr = a,
                   .a_stride = a_stride,
                   .b_addr = b,
                   .b_stride = scalar ? 0 : a_stride,
                   .dst_addr = dst,
                   .dst_stride = a_stride,
                   .rows = 1,
                   .cols = n,
                   .b_column = scalar});
    }
    // dst[i] = f(scale x acc[i]) for the n accumulators of one column, as `out`.
    void activate_column(Activation f, float scale, std::uint32_t dst, std::uint32_t n, DType out) {
        b_.activate({.out_type = out,
                     .function = f,
                     .acc_addr = 0,
                     .acc_stride = 4,
                     .dst_addr = dst,
                     .dst_stride = static_cast<std::uint32_t>(element_size(out)),
                     .rows = n,
                     .cols = 1,
                     .scale = scale});
    }
    static DmaTransfer transfer(DType type, std::uint64_t host, std::uint32_t ub,
                                std::uint32_t rows, std::uint32_t cols) {
        const auto row = static_cast<std::uint32_t>(cols * element_size(type));
        return {.type = type,
                .host_addr = host,
                .host_stride = row,
                .local_addr = ub,
                .local_stride = row,
                .rows = rows,
                .cols = cols};
    }
    ProgramBuilder b_;
    std::uint32_t array_cols_;
};

// A training operand's dtype: fp32 or bf16; `bytes` its element size.
inline std::uint32_t float_operand(const std::string &op, const char *name, DType type) {
    if (type != DType::Fp32 && type != DType::Bf16)
        throw Error(ErrorCode::InvalidArgument,
                    op + ": " + name + " is " + dtype_name(type) + "; the op takes fp32 or bf16");
    return static_cast<std::uint32_t>(element_size(type));
}

// The staging area's bytes per element when any of `types` is bf16, else 0.
inline std::uint32_t staging_bytes(std::initializer_list<DType> types) {
    for (DType t : types)
        if (t == DType::Bf16)
            return Staging::bytes_per_element;
    return 0;
}

[[noreturn]] inline void unsupported(const std::string &op, const ArrayLimits &limits) {
    throw Error(ErrorCode::Unsupported,
                op + " does not fit the card (unified buffer " + std::to_string(limits.ub_bytes) +
                    " bytes, accumulators " + std::to_string(limits.acc_bytes) + " bytes)");
}

} // namespace tpurt::train_detail
