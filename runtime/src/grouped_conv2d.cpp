// SPDX-License-Identifier: MIT
// grouped_conv2d.cpp - checks a grouped convolution's tensors, compiles its one executable
// (permutes into scratch, a convolution per group, a permute back), caches it per device and
// gives the op's three forms (see grouped_conv2d.hpp).
#include "tpurt/grouped_conv2d.hpp"

#include "device_state.hpp"
#include "tpurt/axis_compiler.hpp"
#include "tpurt/conv2d.hpp"
#include "tpurt/error.hpp"
#include "tpurt/executable.hpp"

#include <string>

namespace tpurt {

namespace {

std::uint32_t u32(std::uint64_t v) {
    if (v > UINT32_MAX)
        throw Error(ErrorCode::InvalidArgument, "grouped conv2d: a dimension beyond 2^32 - 1");
    return static_cast<std::uint32_t>(v);
}

// Arguments: input, weights, output, then the scratch copies of the three: [G, N H W, C / G],
// [G, KH KW C / G, F / G], [G, N OH OW, F / G]. `group` is one group's convolution.
Executable compile_grouped(DType type, const Conv2dShape &group, std::uint32_t groups,
                           const ArrayLimits &limits) {
    const DType out_type = accumulator_type(type);
    const std::uint64_t e = element_size(type), oe = element_size(out_type);
    const std::uint64_t pixels = std::uint64_t{group.batch} * group.height * group.width;
    const std::uint64_t taps = std::uint64_t{group.kernel_h} * group.kernel_w;
    const std::uint64_t out_pixels =
        std::uint64_t{group.batch} * group.out_height() * group.out_width();
    const std::uint64_t x_bytes = group.input_elements() * e, w_bytes = group.weight_elements() * e,
                        y_bytes = group.output_elements() * oe;
    const auto at = Executable::placeholder;
    std::vector<Program> programs;
    const auto add = [&](std::vector<Program> more) {
        for (Program &p : more)
            programs.push_back(std::move(p));
    };
    add(compile_permute({.type = type,
                         .shape = {u32(pixels), groups, group.channels},
                         .perm = {1, 0, 2},
                         .a_addr = at(0),
                         .dst_addr = at(3)},
                        limits));
    add(compile_permute({.type = type,
                         .shape = {u32(taps * group.channels), groups, group.filters},
                         .perm = {1, 0, 2},
                         .a_addr = at(1),
                         .dst_addr = at(4)},
                        limits));
    for (std::uint32_t g = 0; g < groups; ++g)
        add(compile_conv2d({.type = type,
                            .shape = group,
                            .input_addr = at(3) + g * x_bytes,
                            .weight_addr = at(4) + g * w_bytes,
                            .output_addr = at(5) + g * y_bytes},
                           limits)
                .programs);
    add(compile_permute({.type = out_type,
                         .shape = {groups, u32(out_pixels), group.filters},
                         .perm = {1, 0, 2},
                         .a_addr = at(5),
                         .dst_addr = at(2)},
                        limits));
    return Executable::link(std::string("grouped conv2d ") + dtype_name(type) + " g" +
                                std::to_string(groups),
                            {{"input", groups * x_bytes},
                             {"weights", groups * w_bytes},
                             {"output", groups * y_bytes},
                             {"input groups", groups * x_bytes},
                             {"weight groups", groups * w_bytes},
                             {"output groups", groups * y_bytes}},
                            std::move(programs));
}

std::string key_of(DType type, const Conv2dShape &s, std::uint32_t groups, const ArrayLimits &l) {
    return std::string("grouped conv2d ") + dtype_name(type) + " g" + std::to_string(groups) + " " +
           std::to_string(s.batch) + "x" + std::to_string(s.height) + "x" +
           std::to_string(s.width) + "x" + std::to_string(s.channels) + " k" +
           std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + " f" +
           std::to_string(s.filters) + " stride " + std::to_string(s.stride_h) + "," +
           std::to_string(s.stride_w) + " pad " + std::to_string(s.pad_h) + "," +
           std::to_string(s.pad_w) + " card " + std::to_string(l.mxu_rows) + "x" +
           std::to_string(l.mxu_cols) + " ub " + std::to_string(l.ub_bytes) + " acc " +
           std::to_string(l.acc_bytes);
}

} // namespace

OpLaunch prepare_grouped_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                                const Tensor &output, std::uint32_t groups,
                                const Conv2dParams &params) {
    const std::string op = "grouped conv2d";
    if (groups == 1)
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
    const Conv2dShape group{.batch = u32(input.size(0)),
                            .height = u32(input.size(1)),
                            .width = u32(input.size(2)),
                            .channels = u32(weights.size(2)),
                            .kernel_h = u32(weights.size(0)),
                            .kernel_w = u32(weights.size(1)),
                            .filters = u32(weights.size(3) / groups),
                            .stride_h = params.stride_h,
                            .stride_w = params.stride_w,
                            .pad_h = params.pad_h,
                            .pad_w = params.pad_w};
    Tensor x_groups = Tensor::empty(device, type, {groups, input.element_count() / groups});
    Tensor w_groups = Tensor::empty(
        device, type, {groups, group.kernel_h, group.kernel_w, group.channels, group.filters});
    Tensor y_groups =
        Tensor::empty(device, accumulator_type(type), {groups, output.element_count() / groups});
    const Tensor x0 =
        x_groups.select(0, 0).reshape({group.batch, group.height, group.width, group.channels});
    const Tensor y0 = y_groups.select(0, 0).reshape(
        {output.size(0), output.size(1), output.size(2), group.filters});
    // One group's convolution checks the rest (dtypes, the output's shape).
    prepare_conv2d(device, x0, w_groups.select(0, 0), y0, params);
    const ArrayLimits &limits = device.info().limits;
    const std::shared_ptr<const Executable> exe =
        detail::state_of(device).executables.get(key_of(type, group, groups, limits), [&] {
            return compile_grouped(type, group, groups, limits);
        });
    return launch_of(exe, {&input, &weights, &output, &x_groups, &w_groups, &y_groups});
}

MatmulStats grouped_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                           Tensor &output, std::uint32_t groups, const Conv2dParams &params,
                           std::chrono::nanoseconds timeout) {
    return prepare_grouped_conv2d(device, input, weights, output, groups, params)
        .run(device, timeout);
}
void grouped_conv2d(Stream &stream, const Tensor &input, const Tensor &weights,
                    const Tensor &output, std::uint32_t groups, const Conv2dParams &params) {
    stream.enqueue(prepare_grouped_conv2d(stream.device(), input, weights, output, groups, params));
}

} // namespace tpurt
