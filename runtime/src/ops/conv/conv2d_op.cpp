// SPDX-License-Identifier: MIT
// conv2d_op.cpp - the convolution kernel (compile_conv2d() as an executable: input, weights,
// output, then the bias when the epilogue has one) and the ops on tensors that use it: conv2d
// and conv2d_layer (a convolution with ACTIVATE's epilogue), their checks and forms.
#include "exec/op_registry.hpp"
#include "tpurt/ops/conv2d.hpp"
#include "tpurt/ops/tensor_ops.hpp"

#include <optional>
#include <string>

namespace tpurt {

namespace detail {

namespace {

struct Conv2dKernel {
    using Problem = Conv2dProblem;
    static constexpr const char *name = "conv2d";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t elem = element_size(p.type);
        const DType out_type = p.epilogue ? p.epilogue->out_type : accumulator_type(p.type);
        args.bind(p.input_addr, "input", p.shape.input_elements() * elem);
        args.bind(p.weight_addr, "weights", p.shape.weight_elements() * elem);
        args.bind(p.output_addr, "output", p.shape.output_elements() * element_size(out_type));
        if (p.epilogue && p.epilogue->bias_addr)
            args.bind(*p.epilogue->bias_addr, "bias", std::uint64_t{p.shape.filters} * 4);
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_conv2d(p, limits).programs;
    }
    // "conv2d bf16 64x28x28x1 k3x3 f16", a layer "conv2d bf16->bf16 relu 64x28x28x1 k3x3 f16".
    static std::string profile_name(const Problem &p) {
        const Conv2dShape &s = p.shape;
        std::string types = dtype_name(p.type);
        if (p.epilogue)
            types += std::string("->") + dtype_name(p.epilogue->out_type) + " " +
                     activation_name(p.epilogue->function);
        return "conv2d " + types + " " + std::to_string(s.batch) + "x" + std::to_string(s.height) +
               "x" + std::to_string(s.width) + "x" + std::to_string(s.channels) + " k" +
               std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + " f" +
               std::to_string(s.filters);
    }
};

// conv2d and conv2d_layer: the operands' checks.
Conv2dProblem conv2d_problem(const DeviceInfo &info, const std::string &op,
                             const TensorLayout &input, const TensorLayout &weights,
                             const TensorLayout *bias, const TensorLayout &output,
                             const Conv2dParams &params,
                             const std::optional<MatmulEpilogue> &epilogue) {
    const DType type = input.dtype();
    if (!is_matmul_input(type))
        refuse(op, "input is " + input.describe() + ": the card convolves int8, bf16 or fp32");
    require_matrix_unit(info, type);
    const auto require = [&](const char *name, const TensorLayout &t, DType dtype,
                             const char *dims) {
        if (t.rank() != 4 || t.dtype() != dtype || !t.is_contiguous())
            refuse(op, std::string(name) + " " + t.describe() + " must be a densely " + "packed " +
                           dtype_name(dtype) + " tensor " + dims);
        for (std::size_t extent : t.shape())
            if (extent > UINT32_MAX)
                refuse(op, std::string(name) + " " + t.describe() + " is too large");
    };
    require("input", input, type, "[N, H, W, C]");
    require("weights", weights, type, "[KH, KW, C, F]");
    if (epilogue)
        require_vector_unit(info, " for ACTIVATE");
    if (epilogue && epilogue->out_type == DType::Int32 && type != DType::Int8)
        refuse(op, "an int32 output needs int8 inputs");
    require("output", output, epilogue ? epilogue->out_type : accumulator_type(type),
            "[N, OH, OW, F]");
    const auto dim = [](const TensorLayout &t, std::size_t i) {
        return static_cast<std::uint32_t>(t.size(i));
    };
    const Conv2dShape shape{.batch = dim(input, 0),
                            .height = dim(input, 1),
                            .width = dim(input, 2),
                            .channels = dim(input, 3),
                            .kernel_h = dim(weights, 0),
                            .kernel_w = dim(weights, 1),
                            .filters = dim(weights, 3),
                            .stride_h = params.stride_h,
                            .stride_w = params.stride_w,
                            .pad_h = params.pad_h,
                            .pad_w = params.pad_w};
    if (weights.size(2) != shape.channels)
        refuse(op, "weights " + weights.describe() + " do not have the input's " +
                       std::to_string(shape.channels) + " channels");
    if (params.stride_h == 0 || params.stride_w == 0 ||
        shape.kernel_h > shape.height + 2 * params.pad_h ||
        shape.kernel_w > shape.width + 2 * params.pad_w)
        refuse(op, "the kernel does not fit the padded input or a stride is 0");
    const std::vector<std::size_t> expected{shape.batch, shape.out_height(), shape.out_width(),
                                            shape.filters};
    if (output.shape() != expected)
        refuse(op, "output " + output.describe() + " must have the shape [" +
                       std::to_string(expected[0]) + ", " + std::to_string(expected[1]) + ", " +
                       std::to_string(expected[2]) + ", " + std::to_string(expected[3]) + "]");
    if (bias && (bias->dtype() != DType::Fp32 || bias->element_count() != shape.filters ||
                 !bias->is_contiguous()))
        refuse(op, "bias " + bias->describe() + " must be " + std::to_string(shape.filters) +
                       " densely packed fp32 values");
    return {.type = type, .shape = shape, .epilogue = epilogue};
}

struct Conv2dOp {
    using Kernel = Conv2dKernel;
    static constexpr const char *name = "conv2d";
    static constexpr std::array<OpOperand, 3> operands{{{"input"}, {"weights"}, {"output"}}};
    using Attributes = Conv2dParams;
    static constexpr std::array<const char *, 4> attributes{"stride_h", "stride_w", "pad_h",
                                                            "pad_w"};

