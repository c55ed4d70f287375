// SPDX-License-Identifier: MIT
// op_executables.cpp - compiling matmuls, dense layers and convolutions into executables and
// caching them per device (see op_executables.hpp).
#include "tpurt/codegen/op_executables.hpp"

#include "device/device_state.hpp"
#include "tpurt/device.hpp"
#include "tpurt/error.hpp"

#include <cstdio>
#include <string>

namespace tpurt {

using detail::limits_key;

namespace {

std::uint64_t stride_or_dense(std::uint64_t stride, std::uint64_t row_bytes) {
    return stride ? stride : row_bytes;
}

// The problem's name in profiles: "matmul bf16 512x512x512", "dense int8->int8 relu 64x784x256".
std::string matmul_name(const MatmulProblem &p) {
    const std::string shape =
        std::to_string(p.m) + "x" + std::to_string(p.k) + "x" + std::to_string(p.n);
    if (!p.epilogue)
        return std::string("matmul ") + dtype_name(p.type) + " " + shape;
    return std::string("dense ") + dtype_name(p.type) + "->" + dtype_name(p.epilogue->out_type) +
           " " + activation_name(p.epilogue->function) + " " + shape;
}

// "conv2d bf16 64x28x28x1 k3x3 f16", or for a layer "conv2d bf16->bf16 relu 64x28x28x1 k3x3 f16".
std::string conv2d_name(DType type, const Conv2dShape &s,
                        const std::optional<MatmulEpilogue> &epilogue = std::nullopt) {
    std::string types = dtype_name(type);
    if (epilogue)
        types += std::string("->") + dtype_name(epilogue->out_type) + " " +
                 activation_name(epilogue->function);
    return "conv2d " + types + " " + std::to_string(s.batch) + "x" + std::to_string(s.height) +
           "x" + std::to_string(s.width) + "x" + std::to_string(s.channels) + " k" +
           std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + " f" +
           std::to_string(s.filters);
}

// What an epilogue adds to a cache key beyond its name: the scale's exact bits and the bias.
std::string epilogue_key(const std::optional<MatmulEpilogue> &epilogue) {
    if (!epilogue)
        return "";
    char scale[32];
    std::snprintf(scale, sizeof(scale), "%a", static_cast<double>(epilogue->scale));
    return std::string(" scale ") + scale + (epilogue->bias_addr ? " bias" : " nobias");
}

const char *vector_op_name(VectorOp op) {
    switch (op) {
    case VectorOp::Add:
        return "add";
    case VectorOp::Sub:
        return "sub";
    case VectorOp::Mul:
        return "mul";
    case VectorOp::Max:
        return "max";
    case VectorOp::Min:
        return "min";
    case VectorOp::Div:
        return "div";
    case VectorOp::Gate:
        return "gate";
    case VectorOp::Gt:
        return "gt";
    case VectorOp::Eq:
        return "eq";
    }
    return "?";
}

std::string elementwise_name(const ElementwiseProblem &p) {
    return std::string(vector_op_name(p.op)) + " " + dtype_name(p.type) + " " +
           std::to_string(p.rows) + "x" + std::to_string(p.cols) +
           (p.broadcast_b ? " row-broadcast" : "");
}

std::string reduce_name(const ReduceProblem &p) {
    return std::string(p.op == ReduceOp::Sum ? "sum " : "rowmax ") + dtype_name(p.type) + " " +
           std::to_string(p.rows) + "x" + std::to_string(p.cols);
}

std::string unary_name(const UnaryProblem &p) {
    return std::string(p.function == Activation::None ? "cast" : activation_name(p.function)) +
           " " + dtype_name(p.type) + "->" + dtype_name(p.out_type) + " " +
           std::to_string(p.elements);
}

DType c_type(const MatmulProblem &p) {
    return p.epilogue ? p.epilogue->out_type : accumulator_type(p.type);
}

} // namespace

std::string matmul_executable_key(const MatmulProblem &p, const ArrayLimits &limits) {
    const std::uint64_t elem = element_size(p.type);
    std::string key =
        matmul_name(p) + " strides " +
        std::to_string(stride_or_dense(p.a_stride, std::uint64_t{p.k} * elem)) + "," +
        std::to_string(stride_or_dense(p.b_stride, std::uint64_t{p.n} * elem)) + "," +
        std::to_string(stride_or_dense(p.c_stride, std::uint64_t{p.n} * element_size(c_type(p))));
    return key + epilogue_key(p.epilogue) + limits_key(limits);
}

std::string conv2d_executable_key(DType type, const Conv2dShape &s, const ArrayLimits &limits,
                                  const std::optional<MatmulEpilogue> &epilogue) {
    return conv2d_name(type, s, epilogue) + " stride " + std::to_string(s.stride_h) + "," +
           std::to_string(s.stride_w) + " pad " + std::to_string(s.pad_h) + "," +
           std::to_string(s.pad_w) + epilogue_key(epilogue) + limits_key(limits);
}

Executable compile_matmul_executable(const MatmulProblem &problem, const ArrayLimits &limits) {
    MatmulProblem p = problem;
    if (p.m == 0 || p.k == 0 || p.n == 0)
        throw Error(ErrorCode::InvalidArgument, matmul_name(p) + ": dimensions must be non-zero");
    const std::uint64_t elem = element_size(p.type);
    const std::uint64_t c_elem = element_size(c_type(p));
    p.a_addr = Executable::placeholder(0);
    p.b_addr = Executable::placeholder(1);
    p.c_addr = Executable::placeholder(2);
    std::vector<ExecutableArg> args{
        {"A", (p.m - 1) * stride_or_dense(p.a_stride, p.k * elem) + p.k * elem},
        {"B", (p.k - 1) * stride_or_dense(p.b_stride, p.n * elem) + p.n * elem},
        {"C", (p.m - 1) * stride_or_dense(p.c_stride, p.n * c_elem) + p.n * c_elem}};
    if (p.epilogue && p.epilogue->bias_addr) {
        p.epilogue->bias_addr = Executable::placeholder(3);
        args.push_back({"bias", std::uint64_t{p.n} * 4});
    }
    MatmulPlan plan = compile_matmul(p, limits);
    return Executable::link(matmul_name(p), std::move(args), std::move(plan.programs));
}

Executable compile_conv2d_executable(DType type, const Conv2dShape &shape,
                                     const ArrayLimits &limits,
                                     const std::optional<MatmulEpilogue> &epilogue) {
    Conv2dProblem problem;
    problem.type = type;
    problem.shape = shape;
    problem.input_addr = Executable::placeholder(0);
    problem.weight_addr = Executable::placeholder(1);
    problem.output_addr = Executable::placeholder(2);
    problem.epilogue = epilogue;
    const std::uint64_t elem = element_size(type);
    const DType out_type = epilogue ? epilogue->out_type : accumulator_type(type);
    std::vector<ExecutableArg> args{{"input", shape.input_elements() * elem},
                                    {"weights", shape.weight_elements() * elem},
                                    {"output", shape.output_elements() * element_size(out_type)}};
    if (epilogue && epilogue->bias_addr) {
        problem.epilogue->bias_addr = Executable::placeholder(3);
        args.push_back({"bias", std::uint64_t{shape.filters} * 4});
    }
    Conv2dPlan plan = compile_conv2d(problem, limits);
    return Executable::link(conv2d_name(type, shape, epilogue), std::move(args),
                            std::move(plan.programs));
}

std::string elementwise_executable_key(const ElementwiseProblem &p, const ArrayLimits &limits) {
    const std::uint64_t row = std::uint64_t{p.cols} * element_size(p.type);
    return elementwise_name(p) + " strides " + std::to_string(stride_or_dense(p.a_stride, row)) +
           "," + std::to_string(p.broadcast_b ? 0 : stride_or_dense(p.b_stride, row)) + "," +
           std::to_string(stride_or_dense(p.dst_stride, row)) + limits_key(limits);
}

std::string reduce_executable_key(const ReduceProblem &p, const ArrayLimits &limits) {
    const std::uint64_t row = std::uint64_t{p.cols} * element_size(p.type);
    return reduce_name(p) + " stride " + std::to_string(stride_or_dense(p.a_stride, row)) +
           limits_key(limits);
}

Executable compile_elementwise_executable(const ElementwiseProblem &problem,
                                          const ArrayLimits &limits) {
    ElementwiseProblem p = problem;
    p.a_addr = Executable::placeholder(0);
    p.b_addr = Executable::placeholder(1);
    p.dst_addr = Executable::placeholder(2);
    std::vector<Program> programs = compile_elementwise(p, limits);
    const std::uint64_t row = std::uint64_t{p.cols} * element_size(p.type);
    const auto extent = [&](std::uint64_t stride) {
        return (p.rows - 1) * stride_or_dense(stride, row) + row;
    };
    std::vector<ExecutableArg> args{{"a", extent(p.a_stride)},
                                    {"b", p.broadcast_b ? row : extent(p.b_stride)},
                                    {"dst", extent(p.dst_stride)}};
    return Executable::link(elementwise_name(p), std::move(args), std::move(programs));
}

namespace {

std::string pool_name(const PoolProblem &p) {
    return std::string(p.op == PoolOp::Max ? "maxpool " : "avgpool ") + dtype_name(p.type) + " " +
           std::to_string(p.batch) + "x" + std::to_string(p.height) + "x" +
           std::to_string(p.width) + "x" + std::to_string(p.channels) + " w" +
           std::to_string(p.win_h) + "x" + std::to_string(p.win_w) + " s" +
           std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) +
           (p.pad_h || p.pad_w ? " p" + std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w)
                               : "");
}

} // namespace

