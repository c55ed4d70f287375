// SPDX-License-Identifier: MIT
// grouped_conv2d.cpp - checks a grouped or dilated convolution's tensors, compiles its one
// executable (the weights gathered into scratch kernels, permutes of the input and output for
// groups, a convolution per group), caches it per device and gives the op's three forms (see
// grouped_conv2d.hpp).
#include "tpurt/ops/grouped_conv2d.hpp"

#include "codegen/block_copy.hpp"
#include "device/device_state.hpp"
#include "tpurt/codegen/axis_compiler.hpp"
#include "tpurt/error.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/ops/conv2d.hpp"

#include <optional>
#include <string>

namespace tpurt {

namespace {

std::uint32_t u32(std::uint64_t v) {
    if (v > UINT32_MAX)
        throw Error(ErrorCode::InvalidArgument, "grouped conv2d: a dimension beyond 2^32 - 1");
    return static_cast<std::uint32_t>(v);
}

// The programs copying each group's weights [KH, KW, C / G, F / G] out of weights [KH, KW,
// C / G, F] at `from` into the zeroed scratch kernel at `to` (group g's at g x kernel_bytes),
// tap (ky, kx) to (ky dh, kx dw) of `group`'s dilated kernel: a block of channel rows per tap.
std::vector<Program> gather_weights(DType type, const Conv2dShape &group, std::uint32_t groups,
                                    const ConvGrouping &grouping, std::uint32_t kh,
                                    std::uint32_t kw, std::uint64_t from, std::uint64_t to,
                                    const ArrayLimits &limits) {
    const std::uint64_t e = element_size(type);
    const std::uint32_t cg = group.channels, fg = group.filters;
    const std::uint64_t row = std::uint64_t{fg} * e;
    const std::uint64_t kernel_bytes = group.weight_elements() * e;
    std::vector<detail::BlockCopy> blocks;
    for (std::uint32_t g = 0; g < groups; ++g)
        for (std::uint32_t ky = 0; ky < kh; ++ky)
            for (std::uint32_t kx = 0; kx < kw; ++kx) {
                const std::uint64_t tap = std::uint64_t{ky} * grouping.dilation_h * group.kernel_w +
                                          std::uint64_t{kx} * grouping.dilation_w;
                blocks.push_back({.src = from + ((std::uint64_t{ky} * kw + kx) * cg * groups * fg +
                                                 std::uint64_t{g} * fg) *
                                                    e,
                                  .src_stride = std::uint64_t{groups} * row,
                                  .dst = to + g * kernel_bytes + tap * cg * row,
                                  .dst_stride = row,
                                  .rows = cg,
                                  .cols = fg});
            }
    return detail::compile_block_copies(type, blocks, limits);
}

// Arguments: input, weights, output, the scratch kernels [G, KH', KW', C / G, F / G], and for
// G > 1 the scratch copies of the input [G, N H W, C / G] and the output [G, N OH OW, F / G].
// `group` is one group's convolution with the dilated kernel (KH' x KW').
Executable compile_grouped(DType type, const Conv2dShape &group, const ConvGrouping &grouping,
                           std::uint32_t kh, std::uint32_t kw, const ArrayLimits &limits) {
    const std::uint32_t groups = grouping.groups;
    const bool split = groups > 1;
    const DType out_type = accumulator_type(type);
    const std::uint64_t e = element_size(type), oe = element_size(out_type);
    const std::uint64_t pixels = std::uint64_t{group.batch} * group.height * group.width;
    const std::uint64_t out_pixels =
        std::uint64_t{group.batch} * group.out_height() * group.out_width();
    const std::uint64_t x_bytes = group.input_elements() * e, w_bytes = group.weight_elements() * e,
                        y_bytes = group.output_elements() * oe;
    const std::uint64_t real_w = std::uint64_t{kh} * kw * group.channels * group.filters * e;
    const auto at = Executable::placeholder;
    std::vector<Program> programs =
        gather_weights(type, group, groups, grouping, kh, kw, at(1), at(3), limits);
    const auto add = [&](std::vector<Program> more) {
        for (Program &p : more)
            programs.push_back(std::move(p));
    };
    if (split)
        add(compile_permute({.type = type,
                             .shape = {u32(pixels), groups, group.channels},
                             .perm = {1, 0, 2},
                             .a_addr = at(0),
                             .dst_addr = at(4)},
                            limits));
    for (std::uint32_t g = 0; g < groups; ++g)
        add(compile_conv2d({.type = type,
                            .shape = group,
                            .input_addr = split ? at(4) + g * x_bytes : at(0),
                            .weight_addr = at(3) + g * w_bytes,
                            .output_addr = split ? at(5) + g * y_bytes : at(2)},
                           limits)
                .programs);
    if (split)
        add(compile_permute({.type = out_type,
                             .shape = {groups, u32(out_pixels), group.filters},
                             .perm = {1, 0, 2},
                             .a_addr = at(5),
                             .dst_addr = at(2)},
                            limits));
    std::vector<ExecutableArg> args{{"input", groups * x_bytes},
                                    {"weights", groups * real_w},
                                    {"output", groups * y_bytes},
                                    {"kernels", groups * w_bytes}};
    if (split) {
        args.push_back({"input groups", groups * x_bytes});
        args.push_back({"output groups", groups * y_bytes});
    }
    return Executable::link(
        std::string("grouped conv2d ") + dtype_name(type) + " g" + std::to_string(groups) + " d" +
            std::to_string(grouping.dilation_h) + "x" + std::to_string(grouping.dilation_w),
        std::move(args), std::move(programs));
}

// What compile_grouped() compiles from, the executable's cache key.
struct GroupedProblem {
    DType type;
    Conv2dShape group;
    ConvGrouping grouping;
    std::uint32_t kh, kw;
};

} // namespace

OpLaunch prepare_grouped_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                                const Tensor &output, const ConvGrouping &grouping,
                                const Conv2dParams &params) {
    const std::string op = "grouped conv2d";
    const std::uint32_t groups = grouping.groups;
    if (grouping.dilation_h == 0 || grouping.dilation_w == 0)
        throw Error(ErrorCode::InvalidArgument, op + ": dilations must be at least 1");
    if (groups == 1 && grouping.dilation_h == 1 && grouping.dilation_w == 1)
        return prepare_conv2d(device, input, weights, output, params);
    if (input.rank() != 4 || weights.rank() != 4 || groups == 0 || input.size(3) % groups != 0 ||
        weights.size(3) % groups != 0 || weights.size(2) * groups != input.size(3))
        throw Error(ErrorCode::InvalidArgument,
                    op + ": input " + input.layout().describe() + " and weights " +
                        weights.layout().describe() + " must be [N, H, W, C] and [KH, KW, C / " +
                        std::to_string(groups) + ", F] with C and F multiples of " +
                        std::to_string(groups) + " groups");
    const DType type = input.dtype();
    if (!input.is_contiguous() || weights.dtype() != type || !weights.is_contiguous() ||
        !output.is_contiguous() || output.rank() != 4 || output.size(3) != weights.size(3))
        throw Error(ErrorCode::InvalidArgument,
                    op + ": input " + input.layout().describe() + ", weights " +
                        weights.layout().describe() + " and output " + output.layout().describe() +
                        " must be densely packed tensors of one input dtype, the output "
                        "[N, OH, OW, F]");
    const std::uint32_t kh = u32(weights.size(0)), kw = u32(weights.size(1));
    const Conv2dShape group{.batch = u32(input.size(0)),
                            .height = u32(input.size(1)),
                            .width = u32(input.size(2)),
                            .channels = u32(weights.size(2)),
                            .kernel_h = u32((std::uint64_t{kh} - 1) * grouping.dilation_h + 1),
                            .kernel_w = u32((std::uint64_t{kw} - 1) * grouping.dilation_w + 1),
                            .filters = u32(weights.size(3) / groups),
                            .stride_h = params.stride_h,
                            .stride_w = params.stride_w,
                            .pad_h = params.pad_h,
                            .pad_w = params.pad_w};
    Tensor kernels = Tensor::empty(
        device, type, {groups, group.kernel_h, group.kernel_w, group.channels, group.filters});
    // For groups, each group's input channels and outputs in scratch [G, ...] tensors.
    std::optional<Tensor> x_groups, y_groups;
    if (groups > 1) {
        x_groups = Tensor::empty(device, type, {groups, input.element_count() / groups});
        y_groups = Tensor::empty(device, accumulator_type(type),
                                 {groups, output.element_count() / groups});
    }
    const Tensor x0 = x_groups ? x_groups->select(0, 0).reshape(
                                     {group.batch, group.height, group.width, group.channels})
                               : input;
    const Tensor y0 = y_groups ? y_groups->select(0, 0).reshape({output.size(0), output.size(1),
                                                                 output.size(2), group.filters})
                               : output;
    // One group's convolution checks the rest (dtypes, the output's shape).
    prepare_conv2d(device, x0, kernels.select(0, 0), y0, params);
    const ArrayLimits &limits = device.info().limits;
    const std::shared_ptr<const Executable> exe = detail::state_of(device).executables.get(
        detail::cache_key("grouped_conv2d", GroupedProblem{type, group, grouping, kh, kw}, limits),
        [&] { return compile_grouped(type, group, grouping, kh, kw, limits); });
    return launch_of(exe, {&input, &weights, &output, &kernels, x_groups ? &*x_groups : nullptr,
                           y_groups ? &*y_groups : nullptr});
}

MatmulStats grouped_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                           Tensor &output, const ConvGrouping &grouping, const Conv2dParams &params,
                           std::chrono::nanoseconds timeout) {
    return prepare_grouped_conv2d(device, input, weights, output, grouping, params)
        .run(device, timeout);
}
void grouped_conv2d(Stream &stream, const Tensor &input, const Tensor &weights,
                    const Tensor &output, const ConvGrouping &grouping,
                    const Conv2dParams &params) {
    stream.enqueue(
        prepare_grouped_conv2d(stream.device(), input, weights, output, grouping, params));
}

} // namespace tpurt
