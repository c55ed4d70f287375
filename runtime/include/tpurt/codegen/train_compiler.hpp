// SPDX-License-Identifier: MIT
// train_compiler.hpp - compiles the training step's vector-unit ops into card programs: softmax,
// log-softmax and the fused softmax cross-entropy (per-row loss and its gradient), the
// gradients of ReLU, sigmoid, tanh and GELU, and the SGD-with-momentum and Adam updates of fp32
// master weights (with a bf16 copy of the weights for the next forward). Pure functions of
// shapes, addresses and the card's limits, like compile_unary(); they need the spec 1.4
// instructions (TPU_CAP_VPU_TRAIN: VECTOR DIV / GATE and the per-row broadcast B_COL, ACTIVATE
// LOG and SQRT). Operands are densely packed fp32 unless a problem names their dtypes: the
// activation-gradient, cross-entropy and pooling-gradient operands may each also be bf16, widened
// exactly to fp32 on the way in and rounded to nearest even on the way out (train_block.hpp), so
// the result is the fp32 computation's rounded to bf16, -0 kept and NaN 0x7fc0.
//
// Every program starts by making the constant 1 (ACTIVATE EXP of an accumulator still zero) and
// loading it as a 1 x 1 fp32 weight tile. A function f(scale x) of values in the unified buffer
// is then MATMUL (the values as a column: acc = x x 1 + 0, exact but for -0 -> +0) followed by
// ACTIVATE f with that scale; a constant c is MATMUL of the 1 and ACTIVATE NONE with scale c.
// Every step is one of the card's exactly defined instructions, so results are reproducible bit
// for bit; the order of operations is spelled out at each problem below.
#pragma once

#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/types/dtype.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpurt {

enum class SoftmaxKind : unsigned char {
    Softmax,      // out = e / s with e = exp(x - max), s = sum of e over the row (ascending)
    LogSoftmax,   // out = (x - max) - log(s)
    CrossEntropy, // loss[r] = -sum_c t[r][c] x logsoftmax[r][c]; out = grad_scale x (p - t)
};

// Over the last dimension of a rows x cols matrix. A row must fit the card (cols <= 65535 and
// its working set in the unified buffer). CrossEntropy reads targets t (probabilities, e.g.
// one-hot rows) and writes the per-row losses (rows fp32) and the gradient of
// grad_scale x sum(loss) with respect to x into out (grad_scale = 1 / rows: the mean's).
struct SoftmaxProblem {
    SoftmaxKind kind = SoftmaxKind::Softmax;
    std::uint32_t rows = 0, cols = 0;
    float grad_scale = 1.0f;
    DType x_type = DType::Fp32, out_type = DType::Fp32; // fp32 or bf16; targets, loss fp32
    std::uint64_t x_addr = 0, target_addr = 0, out_addr = 0, loss_addr = 0;
};

enum class GradFunction : unsigned char {
    Relu,    // dx = x > 0 ? dy : 0 (VECTOR GATE); reads the forward input x
    Sigmoid, // dx = (y - y y) dy; reads the forward output y
    Tanh,    // dx = dy - (y y) dy; reads the forward output y
    Gelu,    // the card's GELU x s(v), v = k (x + a x^3): dx = (s + (s - s s) x (k + 3ak x^2)) dy
};

struct ActivationGradProblem {
    GradFunction function = GradFunction::Relu;
    std::uint64_t elements = 0;
    DType x_type = DType::Fp32, dy_type = DType::Fp32, dx_type = DType::Fp32; // fp32 or bf16
    std::uint64_t x_addr = 0; // x (Relu, Gelu) or y (Sigmoid, Tanh)
    std::uint64_t dy_addr = 0, dx_addr = 0;
};

enum class OptimizerKind : unsigned char { SgdMomentum, Adam };

// The hyperparameters, fp32[8] in device memory (an argument, so a new learning rate or step
// needs no new program):
//   SgdMomentum {lr, momentum, weight_decay}: g' = g + wd w; m = momentum m + g'; w = w - lr m.
//   Adam {c1, b1, 1 - b1, b2, 1 - b2, c2, eps, weight_decay} with c1 = lr / (1 - b1^t) and
//   c2 = 1 / sqrt(1 - b2^t) for step t >= 1: g' = g + wd w; m = b1 m + (1 - b1) g';
//   v = b2 v + (1 - b2) g' g'; w = w - c1 m / (sqrt(v) c2 + eps).
// w, m (and v) are updated in place; with bf16_addr the new w is also written as bf16.
struct OptimizerProblem {
    OptimizerKind kind = OptimizerKind::SgdMomentum;
    std::uint64_t elements = 0;
    bool bf16_copy = false;
    std::uint64_t w_addr = 0, g_addr = 0, m_addr = 0, v_addr = 0, hp_addr = 0, bf16_addr = 0;
};

