// SPDX-License-Identifier: MIT
// conv_grad_ops.cpp - the gradients of conv2d() on tensors (see train_ops.hpp): checks the
// operands, allocates the scratch tensors, compiles conv_grad_compiler.hpp's programs into one
// executable per shape (cached per device) and gives the three forms of tensor_ops.hpp.
#include "device/device_state.hpp"
#include "memory/scratch.hpp"
#include "ops/op_checks.hpp"
#include "ops/train/train_checks.hpp"
#include "tpurt/codegen/conv_grad_compiler.hpp"
#include "tpurt/error.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/ops/train_ops.hpp"

#include <initializer_list>
#include <optional>
#include <string>

namespace tpurt {

namespace {

using detail::refuse;

std::uint32_t dim(const std::string &op, const Tensor &t, std::size_t d) {
    return detail::dim32(op, t.size(d), t.layout());
}

void require_dense4(const std::string &op, const char *name, const Tensor &t, DType type) {
    if (t.rank() != 4 || !t.is_contiguous() || t.dtype() != type)
        refuse(op, std::string(name) + " " + t.layout().describe() + " must be a densely packed " +
                       dtype_name(type) + " rank-4 tensor");
}

std::string shape_text(std::initializer_list<std::uint64_t> dims) {
    std::string s = "[";
    for (std::uint64_t d : dims)
        s += (s.size() > 1 ? ", " : "") + std::to_string(d);
    return s + "]";
}

// The problem of images [N, H, W, C] (`image`) and weights [KH, KW, C, F] (kh, kw, f given),
// its lowering, and dy checked against the forward output [N, OH, OW, F].
struct Checked {
    ConvGradProblem problem;
    ConvGradLowering lowering;
};
Checked check(Device &device, const std::string &op, const Tensor &image, const char *image_name,
              std::uint32_t kh, std::uint32_t kw, std::uint32_t f, const Tensor &dy,
              const Conv2dParams &params, const ConvDilation &dilation) {
    const DType type = dy.dtype();
    detail::require_matrix_unit(device.info(), type);
    Checked c;
    c.problem = {.type = type,
                 .shape = {.batch = dim(op, image, 0),
                           .height = dim(op, image, 1),
                           .width = dim(op, image, 2),
                           .channels = dim(op, image, 3),
                           .kernel_h = kh,
                           .kernel_w = kw,
                           .filters = f,
                           .stride_h = params.stride_h,
                           .stride_w = params.stride_w,
                           .pad_h = params.pad_h,
                           .pad_w = params.pad_w},
                 .dilation_h = dilation.h,
                 .dilation_w = dilation.w};
    try {
        c.lowering = lower_conv_grad(c.problem);
    } catch (const Error &e) {
        refuse(op, e.what());
    }
    const std::vector<std::size_t> expected{image.size(0), c.lowering.out_h, c.lowering.out_w, f};
    if (dy.shape() != expected)
        refuse(op, "dy " + dy.layout().describe() + " must be the forward output " +
                       shape_text({expected[0], expected[1], expected[2], expected[3]}) +
                       " = [N, (H + 2 pad - (KH - 1) dilation - 1) / stride + 1, ..., F] for " +
                       image_name + " " + image.layout().describe() + ", " + std::to_string(kh) +
                       " x " + std::to_string(kw) + " taps, strides " +
                       std::to_string(params.stride_h) + " x " + std::to_string(params.stride_w) +
                       ", padding " + std::to_string(params.pad_h) + " x " +
                       std::to_string(params.pad_w) + " and dilation " +
                       std::to_string(dilation.h) + " x " + std::to_string(dilation.w));
    return c;
}

// The executable's name in profiles: the op, dtype, shape, dilation and card.
std::string name_of(const char *op, const ConvGradProblem &p, const ArrayLimits &l) {
    return std::string(op) + " " + dtype_name(p.type) + " " + detail::conv_shape_text(p.shape) +
           " dilation " + std::to_string(p.dilation_h) + "," + std::to_string(p.dilation_w) +
           detail::limits_text(l);
}

std::shared_ptr<const Executable> executable(Device &device, const char *op,
                                             const ConvGradProblem &problem,
                                             const ConvGradLowering &l, bool input_grad) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(detail::cache_key(op, problem, limits), [&] {
        ConvGradProblem p = problem;
        const Conv2dShape &s = p.shape;
        const std::uint64_t e = element_size(p.type), ae = element_size(accumulator_type(p.type));
        const std::uint64_t dy_bytes = std::uint64_t{s.batch} * l.out_h * l.out_w * s.filters * e;
        std::vector<ExecutableArg> args;
        const auto arg = [&](std::uint64_t &addr, const char *name, std::uint64_t bytes) {
            addr = Executable::placeholder(args.size());
            args.push_back({name, bytes});
        };
        if (input_grad) {
            arg(p.dy_addr, "dy", dy_bytes);
            arg(p.weight_addr, "weights", s.weight_elements() * e);
            arg(p.dx_addr, "dx", s.input_elements() * ae);
            arg(p.kernel_addr, "kernel", l.kernel_elements * e);
        } else {
            arg(p.x_addr, "x", s.input_elements() * e);
            arg(p.dy_addr, "dy", dy_bytes);
            arg(p.dw_addr, "dw", s.weight_elements() * ae);
            arg(p.xt_addr, "x as [C, H, W, N]", s.input_elements() * e);
            arg(p.g_addr, "g", l.g_elements * ae);
        }
        if (l.spread)
            arg(p.dys_addr, "dy spread", l.dys_elements * e);
        return Executable::link(name_of(op, p, limits), std::move(args),
                                input_grad ? compile_conv2d_input_grad(p, limits)
                                           : compile_conv2d_weight_grad(p, limits));
    });
}

std::optional<Tensor> spread_scratch(Device &device, const Checked &c) {
    if (!c.lowering.spread)
        return std::nullopt;
    const Conv2dShape &k = c.lowering.input_grad;
    return Tensor::empty(device, c.problem.type, {k.batch, k.height, k.width, k.channels});
}

} // namespace