std::string pool_executable_key(const PoolProblem &p, const ArrayLimits &limits) {
    return pool_name(p) + limits_key(limits);
}

Executable compile_pool_executable(const PoolProblem &problem, const ArrayLimits &limits) {
    PoolProblem p = problem;
    p.a_addr = Executable::placeholder(0);
    p.dst_addr = Executable::placeholder(1);
    std::vector<Program> programs = compile_pool(p, limits);
    const std::uint64_t elem = element_size(p.type);
    std::vector<ExecutableArg> args{
        {"input", std::uint64_t{p.batch} * p.height * p.width * p.channels * elem},
        {"output", std::uint64_t{p.batch} * p.out_height() * p.out_width() * p.channels * elem}};
    return Executable::link(pool_name(p), std::move(args), std::move(programs));
}

std::shared_ptr<const Executable> pool_executable(Device &device, const PoolProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(pool_executable_key(problem, limits), [&] {
        return compile_pool_executable(problem, limits);
    });
}

std::string transpose_executable_key(const TransposeProblem &p, const ArrayLimits &limits) {
    const std::uint64_t elem = element_size(p.type);
    return "transpose " + std::string(dtype_name(p.type)) + " " + std::to_string(p.rows) + "x" +
           std::to_string(p.cols) + " strides " +
           std::to_string(stride_or_dense(p.a_stride, p.cols * elem)) + "," +
           std::to_string(stride_or_dense(p.dst_stride, p.rows * elem)) + limits_key(limits);
}

