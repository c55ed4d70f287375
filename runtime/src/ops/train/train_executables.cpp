// SPDX-License-Identifier: MIT
// train_executables.cpp - compiling the training ops into executables and caching them per
// device (see train_executables.hpp).
#include "ops/train/train_executables.hpp"

#include "device/device_state.hpp"
#include "tpurt/device.hpp"

#include <cstdio>
#include <initializer_list>
#include <string>

namespace tpurt {

using detail::limits_key;

namespace {

// The operands' dtypes: "fp32" when all are, else each one's ("bf16 fp32 bf16").
std::string dtypes(std::initializer_list<DType> types) {
    std::string each;
    bool mixed = false;
    for (DType t : types) {
        mixed = mixed || t != DType::Fp32;
        each += std::string(each.empty() ? "" : " ") + dtype_name(t);
    }
    return mixed ? each : "fp32";
}

std::uint64_t bytes_of(std::uint64_t elements, DType type) {
    return elements * element_size(type);
}

std::string softmax_name(const SoftmaxProblem &p) {
    char scale[32];
    std::snprintf(scale, sizeof(scale), "%a", static_cast<double>(p.grad_scale));
    return std::string(softmax_kind_name(p.kind)) + " " + dtypes({p.x_type, p.out_type}) + " " +
           std::to_string(p.rows) + "x" + std::to_string(p.cols) +
           (p.kind == SoftmaxKind::CrossEntropy ? std::string(" scale ") + scale : "");
}

std::string grad_name(const ActivationGradProblem &p) {
    return std::string(grad_function_name(p.function)) + " " +
           dtypes({p.x_type, p.dy_type, p.dx_type}) + " " + std::to_string(p.elements);
}

std::string optimizer_name_of(const OptimizerProblem &p) {
    return std::string(optimizer_name(p.kind)) + " fp32 " + std::to_string(p.elements) +
           (p.bf16_copy ? " +bf16" : "");
}

std::string pool_grad_name(const PoolGradProblem &p) {
    return std::string(p.op == PoolOp::Max ? "maxpool_grad" : "avgpool_grad") + " " +
           dtypes({p.x_type, p.dy_type, p.dx_type}) + " " + std::to_string(p.batch) + "x" +
           std::to_string(p.height) + "x" + std::to_string(p.width) + "x" +
           std::to_string(p.channels) + " k" + std::to_string(p.window_h) + "x" +
           std::to_string(p.window_w) + " s" + std::to_string(p.stride_h) + "x" +
           std::to_string(p.stride_w) +
           (p.padded() ? " p" + std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w) : "");
}

std::string layer_norm_name(const LayerNormProblem &p) {
    char eps[32];
    std::snprintf(eps, sizeof(eps), "%a", static_cast<double>(p.eps));
    return std::string(p.backward ? "layer_norm_grad" : "layer_norm") + " fp32 " +
           std::to_string(p.rows) + "x" + std::to_string(p.cols) + " eps " + eps;
}

} // namespace

Executable compile_layer_norm_executable(const LayerNormProblem &problem,
                                         const ArrayLimits &limits) {
    LayerNormProblem p = problem;
    const std::uint64_t bytes = std::uint64_t{p.rows} * p.cols * 4, row = std::uint64_t{p.cols} * 4;
    std::vector<ExecutableArg> args{{"x", bytes}, {"gamma", row}};
    p.x_addr = Executable::placeholder(0);
    p.gamma_addr = Executable::placeholder(1);
    if (p.backward) {
        p.dy_addr = Executable::placeholder(2);
        p.dx_addr = Executable::placeholder(3);
        p.dgamma_addr = Executable::placeholder(4);
        p.dbeta_addr = Executable::placeholder(5);
        args.insert(args.end(), {{"dy", bytes}, {"dx", bytes}, {"dgamma", row}, {"dbeta", row}});
    } else {
        p.beta_addr = Executable::placeholder(2);
        p.y_addr = Executable::placeholder(3);
        args.insert(args.end(), {{"beta", row}, {"y", bytes}});
    }
    return Executable::link(layer_norm_name(p), std::move(args), compile_layer_norm(p, limits));
}

std::shared_ptr<const Executable> layer_norm_executable(Device &device,
                                                        const LayerNormProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(
        layer_norm_name(problem) + limits_key(limits),
        [&] { return compile_layer_norm_executable(problem, limits); });
}

