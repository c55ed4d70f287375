// SPDX-License-Identifier: MIT
// tensor_ops.cpp - checks tensor operands against an op's shapes and types and turns them
// into the op's executable and launch: prepare_<op>() (see tensor_ops.hpp).
#include "tpurt/ops/tensor_ops.hpp"

#include "ops/op_checks.hpp"
#include "ops/train/train_checks.hpp"
#include "tpurt/codegen/op_executables.hpp"
#include "tpurt/error.hpp"

#include <array>
#include <optional>
#include <string>

namespace tpurt {

namespace {

using detail::matrix_row_stride;
using detail::refuse;

} // namespace

OpLaunch prepare_matmul(Device &device, const Tensor &a, const Tensor &b, const Tensor &c) {
    const std::string op = "matmul";
    if (!is_matmul_input(a.dtype()))
        refuse(op, "A is " + a.layout().describe() + ": the card multiplies int8, bf16 or fp32");
    const DType type = a.dtype();
    detail::require_matrix_unit(device.info(), type);
    MatmulProblem problem;
    problem.type = type;
    problem.a_stride = matrix_row_stride(op, "A", a, type);
    problem.b_stride = matrix_row_stride(op, "B", b, type);
    problem.c_stride = matrix_row_stride(op, "C", c, accumulator_type(type));
    problem.m = static_cast<std::uint32_t>(a.size(0));
    problem.k = static_cast<std::uint32_t>(a.size(1));
    problem.n = static_cast<std::uint32_t>(b.size(1));
    if (b.size(0) != a.size(1) || c.size(0) != a.size(0) || c.size(1) != b.size(1))
        refuse(op, "shapes do not chain: A " + a.layout().describe() + " x B " +
                       b.layout().describe() + " -> C " + c.layout().describe());
    if (a.size(0) > UINT32_MAX || a.size(1) > UINT32_MAX || b.size(1) > UINT32_MAX)
        refuse(op, "dimensions beyond 2^32 - 1");
    const std::shared_ptr<const Executable> exe = matmul_executable(device, problem);
    return launch_of(exe, {&a, &b, &c});
}

OpLaunch prepare_dense(Device &device, const Tensor &a, const Tensor &w, const Tensor *bias,
                       const Tensor &out, Activation activation, float scale) {
    const std::string op = "dense layer";
    if (!is_matmul_input(a.dtype()))
        refuse(op, "A is " + a.layout().describe() + ": the card multiplies int8, bf16 or fp32");
    const DType type = a.dtype();
    detail::require_matrix_unit(device.info(), type);
    if (!device.info().has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit for ACTIVATE (caps " +
                                                std::to_string(device.info().caps) + ")");
    if (out.dtype() == DType::Int32 && type != DType::Int8)
        refuse(op, "an int32 output needs int8 inputs");
    MatmulProblem problem;
    problem.type = type;
    problem.a_stride = matrix_row_stride(op, "A", a, type);
    problem.b_stride = matrix_row_stride(op, "W", w, type);
    problem.c_stride = matrix_row_stride(op, "output", out, out.dtype());
    if (w.size(0) != a.size(1) || out.size(0) != a.size(0) || out.size(1) != w.size(1))
        refuse(op, "shapes do not chain: A " + a.layout().describe() + " x W " +
                       w.layout().describe() + " -> output " + out.layout().describe());
    if (a.size(0) > UINT32_MAX || a.size(1) > UINT32_MAX || w.size(1) > UINT32_MAX)
        refuse(op, "dimensions beyond 2^32 - 1");
    problem.m = static_cast<std::uint32_t>(a.size(0));
    problem.k = static_cast<std::uint32_t>(a.size(1));
    problem.n = static_cast<std::uint32_t>(w.size(1));
    if (bias && (bias->dtype() != DType::Fp32 || bias->element_count() != w.size(1) ||
                 !bias->is_contiguous()))
        refuse(op, "bias " + bias->layout().describe() + " must be " + std::to_string(w.size(1)) +
                       " densely packed fp32 values");
    problem.epilogue =
        MatmulEpilogue{.function = activation,
                       .out_type = out.dtype(),
                       .bias_addr = bias ? std::optional<std::uint64_t>(0) : std::nullopt,
                       .scale = scale};
    const std::shared_ptr<const Executable> exe = matmul_executable(device, problem);
    return launch_of(exe, {&a, &w, &out, bias});
}

namespace {

// conv2d and conv2d_layer: the operands' checks, then the cached executable.
OpLaunch conv2d_launch(Device &device, const std::string &op, const Tensor &input,
                       const Tensor &weights, const Tensor *bias, const Tensor &output,
                       const Conv2dParams &params, const std::optional<MatmulEpilogue> &epilogue) {
    const DType type = input.dtype();
    if (!is_matmul_input(type))
        refuse(op,
               "input is " + input.layout().describe() + ": the card convolves int8, bf16 or fp32");
    detail::require_matrix_unit(device.info(), type);
    const auto require = [&](const char *name, const Tensor &t, DType dtype, const char *dims) {
        if (t.rank() != 4 || t.dtype() != dtype || !t.is_contiguous())
            refuse(op, std::string(name) + " " + t.layout().describe() + " must be a densely " +
                           "packed " + dtype_name(dtype) + " tensor " + dims);
        for (std::size_t extent : t.shape())
            if (extent > UINT32_MAX)
                refuse(op, std::string(name) + " " + t.layout().describe() + " is too large");
    };
    require("input", input, type, "[N, H, W, C]");
    require("weights", weights, type, "[KH, KW, C, F]");
    if (epilogue && !device.info().has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit for ACTIVATE (caps " +
                                                std::to_string(device.info().caps) + ")");
    if (epilogue && epilogue->out_type == DType::Int32 && type != DType::Int8)
        refuse(op, "an int32 output needs int8 inputs");
    require("output", output, epilogue ? epilogue->out_type : accumulator_type(type),
            "[N, OH, OW, F]");
    const auto dim = [](const Tensor &t, std::size_t i) {
        return static_cast<std::uint32_t>(t.size(i));
    };
    Conv2dShape shape{.batch = dim(input, 0),
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
        refuse(op, "weights " + weights.layout().describe() + " do not have the input's " +
                       std::to_string(shape.channels) + " channels");
    if (params.stride_h == 0 || params.stride_w == 0 ||
        shape.kernel_h > shape.height + 2 * params.pad_h ||
        shape.kernel_w > shape.width + 2 * params.pad_w)
        refuse(op, "the kernel does not fit the padded input or a stride is 0");
    const std::vector<std::size_t> expected{shape.batch, shape.out_height(), shape.out_width(),
                                            shape.filters};
    if (output.shape() != expected)
        refuse(op, "output " + output.layout().describe() + " must have the shape [" +
                       std::to_string(expected[0]) + ", " + std::to_string(expected[1]) + ", " +
                       std::to_string(expected[2]) + ", " + std::to_string(expected[3]) + "]");
    if (bias && (bias->dtype() != DType::Fp32 || bias->element_count() != shape.filters ||
                 !bias->is_contiguous()))
        refuse(op, "bias " + bias->layout().describe() + " must be " +
                       std::to_string(shape.filters) + " densely packed fp32 values");
    const std::shared_ptr<const Executable> exe = conv2d_executable(device, type, shape, epilogue);
    return launch_of(exe, {&input, &weights, &output, bias});
}

} // namespace

OpLaunch prepare_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                        const Tensor &output, const Conv2dParams &params) {
    return conv2d_launch(device, "conv2d", input, weights, nullptr, output, params, std::nullopt);
}

OpLaunch prepare_conv2d_layer(Device &device, const Tensor &input, const Tensor &weights,
                              const Tensor *bias, const Tensor &output, const Conv2dParams &params,
                              Activation activation, float scale) {
    return conv2d_launch(
        device, "conv2d layer", input, weights, bias, output, params,
        MatmulEpilogue{.function = activation,
                       .out_type = output.dtype(),
                       .bias_addr = bias ? std::optional<std::uint64_t>(0) : std::nullopt,
                       .scale = scale});
}

namespace {

struct Rows {
    std::uint32_t rows = 0, cols = 0;
    std::uint64_t stride = 0; // bytes
};

// t as rows x cols: its last dimension the columns, the others walked as evenly spaced rows.
Rows rows_of(const std::string &op, const char *name, const Tensor &t) {
    const std::vector<std::size_t> &shape = t.shape();
    const std::vector<std::size_t> &strides = t.strides();
    const std::size_t last = t.rank() - 1;
    if (strides[last] != 1 && shape[last] > 1)
        refuse(op, std::string(name) + " " + t.layout().describe() +
                       " does not have adjacent elements in its last dimension: copy it into a "
                       "contiguous tensor first");
    std::uint64_t rows = 1;
    std::uint64_t stride = 0; // elements between rows, 0 until a dimension of more than one
    for (std::size_t i = last; i-- > 0;) {
        if (shape[i] == 1)
            continue;
        if (stride == 0)
            stride = strides[i];
        else if (strides[i] != stride * rows)
            refuse(op, std::string(name) + " " + t.layout().describe() +
                           " does not have evenly spaced rows: copy it into a contiguous tensor "
                           "first");
        rows *= shape[i];
    }
    if (rows > UINT32_MAX || shape[last] > UINT32_MAX)
        refuse(op, std::string(name) + " " + t.layout().describe() + " is too large");
    const std::uint64_t row_bytes = shape[last] * element_size(t.dtype());
    const std::uint64_t stride_bytes = rows > 1 ? stride * element_size(t.dtype()) : row_bytes;
    if (stride_bytes < row_bytes)
        refuse(op, std::string(name) + " " + t.layout().describe() + " has overlapping rows");
    return {static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(shape[last]),
            stride_bytes};
}

} // namespace

OpLaunch prepare_elementwise(Device &device, VectorOp op, const Tensor &a, const Tensor &b,
                             const Tensor &out) {
    const std::string name = "elementwise op";
    if (!device.info().has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit (caps " +
                                                std::to_string(device.info().caps) + ")");
    if (b.dtype() != a.dtype() || out.dtype() != a.dtype())
        refuse(name, "a " + a.layout().describe() + ", b " + b.layout().describe() + " and out " +
                         out.layout().describe() + " must have one dtype");
    if (out.shape() != a.shape())
        refuse(name, "out " + out.layout().describe() + " does not have a's shape " +
                         a.layout().describe());
    const Rows ra = rows_of(name, "a", a), rb = rows_of(name, "b", b),
               ro = rows_of(name, "out", out);
    const bool broadcast = rb.rows == 1 && ra.rows > 1;
    // One row against one row ([C] against [1, C], say) needs no broadcast.
    const bool same = b.shape() == a.shape() || (rb.rows == 1 && ra.rows == 1);
    if (rb.cols != ra.cols || (!broadcast && !same))
        refuse(name, "b " + b.layout().describe() + " is neither a's shape " +
                         a.layout().describe() + " nor its last dimension");
    ElementwiseProblem problem{.type = a.dtype(),
                               .op = op,
                               .rows = ra.rows,
                               .cols = ra.cols,
                               .broadcast_b = broadcast,
                               .a_stride = ra.stride,
                               .b_stride = broadcast ? 0 : rb.stride,
                               .dst_stride = ro.stride};
    const std::shared_ptr<const Executable> exe = elementwise_executable(device, problem);
    return launch_of(exe, {&a, &b, &out});
}

OpLaunch prepare_pool2d(Device &device, PoolOp op, const Tensor &input, const Tensor &out,
                        const PoolWindow &window) {
    const std::string name = op == PoolOp::Max ? "max pool" : "average pool";
    if (!device.info().has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit (caps " +
                                                std::to_string(device.info().caps) + ")");
    if (input.rank() != 4 || !input.is_contiguous() || out.dtype() != input.dtype() ||
        !out.is_contiguous())
        refuse(name, "input " + input.layout().describe() + " and out " + out.layout().describe() +
                         " must be densely packed [N, H, W, C] tensors of one dtype");
    for (std::size_t extent : input.shape())
        if (extent > UINT32_MAX)
            refuse(name, "input " + input.layout().describe() + " is too large");
    const PoolProblem problem{.type = input.dtype(),
                              .op = op,
                              .batch = static_cast<std::uint32_t>(input.size(0)),
                              .height = static_cast<std::uint32_t>(input.size(1)),
                              .width = static_cast<std::uint32_t>(input.size(2)),
                              .channels = static_cast<std::uint32_t>(input.size(3)),
                              .win_h = window.window_h,
                              .win_w = window.window_w,
                              .stride_h = window.stride_h,
                              .stride_w = window.stride_w,
                              .pad_h = window.pad_h,
                              .pad_w = window.pad_w};
    if (window.window_h == 0 || window.window_w == 0 || window.stride_h == 0 ||
        window.stride_w == 0 || window.pad_h >= window.window_h ||
        window.pad_w >= window.window_w || window.window_h > problem.height + 2ull * window.pad_h ||
        window.window_w > problem.width + 2ull * window.pad_w)
        refuse(name, "windows of " + std::to_string(window.window_h) + " x " +
                         std::to_string(window.window_w) + " at strides " +
                         std::to_string(window.stride_h) + " x " + std::to_string(window.stride_w) +
                         " with padding " + std::to_string(window.pad_h) + " x " +
                         std::to_string(window.pad_w) +
                         ": windows must lie inside the padded image, strides be at least 1 and "
                         "padding be below the window");
    if (op == PoolOp::Max && (window.pad_h || window.pad_w))
        detail::require_train_unit(device, name + " with padding");
    const std::vector<std::size_t> expected{problem.batch, problem.out_height(),
                                            problem.out_width(), problem.channels};
    if (out.shape() != expected)
        refuse(name, "out " + out.layout().describe() + " must have the shape [" +
                         std::to_string(expected[0]) + ", " + std::to_string(expected[1]) + ", " +
                         std::to_string(expected[2]) + ", " + std::to_string(expected[3]) + "]");
    const std::shared_ptr<const Executable> exe = pool_executable(device, problem);
    return launch_of(exe, {&input, &out});
}

OpLaunch prepare_transpose(Device &device, const Tensor &a, const Tensor &out) {
    const std::string op = "transpose";
    if (!device.info().has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit (caps " +
                                                std::to_string(device.info().caps) + ")");
    const std::uint64_t a_stride = matrix_row_stride(op, "a", a, a.dtype());
    const std::uint64_t out_stride = matrix_row_stride(op, "out", out, a.dtype());
    if (out.size(0) != a.size(1) || out.size(1) != a.size(0))
        refuse(op, "out " + out.layout().describe() + " is not a " + a.layout().describe() +
                       " transposed");
    if (a.size(0) > UINT32_MAX || a.size(1) > UINT32_MAX)
        refuse(op, "dimensions beyond 2^32 - 1");
    const TransposeProblem problem{.type = a.dtype(),
                                   .rows = static_cast<std::uint32_t>(a.size(0)),
                                   .cols = static_cast<std::uint32_t>(a.size(1)),
                                   .a_stride = a_stride,
                                   .dst_stride = out_stride};
    const std::shared_ptr<const Executable> exe = transpose_executable(device, problem);
    return launch_of(exe, {&a, &out});
}

OpLaunch prepare_unary(Device &device, Activation function, const Tensor &a, const Tensor &out,
                       float scale) {
    const std::string name = std::string("unary ") + activation_name(function);
    detail::require_matrix_unit(device.info(), a.dtype());
    if (!device.info().has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit (caps " +
                                                std::to_string(device.info().caps) + ")");
    if (!is_matmul_input(a.dtype()))
        refuse(name, "a is " + a.layout().describe() + ": functions apply to int8, bf16 or fp32");
    if (!a.is_contiguous() || !out.is_contiguous() || out.shape() != a.shape())
        refuse(name, "a " + a.layout().describe() + " and out " + out.layout().describe() +
                         " must be densely packed with one shape");
    const UnaryProblem problem{.type = a.dtype(),
                               .out_type = out.dtype(),
                               .function = function,
                               .scale = scale,
                               .elements = a.element_count()};
    const std::shared_ptr<const Executable> exe = unary_executable(device, problem);
    return launch_of(exe, {&a, &out});
}

OpLaunch prepare_reduce_rows(Device &device, ReduceOp op, const Tensor &a, const Tensor &out) {
    const std::string name = op == ReduceOp::Sum ? "sum" : "row max";
    if (!device.info().has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit (caps " +
                                                std::to_string(device.info().caps) + ")");
    const Rows ra = rows_of(name, "a", a);
    const DType out_type = reduce_result_type(a.dtype(), op);
    if (out.dtype() != out_type)
        refuse(name, "out " + out.layout().describe() + " must be " + dtype_name(out_type) +
                         " for a " + a.layout().describe());
    if (out.element_count() != ra.rows || !out.is_contiguous())
        refuse(name, "out " + out.layout().describe() +
                         " must be densely packed with one element "
                         "per row of a " +
                         a.layout().describe());
    const ReduceProblem problem{
        .type = a.dtype(), .op = op, .rows = ra.rows, .cols = ra.cols, .a_stride = ra.stride};
    const std::shared_ptr<const Executable> exe = reduce_executable(device, problem);
    return launch_of(exe, {&a, &out});
}

} // namespace tpurt