Executable compile_transpose_executable(const TransposeProblem &problem,
                                        const ArrayLimits &limits) {
    TransposeProblem p = problem;
    p.a_addr = Executable::placeholder(0);
    p.dst_addr = Executable::placeholder(1);
    std::vector<Program> programs = compile_transpose(p, limits);
    const std::uint64_t elem = element_size(p.type);
    std::vector<ExecutableArg> args{
        {"a", (p.rows - 1) * stride_or_dense(p.a_stride, p.cols * elem) + p.cols * elem},
        {"dst", (p.cols - 1) * stride_or_dense(p.dst_stride, p.rows * elem) + p.rows * elem}};
    return Executable::link("transpose " + std::string(dtype_name(p.type)) + " " +
                                std::to_string(p.rows) + "x" + std::to_string(p.cols),
                            std::move(args), std::move(programs));
}

std::shared_ptr<const Executable> transpose_executable(Device &device,
                                                       const TransposeProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(transpose_executable_key(problem, limits), [&] {
        return compile_transpose_executable(problem, limits);
    });
}

std::string unary_executable_key(const UnaryProblem &p, const ArrayLimits &limits) {
    char scale[32];
    std::snprintf(scale, sizeof(scale), "%a", static_cast<double>(p.scale));
    return unary_name(p) + " scale " + scale + limits_key(limits);
}

Executable compile_unary_executable(const UnaryProblem &problem, const ArrayLimits &limits) {
    UnaryProblem p = problem;
    p.a_addr = Executable::placeholder(0);
    p.dst_addr = Executable::placeholder(1);
    std::vector<Program> programs = compile_unary(p, limits);
    std::vector<ExecutableArg> args{{"a", p.elements * element_size(p.type)},
                                    {"dst", p.elements * element_size(p.out_type)}};
    return Executable::link(unary_name(p), std::move(args), std::move(programs));
}

std::shared_ptr<const Executable> unary_executable(Device &device, const UnaryProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(unary_executable_key(problem, limits), [&] {
        return compile_unary_executable(problem, limits);
    });
}

Executable compile_reduce_executable(const ReduceProblem &problem, const ArrayLimits &limits) {
    ReduceProblem p = problem;
    p.a_addr = Executable::placeholder(0);
    p.dst_addr = Executable::placeholder(1);
    std::vector<Program> programs = compile_reduce(p, limits);
    const std::uint64_t row = std::uint64_t{p.cols} * element_size(p.type);
    std::vector<ExecutableArg> args{
        {"a", (p.rows - 1) * stride_or_dense(p.a_stride, row) + row},
        {"dst", std::uint64_t{p.rows} * element_size(reduce_result_type(p.type, p.op))}};
    return Executable::link(reduce_name(p), std::move(args), std::move(programs));
}

std::shared_ptr<const Executable> elementwise_executable(Device &device,
                                                         const ElementwiseProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(
        elementwise_executable_key(problem, limits),
        [&] { return compile_elementwise_executable(problem, limits); });
}

std::shared_ptr<const Executable> reduce_executable(Device &device, const ReduceProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(reduce_executable_key(problem, limits), [&] {
        return compile_reduce_executable(problem, limits);
    });
}

std::shared_ptr<const Executable> matmul_executable(Device &device, const MatmulProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(matmul_executable_key(problem, limits), [&] {
        return compile_matmul_executable(problem, limits);
    });
}

std::shared_ptr<const Executable> conv2d_executable(Device &device, DType type,
                                                    const Conv2dShape &shape,
                                                    const std::optional<MatmulEpilogue> &epilogue) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(
        conv2d_executable_key(type, shape, limits, epilogue),
        [&] { return compile_conv2d_executable(type, shape, limits, epilogue); });
}

} // namespace tpurt