OpLaunch prepare_conv2d_input_grad(Device &device, const Tensor &dy, const Tensor &weights,
                                   const Tensor &dx, const Conv2dParams &params,
                                   const ConvDilation &dilation) {
    const std::string op = "conv2d_input_grad";
    const DType type = dy.dtype();
    require_dense4(op, "dy", dy, type);
    require_dense4(op, "weights", weights, type);
    require_dense4(op, "dx", dx, accumulator_type(type));
    if (dx.size(3) != weights.size(2) || dy.size(3) != weights.size(3))
        refuse(op, "dy " + dy.layout().describe() + ", weights " + weights.layout().describe() +
                       " and dx " + dx.layout().describe() +
                       " must be [N, OH, OW, F], [KH, KW, C, F] and [N, H, W, C]");
    const Checked c = check(device, op, dx, "dx", dim(op, weights, 0), dim(op, weights, 1),
                            dim(op, weights, 3), dy, params, dilation);
    const Conv2dShape &k = c.lowering.input_grad;
    // Dilated, the kernel has zero taps that the programs never write: a fresh buffer's zeros.
    const bool dilated = k.kernel_h != weights.size(0) || k.kernel_w != weights.size(1);
    const std::vector<std::size_t> kernel_shape = {k.kernel_h, k.kernel_w, k.channels, k.filters};
    Tensor kernel = dilated ? Tensor::empty(device, type, kernel_shape)
                            : detail::scratch_tensor(device, type, kernel_shape);
    const std::optional<Tensor> spread = spread_scratch(device, c);
    return launch_of(executable(device, op.c_str(), c.problem, c.lowering, true),
                     {&dy, &weights, &dx, &kernel, spread ? &*spread : nullptr});
}

OpLaunch prepare_conv2d_weight_grad(Device &device, const Tensor &x, const Tensor &dy,
                                    const Tensor &dw, const Conv2dParams &params,
                                    const ConvDilation &dilation) {
    const std::string op = "conv2d_weight_grad";
    const DType type = x.dtype();
    require_dense4(op, "x", x, type);
    require_dense4(op, "dy", dy, type);
    require_dense4(op, "dw", dw, accumulator_type(type));
    if (dw.size(2) != x.size(3) || dw.size(3) != dy.size(3))
        refuse(op, "x " + x.layout().describe() + ", dy " + dy.layout().describe() + " and dw " +
                       dw.layout().describe() +
                       " must be [N, H, W, C], [N, OH, OW, F] and [KH, KW, C, F]");
    const Checked c = check(device, op, x, "x", dim(op, dw, 0), dim(op, dw, 1), dim(op, dw, 3), dy,
                            params, dilation);
    const Conv2dShape &s = c.problem.shape, &w = c.lowering.weight_grad;
    // Written in full by the programs (permutes, the convolution's output).
    Tensor xt = detail::scratch_tensor(device, type, {s.channels, s.height, s.width, s.batch});
    Tensor g = detail::scratch_tensor(device, accumulator_type(type),
                                      {s.channels, w.out_height(), w.out_width(), s.filters});
    const std::optional<Tensor> spread = spread_scratch(device, c);
    return launch_of(executable(device, op.c_str(), c.problem, c.lowering, false),
                     {&x, &dy, &dw, &xt, &g, spread ? &*spread : nullptr});
}

MatmulStats conv2d_input_grad(Device &device, const Tensor &dy, const Tensor &weights, Tensor &dx,
                              const Conv2dParams &params, const ConvDilation &dilation,
                              std::chrono::nanoseconds timeout) {
    return prepare_conv2d_input_grad(device, dy, weights, dx, params, dilation)
        .run(device, timeout);
}
void conv2d_input_grad(Stream &stream, const Tensor &dy, const Tensor &weights, const Tensor &dx,
                       const Conv2dParams &params, const ConvDilation &dilation) {
    stream.enqueue(prepare_conv2d_input_grad(stream.device(), dy, weights, dx, params, dilation));
}

MatmulStats conv2d_weight_grad(Device &device, const Tensor &x, const Tensor &dy, Tensor &dw,
                               const Conv2dParams &params, const ConvDilation &dilation,
                               std::chrono::nanoseconds timeout) {
    return prepare_conv2d_weight_grad(device, x, dy, dw, params, dilation).run(device, timeout);
}
void conv2d_weight_grad(Stream &stream, const Tensor &x, const Tensor &dy, const Tensor &dw,
                        const Conv2dParams &params, const ConvDilation &dilation) {
    stream.enqueue(prepare_conv2d_weight_grad(stream.device(), x, dy, dw, params, dilation));
}

} // namespace tpurt
