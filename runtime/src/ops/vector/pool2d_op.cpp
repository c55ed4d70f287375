// SPDX-License-Identifier: MIT
// pool2d_op.cpp - the pooling kernel (compile_pool() as an executable: input, output) and the
// pool2d op on tensors: max or average pooling of NHWC images over windows with strides and
// padding.
#include "exec/op_registry.hpp"
#include "ops/train/train_checks.hpp"
#include "tpurt/codegen/vector_compiler.hpp"
#include "tpurt/ops/tensor_ops.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

struct PoolKernel {
    using Problem = PoolProblem;
    static constexpr const char *name = "pool";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t elem = element_size(p.type);
        args.bind(p.a_addr, "input",
                  std::uint64_t{p.batch} * p.height * p.width * p.channels * elem);
        args.bind(p.dst_addr, "output",
                  std::uint64_t{p.batch} * p.out_height() * p.out_width() * p.channels * elem);
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_pool(p, limits);
    }
    // "maxpool fp32 64x28x28x16 w2x2 s2x2", with " p1x1" for padding.
    static std::string profile_name(const Problem &p) {
        return std::string(p.op == PoolOp::Max ? "maxpool " : "avgpool ") + dtype_name(p.type) +
               " " + std::to_string(p.batch) + "x" + std::to_string(p.height) + "x" +
               std::to_string(p.width) + "x" + std::to_string(p.channels) + " w" +
               std::to_string(p.win_h) + "x" + std::to_string(p.win_w) + " s" +
               std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) +
               (p.pad_h || p.pad_w ? " p" + std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w)
                                   : "");
    }
};

struct Pool2dOp {
    using Kernel = PoolKernel;
    static constexpr const char *name = "pool2d";
    static constexpr std::array<OpOperand, 2> operands{{{"input"}, {"out"}}};
    struct Attributes {
        PoolOp op = PoolOp::Max;
        std::uint32_t window_h = 2, window_w = 2, stride_h = 2, stride_w = 2, pad_h = 0, pad_w = 0;
    };
    static constexpr std::array<const char *, 7> attributes{
        "op", "window_h", "window_w", "stride_h", "stride_w", "pad_h", "pad_w"};

    static Attributes of(PoolOp op, const PoolWindow &w) {
        return {op, w.window_h, w.window_w, w.stride_h, w.stride_w, w.pad_h, w.pad_w};
    }

    static PoolProblem check(const DeviceInfo &info, const Layouts<Pool2dOp> &t,
                             const Attributes &w) {
        const std::string op = w.op == PoolOp::Max ? "max pool" : "average pool";
        const TensorLayout &input = *t[0], &out = *t[1];
        require_vector_unit(info);
        if (input.rank() != 4 || !input.is_contiguous() || out.dtype() != input.dtype() ||
            !out.is_contiguous())
            refuse(op, "input " + input.describe() + " and out " + out.describe() +
                           " must be densely packed [N, H, W, C] tensors of one dtype");
        for (std::size_t extent : input.shape())
            if (extent > UINT32_MAX)
                refuse(op, "input " + input.describe() + " is too large");
        const PoolProblem problem{.type = input.dtype(),
                                  .op = w.op,
                                  .batch = static_cast<std::uint32_t>(input.size(0)),
                                  .height = static_cast<std::uint32_t>(input.size(1)),
                                  .width = static_cast<std::uint32_t>(input.size(2)),
                                  .channels = static_cast<std::uint32_t>(input.size(3)),
                                  .win_h = w.window_h,
                                  .win_w = w.window_w,
                                  .stride_h = w.stride_h,
                                  .stride_w = w.stride_w,
                                  .pad_h = w.pad_h,
                                  .pad_w = w.pad_w};
        if (w.window_h == 0 || w.window_w == 0 || w.stride_h == 0 || w.stride_w == 0 ||
            w.pad_h >= w.window_h || w.pad_w >= w.window_w ||
            w.window_h > problem.height + 2ull * w.pad_h ||
            w.window_w > problem.width + 2ull * w.pad_w)
            refuse(op, "windows of " + std::to_string(w.window_h) + " x " +
                           std::to_string(w.window_w) + " at strides " +
                           std::to_string(w.stride_h) + " x " + std::to_string(w.stride_w) +
                           " with padding " + std::to_string(w.pad_h) + " x " +
                           std::to_string(w.pad_w) +
                           ": windows must lie inside the padded image, strides be at least 1 "
                           "and padding be below the window");
        if (w.op == PoolOp::Max && (w.pad_h || w.pad_w))
            require_train_unit(info, op + " with padding");
        const std::vector<std::size_t> expected{problem.batch, problem.out_height(),
                                                problem.out_width(), problem.channels};
        if (out.shape() != expected)
            refuse(op, "out " + out.describe() + " must have the shape [" +
                           std::to_string(expected[0]) + ", " + std::to_string(expected[1]) + ", " +
                           std::to_string(expected[2]) + ", " + std::to_string(expected[3]) + "]");
        return problem;
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::PoolKernel);
TPURT_REGISTER_OP(pool2d_op, Pool2dOp);

using detail::Pool2dOp;

OpLaunch prepare_pool2d(Device &device, PoolOp op, const Tensor &input, const Tensor &out,
                        const PoolWindow &window) {
    return detail::prepare<Pool2dOp>(device, {&input, &out}, Pool2dOp::of(op, window));
}
MatmulStats pool2d(Device &device, PoolOp op, const Tensor &input, Tensor &out,
                   const PoolWindow &window, std::chrono::nanoseconds timeout) {
    return detail::run<Pool2dOp>(device, {&input, &out}, Pool2dOp::of(op, window), timeout);
}
void pool2d(Stream &stream, PoolOp op, const Tensor &input, const Tensor &out,
            const PoolWindow &window) {
    detail::enqueue<Pool2dOp>(stream, {&input, &out}, Pool2dOp::of(op, window));
}
OpLaunch prepare_pool2d(Device &device, PoolOp op, const Tensor &input, const Tensor &out,
                        std::uint32_t window_h, std::uint32_t window_w, std::uint32_t stride_h,
                        std::uint32_t stride_w) {
    return prepare_pool2d(device, op, input, out, {window_h, window_w, stride_h, stride_w});
}
MatmulStats pool2d(Device &device, PoolOp op, const Tensor &input, Tensor &out,
                   std::uint32_t window_h, std::uint32_t window_w, std::uint32_t stride_h,
                   std::uint32_t stride_w, std::chrono::nanoseconds timeout) {
    return pool2d(device, op, input, out, {window_h, window_w, stride_h, stride_w}, timeout);
}
void pool2d(Stream &stream, PoolOp op, const Tensor &input, const Tensor &out,
            std::uint32_t window_h, std::uint32_t window_w, std::uint32_t stride_h,
            std::uint32_t stride_w) {
    pool2d(stream, op, input, out, {window_h, window_w, stride_h, stride_w});
}

} // namespace tpurt