Executable compile_pool_grad_executable(const PoolGradProblem &problem, const ArrayLimits &limits) {
    PoolGradProblem p = problem;
    const std::uint64_t in = std::uint64_t{p.batch} * p.height * p.width * p.channels;
    const std::uint64_t out = std::uint64_t{p.batch} * p.out_height() * p.out_width() * p.channels;
    std::vector<ExecutableArg> args;
    if (p.op == PoolOp::Max) {
        p.x_addr = Executable::placeholder(0);
        p.y_addr = Executable::placeholder(1);
        args = {{"x", bytes_of(in, p.x_type)}, {"y", bytes_of(out, p.x_type)}};
    }
    p.dy_addr = Executable::placeholder(args.size());
    args.push_back({"dy", bytes_of(out, p.dy_type)});
    p.dx_addr = Executable::placeholder(args.size());
    args.push_back({"dx", bytes_of(in, p.dx_type)});
    if (p.padded()) { // the scratch of the padded image
        if (p.op == PoolOp::Max) {
            p.xp_addr = Executable::placeholder(args.size());
            args.push_back({"x padded", bytes_of(p.padded_elements(), p.x_type)});
        }
        p.dxp_addr = Executable::placeholder(args.size());
        args.push_back({"dx padded", bytes_of(p.padded_elements(), p.dx_type)});
    }
    return Executable::link(pool_grad_name(p), std::move(args), compile_pool_grad(p, limits));
}

std::shared_ptr<const Executable> pool_grad_executable(Device &device,
                                                       const PoolGradProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(
        pool_grad_name(problem) + limits_key(limits),
        [&] { return compile_pool_grad_executable(problem, limits); });
}

Executable compile_softmax_executable(const SoftmaxProblem &problem, const ArrayLimits &limits) {
    SoftmaxProblem p = problem;
    const std::uint64_t elements = std::uint64_t{p.rows} * p.cols, bytes = elements * 4;
    std::vector<ExecutableArg> args{{"x", bytes_of(elements, p.x_type)}};
    p.x_addr = Executable::placeholder(0);
    if (p.kind == SoftmaxKind::CrossEntropy) {
        p.target_addr = Executable::placeholder(1);
        p.out_addr = Executable::placeholder(2);
        p.loss_addr = Executable::placeholder(3);
        args.push_back({"targets", bytes});
        args.push_back({"grad", bytes_of(elements, p.out_type)});
        args.push_back({"loss", std::uint64_t{p.rows} * 4});
    } else {
        p.out_addr = Executable::placeholder(1);
        args.push_back({"out", bytes_of(elements, p.out_type)});
    }
    return Executable::link(softmax_name(p), std::move(args), compile_softmax(p, limits));
}

Executable compile_activation_grad_executable(const ActivationGradProblem &problem,
                                              const ArrayLimits &limits) {
    ActivationGradProblem p = problem;
    p.x_addr = Executable::placeholder(0);
    p.dy_addr = Executable::placeholder(1);
    p.dx_addr = Executable::placeholder(2);
    return Executable::link(grad_name(p),
                            {{"saved", bytes_of(p.elements, p.x_type)},
                             {"dy", bytes_of(p.elements, p.dy_type)},
                             {"dx", bytes_of(p.elements, p.dx_type)}},
                            compile_activation_grad(p, limits));
}

Executable compile_optimizer_executable(const OptimizerProblem &problem,
                                        const ArrayLimits &limits) {
    OptimizerProblem p = problem;
    const std::uint64_t bytes = p.elements * 4;
    std::vector<ExecutableArg> args{
        {"w", bytes}, {"g", bytes}, {"m", bytes}, {"hp", optimizer_hp_count * 4}};
    p.w_addr = Executable::placeholder(0);
    p.g_addr = Executable::placeholder(1);
    p.m_addr = Executable::placeholder(2);
    p.hp_addr = Executable::placeholder(3);
    if (p.kind == OptimizerKind::Adam) {
        p.v_addr = Executable::placeholder(args.size());
        args.push_back({"v", bytes});
    }
    if (p.bf16_copy) {
        p.bf16_addr = Executable::placeholder(args.size());
        args.push_back({"w_bf16", p.elements * 2});
    }
    return Executable::link(optimizer_name_of(p), std::move(args), compile_optimizer(p, limits));
}

std::shared_ptr<const Executable> softmax_executable(Device &device,
                                                     const SoftmaxProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(
        softmax_name(problem) + limits_key(limits),
        [&] { return compile_softmax_executable(problem, limits); });
}

std::shared_ptr<const Executable> activation_grad_executable(Device &device,
                                                             const ActivationGradProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(grad_name(problem) + limits_key(limits), [&] {
        return compile_activation_grad_executable(problem, limits);
    });
}

std::shared_ptr<const Executable> optimizer_executable(Device &device,
                                                       const OptimizerProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(
        optimizer_name_of(problem) + limits_key(limits),
        [&] { return compile_optimizer_executable(problem, limits); });
}

} // namespace tpurt