inline constexpr std::size_t optimizer_hp_count = 8;
std::array<float, optimizer_hp_count> sgd_hyperparameters(float lr, float momentum,
                                                          float weight_decay = 0.0f);
std::array<float, optimizer_hp_count> adam_hyperparameters(float lr, float beta1, float beta2,
                                                           float eps, float weight_decay,
                                                           std::uint64_t step);

// The gradient of max or average pooling (the forward POOL's windows: window_h x window_w at
// stride_h, stride_w, over the image padded as compile_pool pads it) over NHWC images: dx
// [N, H, W, C] from dy [N, OH, OW, C], OH = (H + 2 pad_h - window_h) / stride_h + 1 (OW
// likewise), and for MAX the forward input x and output y. A window's contribution to an element of
// it: for MAX dy if the element is the first in row-major order within the window equal to y (the
// element the forward POOL kept; a window whose y is NaN contributes nothing) and otherwise 0 x dy;
// for AVG dy / (window_h window_w). Windows may overlap (stride below the window) or leave gaps:
// each dx element is the fp32 sum of its windows' contributions in row-major order of the windows
// (oy, then ox), starting from -0 (so an element of one window is exactly its contribution, -0
// kept), and +0 where no window covers it. A bf16 dx is that sum rounded once.
//
// Programs: windows that tile the image exactly (window = stride, H = OH window_h, W likewise)
// go a chunk of window rows at a time: dy (and y) in, for MAX avail = 1 and per window row r
// the chunk's x rows r gathered densely, per window column j hit = (x == y) avail, avail -=
// hit, dx = hit dy at column j of every window; for AVG dx = dy / (window_h window_w); then
// the dx rows r out. Other windows: one tile per dx row (n, iy), which stays in the unified
// buffer: for each window row oy covering it, its dy (and y) row is loaded, for MAX the hits of
// the window rows 0 .. i (i = iy - oy stride_h) are recomputed from strided gathers of x (hit =
// (x == y) x avail, avail = avail - hit, avail starting at 1), and the contributions of row i
// are added at stride stride_w (VECTOR ADD, in ascending ox); then one store of the row.
//
// With padding the gradient is taken over the padded image, whose padding cells hold what the
// forward POOL saw there (-inf for MAX, so a window whose maximum is -inf may give its dy to a
// padding cell that comes first; 0 for AVG), and the padding's share is dropped: for MAX first
// x padded into xp_addr (x_type, [N, H + 2 pad_h, W + 2 pad_w, C]), then the gradient without
// padding over it into dxp_addr (dx_type, the padded shape), then dx copied out of dxp's
// interior. Without padding xp_addr and dxp_addr are not used.
struct PoolGradProblem {
    PoolOp op = PoolOp::Max;
    std::uint32_t batch = 1, height = 0, width = 0, channels = 0;
    std::uint32_t window_h = 2, window_w = 2, stride_h = 2, stride_w = 2;
    DType x_type = DType::Fp32; // x and y (MAX); fp32 or bf16 like dy_type and dx_type
    DType dy_type = DType::Fp32, dx_type = DType::Fp32;
    std::uint64_t x_addr = 0, y_addr = 0, dy_addr = 0, dx_addr = 0;
    std::uint32_t pad_h = 0, pad_w = 0;
    std::uint64_t xp_addr = 0, dxp_addr = 0; // scratch of the padded image (see above)

    // The forward output's height and width (0 for windows larger than the padded image).
    std::uint32_t out_height() const { return out_extent(height, pad_h, window_h, stride_h); }
    std::uint32_t out_width() const { return out_extent(width, pad_w, window_w, stride_w); }
    bool padded() const { return pad_h != 0 || pad_w != 0; }
    // Elements of the padded image (the scratch xp and dxp hold).
    std::uint64_t padded_elements() const {
        return std::uint64_t{batch} * (height + 2ull * pad_h) * (width + 2ull * pad_w) * channels;
    }

  private:
    static std::uint32_t out_extent(std::uint32_t size, std::uint32_t pad, std::uint32_t window,
                                    std::uint32_t stride) {
        const std::uint64_t padded = size + 2ull * pad;
        return padded < window || stride == 0
                   ? 0
                   : static_cast<std::uint32_t>((padded - window) / stride + 1);
    }
};

std::vector<Program> compile_pool_grad(const PoolGradProblem &problem, const ArrayLimits &limits,
                                       std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

std::vector<Program> compile_softmax(const SoftmaxProblem &problem, const ArrayLimits &limits,
                                     std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);
std::vector<Program> compile_activation_grad(const ActivationGradProblem &problem,
                                             const ArrayLimits &limits,
                                             std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);
std::vector<Program> compile_optimizer(const OptimizerProblem &problem, const ArrayLimits &limits,
                                       std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

const char *softmax_kind_name(SoftmaxKind kind);
const char *grad_function_name(GradFunction function);
const char *optimizer_name(OptimizerKind kind);

} // namespace tpurt
