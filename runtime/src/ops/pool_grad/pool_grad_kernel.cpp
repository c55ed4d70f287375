// SPDX-License-Identifier: MIT
// pool_grad_kernel.cpp - the pooling gradient kernel: compile_pool_grad() as an executable
// (x, y, dy, dx for MAX; dy, dx for AVG; then, with padding, the scratch of the padded image:
// x padded for MAX, dx padded), cached per device through op_executables.hpp.
#include "exec/op_kernel.hpp"
#include "ops/train/train_checks.hpp"
#include "tpurt/codegen/train_compiler.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

std::uint64_t bytes_of(std::uint64_t elements, DType type) {
    return elements * element_size(type);
}

struct PoolGradKernel {
    using Problem = PoolGradProblem;
    static constexpr const char *name = "pool_grad";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t in = std::uint64_t{p.batch} * p.height * p.width * p.channels;
        const std::uint64_t out =
            std::uint64_t{p.batch} * p.out_height() * p.out_width() * p.channels;
        if (p.op == PoolOp::Max) {
            args.bind(p.x_addr, "x", bytes_of(in, p.x_type));
            args.bind(p.y_addr, "y", bytes_of(out, p.x_type));
        }
        args.bind(p.dy_addr, "dy", bytes_of(out, p.dy_type));
        args.bind(p.dx_addr, "dx", bytes_of(in, p.dx_type));
        if (p.padded()) {
            if (p.op == PoolOp::Max)
                args.bind(p.xp_addr, "x padded", bytes_of(p.padded_elements(), p.x_type));
            args.bind(p.dxp_addr, "dx padded", bytes_of(p.padded_elements(), p.dx_type));
        }
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_pool_grad(p, limits);
    }
    // "maxpool_grad fp32 64x28x28x16 k2x2 s2x2", with " p1x1" for padding.
    static std::string profile_name(const Problem &p) {
        return std::string(p.op == PoolOp::Max ? "maxpool_grad" : "avgpool_grad") + " " +
               dtypes_name({p.x_type, p.dy_type, p.dx_type}) + " " + std::to_string(p.batch) + "x" +
               std::to_string(p.height) + "x" + std::to_string(p.width) + "x" +
               std::to_string(p.channels) + " k" + std::to_string(p.window_h) + "x" +
               std::to_string(p.window_w) + " s" + std::to_string(p.stride_h) + "x" +
               std::to_string(p.stride_w) +
               (p.padded() ? " p" + std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w) : "");
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::PoolGradKernel);

} // namespace tpurt