    static Conv2dProblem check(const DeviceInfo &info, const Layouts<Conv2dOp> &t,
                               const Attributes &params) {
        return conv2d_problem(info, name, *t[0], *t[1], nullptr, *t[2], params, std::nullopt);
    }
};

struct Conv2dLayerOp {
    using Kernel = Conv2dKernel;
    static constexpr const char *name = "conv2d_layer";
    static constexpr std::array<OpOperand, 4> operands{
        {{"input"}, {"weights"}, {"output"}, {"bias", true}}};
    struct Attributes {
        std::uint32_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
        Activation activation = Activation::None;
        float scale = 1.0f;
    };
    static constexpr std::array<const char *, 6> attributes{"stride_h", "stride_w",   "pad_h",
                                                            "pad_w",    "activation", "scale"};

    static Conv2dProblem check(const DeviceInfo &info, const Layouts<Conv2dLayerOp> &t,
                               const Attributes &a) {
        return conv2d_problem(
            info, "conv2d layer", *t[0], *t[1], t[3], *t[2],
            {a.stride_h, a.stride_w, a.pad_h, a.pad_w},
            MatmulEpilogue{.function = a.activation,
                           .out_type = t[2]->dtype(),
                           .bias_addr = t[3] ? std::optional<std::uint64_t>(0) : std::nullopt,
                           .scale = a.scale});
    }
    static Attributes of(const Conv2dParams &p, Activation activation, float scale) {
        return {p.stride_h, p.stride_w, p.pad_h, p.pad_w, activation, scale};
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::Conv2dKernel);
TPURT_REGISTER_OP(conv2d_op, Conv2dOp);
TPURT_REGISTER_OP(conv2d_layer_op, Conv2dLayerOp);

using detail::Conv2dLayerOp;
using detail::Conv2dOp;

OpLaunch prepare_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                        const Tensor &output, const Conv2dParams &params) {
    return detail::prepare<Conv2dOp>(device, {&input, &weights, &output}, params);
}
MatmulStats conv2d(Device &device, const Tensor &input, const Tensor &weights, Tensor &output,
                   const Conv2dParams &params, std::chrono::nanoseconds timeout) {
    return detail::run<Conv2dOp>(device, {&input, &weights, &output}, params, timeout);
}
void conv2d(Stream &stream, const Tensor &input, const Tensor &weights, const Tensor &output,
            const Conv2dParams &params) {
    detail::enqueue<Conv2dOp>(stream, {&input, &weights, &output}, params);
}

OpLaunch prepare_conv2d_layer(Device &device, const Tensor &input, const Tensor &weights,
                              const Tensor *bias, const Tensor &output, const Conv2dParams &params,
                              Activation activation, float scale) {
    return detail::prepare<Conv2dLayerOp>(device, {&input, &weights, &output, bias},
                                          Conv2dLayerOp::of(params, activation, scale));
}
MatmulStats conv2d_layer(Device &device, const Tensor &input, const Tensor &weights,
                         const Tensor *bias, Tensor &output, const Conv2dParams &params,
                         Activation activation, float scale, std::chrono::nanoseconds timeout) {
    return detail::run<Conv2dLayerOp>(device, {&input, &weights, &output, bias},
                                      Conv2dLayerOp::of(params, activation, scale), timeout);
}
void conv2d_layer(Stream &stream, const Tensor &input, const Tensor &weights, const Tensor *bias,
                  const Tensor &output, const Conv2dParams &params, Activation activation,
                  float scale) {
    detail::enqueue<Conv2dLayerOp>(stream, {&input, &weights, &output, bias},
                                   Conv2dLayerOp::of(params, activation, scale));
}

} // namespace tpurt
