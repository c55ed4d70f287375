// SPDX-License-Identifier: MIT
// pool_grad_ops.cpp - the pooling gradients on tensors (see train_ops.hpp): checks the operands
// against the forward pool2d()'s windows, takes the scratch of a padded image, fetches the
// executable of pool_grad_kernel.cpp and gives the three forms of tensor_ops.hpp.
#include "memory/scratch.hpp"
#include "ops/train/train_checks.hpp"
#include "tpurt/codegen/op_executables.hpp"
#include "tpurt/error.hpp"
#include "tpurt/ops/train_ops.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tpurt {

namespace {

using detail::dim32;
using detail::refuse;
using detail::require_float_dense;
using detail::require_train_unit;

std::string windows_text(const PoolGradProblem &p) {
    return "windows of " + std::to_string(p.window_h) + " x " + std::to_string(p.window_w) +
           " at strides " + std::to_string(p.stride_h) + " x " + std::to_string(p.stride_w) +
           (p.padded()
                ? " with padding " + std::to_string(p.pad_h) + " x " + std::to_string(p.pad_w)
                : "");
}

// "(H - 3)" or, padded, "(H + 2 x 1 - 3)".
std::string extent_text(const char *name, std::uint32_t pad, std::uint32_t window) {
    return std::string("(") + name + (pad ? " + 2 x " + std::to_string(pad) : "") + " - " +
           std::to_string(window) + ")";
}

// The problem of images `in` [N, H, W, C] pooled into `out` [N, OH, OW, C] (both checked).
PoolGradProblem pool_problem(const std::string &op, PoolOp pool, const Tensor &in,
                             const char *in_name, const Tensor &out, const char *out_name,
                             const PoolWindow &window) {
    PoolGradProblem p{.op = pool,
                      .window_h = window.window_h,
                      .window_w = window.window_w,
                      .stride_h = window.stride_h,
                      .stride_w = window.stride_w,
                      .pad_h = window.pad_h,
                      .pad_w = window.pad_w};
    if (p.window_h == 0 || p.window_w == 0 || p.stride_h == 0 || p.stride_w == 0)
        refuse(op, windows_text(p) + ": windows and strides must be at least 1");
    if (p.pad_h >= p.window_h || p.pad_w >= p.window_w)
        refuse(op, windows_text(p) + ": the padding must be below the window");
    if (in.rank() != 4)
        refuse(op, std::string(in_name) + " " + in.layout().describe() +
                       " must be a batch of NHWC images [N, H, W, C]");
    p.batch = dim32(op, in.size(0), in.layout());
    p.height = dim32(op, in.size(1), in.layout());
    p.width = dim32(op, in.size(2), in.layout());
    p.channels = dim32(op, in.size(3), in.layout());
    if (p.out_height() == 0 || p.out_width() == 0)
        refuse(op, std::string(in_name) + " " + in.layout().describe() +
                       " is smaller than one window (" + windows_text(p) + ")");
    const std::vector<std::size_t> expected{in.size(0), p.out_height(), p.out_width(), in.size(3)};
    if (out.shape() != expected)
        refuse(op, std::string(out_name) + " " + out.layout().describe() + " must be [N, " +
                       extent_text("H", p.pad_h, p.window_h) + " / " + std::to_string(p.stride_h) +
                       " + 1, " + extent_text("W", p.pad_w, p.window_w) + " / " +
                       std::to_string(p.stride_w) + " + 1, C] = [" + std::to_string(expected[0]) +
                       ", " + std::to_string(expected[1]) + ", " + std::to_string(expected[2]) +
                       ", " + std::to_string(expected[3]) + "] for " + in_name + " " +
                       in.layout().describe() + " and " + windows_text(p) +
                       ": the forward pool2d()'s output shape");
    return p;
}

// The scratch of the padded image (see train_compiler.hpp's PoolGradProblem), none without
// padding.
std::optional<Tensor> padded_scratch(Device &device, const PoolGradProblem &p, DType type) {
    if (!p.padded())
        return std::nullopt;
    return detail::scratch_tensor(
        device, type, {p.batch, p.height + 2ull * p.pad_h, p.width + 2ull * p.pad_w, p.channels});
}

} // namespace

