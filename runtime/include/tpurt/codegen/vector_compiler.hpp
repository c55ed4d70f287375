// SPDX-License-Identifier: MIT
// vector_compiler.hpp - compiles the vector unit's ops over whole matrices into card programs:
// elementwise dst = a op b (add, sub, mul, max, min; b the same shape, or one row broadcast to
// every row of a) and row reductions dst[r] = sum or max of a[r][*]. A pure function of
// shapes, addresses and the card's limits, like compile_matmul(). Results are the card's
// VECTOR and REDUCE arithmetic (docs/hardware.md, Numerics) element for element.
//
// Elementwise: the matrix is cut into tiles of at most 65535 rows and columns that fit the
// unified buffer (a tile and, unless broadcast, b's tile; the result overwrites a's tile in
// place, which the card defines element by element); per tile DMA_IN a (and b, or b's one row),
// VECTOR, DMA_OUT. Reductions: tiles of whole rows (a row must fit the unified buffer and 65535
// columns, so the sum is one REDUCE in ascending column order, exactly as the card defines it);
// per tile DMA_IN, REDUCE, DMA_OUT. Tiles are self-contained, so long ops split into jobs at
// tile boundaries.
//
// Unary functions (ACTIVATE's relu, relu6, gelu, sigmoid, tanh, exp, or none: a conversion,
// each after a scale, so casts with a scale quantise and dequantise) over a flat array: ACTIVATE
// reads the accumulators, which only MATMUL writes, so each program first makes the constant 1
// (ACTIVATE EXP of an accumulator still zero: exp(0) is exactly 1), loads it as a 1 x 1 weight
// tile, and then per chunk of at most 65535 elements DMA_IN, MATMUL (the chunk as a column: acc = x
// x 1 + 0), ACTIVATE into the output type, DMA_OUT. x x 1 + 0 is x except that a zero of either
// sign becomes +0, and bf16 MATMUL reads subnormal inputs as zero (DAZ); so f is applied to x, or
// to +0 for those. int8 inputs go through the int8 MATMUL into int32 accumulators (exact) and are
// converted to fp32 exactly.
#pragma once

#include "tpurt/card/vpu_ops.hpp"
#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpurt {

struct ElementwiseProblem {
    DType type = DType::Fp32; // Int8, Bf16, Int32 or Fp32; a, b and dst alike
    VectorOp op = VectorOp::Add;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    bool broadcast_b = false; // b is one row of cols elements, combined with every row of a
    std::uint64_t a_addr = 0, b_addr = 0, dst_addr = 0;
    std::uint64_t a_stride = 0, b_stride = 0, dst_stride = 0; // bytes between rows; 0: dense
};

struct ReduceProblem {
    DType type = DType::Fp32; // input type
    ReduceOp op = ReduceOp::Sum;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint64_t a_addr = 0, dst_addr = 0;
    std::uint64_t a_stride = 0; // bytes between rows of a; 0: dense. dst is dense
    // Over a's columns instead (dst: cols values): blocks of columns into the unified buffer,
    // TRANSPOSEd there and reduced as rows, the same operations as a TRANSPOSE of a into memory
    // and the reduction of its rows, without the round trip (rows <= 65535).
    bool columns = false;
};

struct UnaryProblem {
    DType type = DType::Fp32;     // input: Int8, Bf16 or Fp32
    DType out_type = DType::Fp32; // Int8, Bf16, Int32 or Fp32 (ACTIVATE's conversion)
    Activation function = Activation::None;
    float scale = 1.0f; // out = function(scale x x), as ACTIVATE scales
    std::uint64_t elements = 0;
    std::uint64_t a_addr = 0, dst_addr = 0; // densely packed
};

// out[c][r] = a[r][c] for a rows x cols matrix of any type.
struct TransposeProblem {
    DType type = DType::Fp32;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint64_t a_addr = 0, dst_addr = 0;
    std::uint64_t a_stride = 0, dst_stride = 0; // bytes between rows (dst has cols rows); 0: dense
};

// Max or average pooling of NHWC images: out [N][OH][OW][C] with
// OH = (H + 2 pad_h - win_h) / stride_h + 1 (OW likewise), windows of at most 16 x 16. The image
// is padded with pad_h rows above and below and pad_w pixels left and right (each below the
// window's size, so that every window holds a pixel of the image): with -inf (the lowest value
// of an integer type) for MAX, which no window then picks, and with 0 for AVG, which divides by
// win_h x win_w also where the window reaches into the padding (PyTorch's count_include_pad).
// Padding needs the training instructions (spec 1.4) for MAX.
struct PoolProblem {
    DType type = DType::Fp32; // Int8, Bf16, Int32 or Fp32
    PoolOp op = PoolOp::Max;
    std::uint32_t batch = 1, height = 0, width = 0, channels = 0;
    std::uint32_t win_h = 0, win_w = 0, stride_h = 0, stride_w = 0;
    std::uint64_t a_addr = 0, dst_addr = 0; // densely packed
    std::uint32_t pad_h = 0, pad_w = 0;

    std::uint32_t out_height() const { return (height + 2 * pad_h - win_h) / stride_h + 1; }
    std::uint32_t out_width() const { return (width + 2 * pad_w - win_w) / stride_w + 1; }
};

// The type of a reduction's result: SUM of Int8 / Int32 gives Int32, of Bf16 / Fp32 Fp32;
// MAX keeps the type.
constexpr DType reduce_result_type(DType type, ReduceOp op) {
    if (op == ReduceOp::Max)
        return type;
    return (type == DType::Int8 || type == DType::Int32) ? DType::Int32 : DType::Fp32;
}

// Throw Error(InvalidArgument) for empty shapes, strides shorter than a row or an unknown type,
// and Error(Unsupported) for a reduction whose row does not fit the card (see above).
std::vector<Program> compile_elementwise(const ElementwiseProblem &problem,
                                         const ArrayLimits &limits,
                                         std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);
std::vector<Program> compile_unary(const UnaryProblem &problem, const ArrayLimits &limits,
                                   std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);
// Tiles of at most 65535 x 65535 whose source and transposed copy fit the unified buffer
// together: DMA_IN, TRANSPOSE, DMA_OUT into the tile's transposed place.
std::vector<Program> compile_transpose(const TransposeProblem &problem, const ArrayLimits &limits,
                                       std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);
// Per image, bands of output rows whose input rows and results fit the unified buffer: DMA_IN
// of the band's input rows (inside their padding, padded_rows.hpp), one POOL, DMA_OUT. A padded
// input row ((W + 2 pad_w) x C elements) must fit one DMA (65535 elements) and the unified
// buffer.
std::vector<Program> compile_pool(const PoolProblem &problem, const ArrayLimits &limits,
                                  std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);
std::vector<Program> compile_reduce(const ReduceProblem &problem, const ArrayLimits &limits,
                                    std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

} // namespace tpurt