OpLaunch prepare_max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y, const Tensor &dy,
                                 const Tensor &dx, const PoolWindow &window) {
    const std::string op = "max_pool2d_grad";
    require_train_unit(device.info(), op);
    const DType x_type = require_float_dense(op, "x", x.layout());
    if (require_float_dense(op, "y", y.layout()) != x_type)
        refuse(op, std::string("x is ") + dtype_name(x_type) + " and y " + dtype_name(y.dtype()) +
                       ": x and y must have one dtype (fp32 or bf16)");
    PoolGradProblem p = pool_problem(op, PoolOp::Max, x, "x", y, "y", window);
    p.x_type = x_type;
    p.dy_type = require_float_dense(op, "dy", dy.layout());
    p.dx_type = require_float_dense(op, "dx", dx.layout());
    detail::require_same_shape(op, x.layout(), "dx", dx.layout());
    detail::require_same_shape(op, y.layout(), "dy", dy.layout());
    const std::optional<Tensor> xp = padded_scratch(device, p, p.x_type),
                                dxp = padded_scratch(device, p, p.dx_type);
    return launch_of(cached_executable(device, p),
                     {&x, &y, &dy, &dx, xp ? &*xp : nullptr, dxp ? &*dxp : nullptr});
}

OpLaunch prepare_avg_pool2d_grad(Device &device, const Tensor &dy, const Tensor &dx,
                                 const PoolWindow &window) {
    const std::string op = "avg_pool2d_grad";
    require_train_unit(device.info(), op);
    PoolGradProblem p = pool_problem(op, PoolOp::Avg, dx, "dx", dy, "dy", window);
    p.dy_type = require_float_dense(op, "dy", dy.layout());
    p.dx_type = require_float_dense(op, "dx", dx.layout());
    const std::optional<Tensor> dxp = padded_scratch(device, p, p.dx_type);
    return launch_of(cached_executable(device, p), {&dy, &dx, dxp ? &*dxp : nullptr});
}

OpLaunch prepare_max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y, const Tensor &dy,
                                 const Tensor &dx, std::uint32_t window_h, std::uint32_t window_w,
                                 std::uint32_t stride_h, std::uint32_t stride_w) {
    return prepare_max_pool2d_grad(device, x, y, dy, dx, {window_h, window_w, stride_h, stride_w});
}
MatmulStats max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y, const Tensor &dy,
                            Tensor &dx, const PoolWindow &window,
                            std::chrono::nanoseconds timeout) {
    return prepare_max_pool2d_grad(device, x, y, dy, dx, window).run(device, timeout);
}
void max_pool2d_grad(Stream &stream, const Tensor &x, const Tensor &y, const Tensor &dy,
                     const Tensor &dx, const PoolWindow &window) {
    stream.enqueue(prepare_max_pool2d_grad(stream.device(), x, y, dy, dx, window));
}
MatmulStats max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y, const Tensor &dy,
                            Tensor &dx, std::uint32_t window_h, std::uint32_t window_w,
                            std::uint32_t stride_h, std::uint32_t stride_w,
                            std::chrono::nanoseconds timeout) {
    return max_pool2d_grad(device, x, y, dy, dx, {window_h, window_w, stride_h, stride_w}, timeout);
}
void max_pool2d_grad(Stream &stream, const Tensor &x, const Tensor &y, const Tensor &dy,
                     const Tensor &dx, std::uint32_t window_h, std::uint32_t window_w,
                     std::uint32_t stride_h, std::uint32_t stride_w) {
    max_pool2d_grad(stream, x, y, dy, dx, {window_h, window_w, stride_h, stride_w});
}

OpLaunch prepare_avg_pool2d_grad(Device &device, const Tensor &dy, const Tensor &dx,
                                 std::uint32_t window_h, std::uint32_t window_w,
                                 std::uint32_t stride_h, std::uint32_t stride_w) {
    return prepare_avg_pool2d_grad(device, dy, dx, {window_h, window_w, stride_h, stride_w});
}
MatmulStats avg_pool2d_grad(Device &device, const Tensor &dy, Tensor &dx, const PoolWindow &window,
                            std::chrono::nanoseconds timeout) {
    return prepare_avg_pool2d_grad(device, dy, dx, window).run(device, timeout);
}
void avg_pool2d_grad(Stream &stream, const Tensor &dy, const Tensor &dx, const PoolWindow &window) {
    stream.enqueue(prepare_avg_pool2d_grad(stream.device(), dy, dx, window));
}
MatmulStats avg_pool2d_grad(Device &device, const Tensor &dy, Tensor &dx, std::uint32_t window_h,
                            std::uint32_t window_w, std::uint32_t stride_h, std::uint32_t stride_w,
                            std::chrono::nanoseconds timeout) {
    return avg_pool2d_grad(device, dy, dx, {window_h, window_w, stride_h, stride_w}, timeout);
}
void avg_pool2d_grad(Stream &stream, const Tensor &dy, const Tensor &dx, std::uint32_t window_h,
                     std::uint32_t window_w, std::uint32_t stride_h, std::uint32_t stride_w) {
    avg_pool2d_grad(stream, dy, dx, {window_h, window_w, stride_h, stride_w});
}

} // namespace tpurt
