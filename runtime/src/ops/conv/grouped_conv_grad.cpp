// SPDX-License-Identifier: MIT
// grouped_conv_grad.cpp - the gradients of a grouped convolution: each group's slices of the
// operands permuted into densely packed scratch ([G, ...] tensors), conv2d_input_grad() or
// conv2d_weight_grad() per group, the results permuted back (see grouped_conv2d.hpp).
#include "tpurt/error.hpp"
#include "tpurt/ops/grouped_conv2d.hpp"
#include "tpurt/ops/shape_ops.hpp"
#include "tpurt/ops/train_ops.hpp"

#include <array>
#include <string>

namespace tpurt {

namespace {

void add(MatmulStats &total, const MatmulStats &s) {
    total += s;
    total.jobs += s.jobs;
}

// t [..., G x per] as [G, rows, per]: its groups' slices of the last dimension gathered.
Tensor split_groups(Device &device, const Tensor &t, std::size_t groups, MatmulStats &stats) {
    const std::size_t per = t.size(t.rank() - 1) / groups;
    const std::size_t rows = t.element_count() / (groups * per);
    Tensor out = Tensor::empty(device, t.dtype(), {groups, rows, per});
    constexpr std::array<std::size_t, 3> order{1, 0, 2};
    add(stats, permute(device, t.reshape({rows, groups, per}), order, out));
    return out;
}

// The inverse: [G, rows, per] into t [..., G x per].
void join_groups(Device &device, const Tensor &groups_first, Tensor &t, MatmulStats &stats) {
    Tensor view = t.reshape({groups_first.size(1), groups_first.size(0), groups_first.size(2)});
    constexpr std::array<std::size_t, 3> order{1, 0, 2};
    add(stats, permute(device, groups_first, order, view));
}

void check(const std::string &op, const Tensor &a, const char *a_name, const Tensor &b,
           const char *b_name, const Tensor &c, const char *c_name, std::uint32_t groups) {
    for (const Tensor *t : {&a, &b, &c})
        if (t->rank() != 4 || !t->is_contiguous() || groups == 0 || t->size(3) % groups != 0)
            throw Error(ErrorCode::InvalidArgument,
                        op + ": " + a_name + " " + a.layout().describe() + ", " + b_name + " " +
                            b.layout().describe() + " and " + c_name + " " + c.layout().describe() +
                            " must be densely packed rank-4 tensors whose last dimensions are "
                            "multiples of " +
                            std::to_string(groups) + " groups");
}

} // namespace

MatmulStats grouped_conv2d_input_grad(Device &device, const Tensor &dy, const Tensor &weights,
                                      Tensor &dx, const ConvGrouping &grouping,
                                      const Conv2dParams &params) {
    const std::uint32_t groups = grouping.groups;
    const ConvDilation dilation{grouping.dilation_h, grouping.dilation_w};
    if (groups == 1)
        return conv2d_input_grad(device, dy, weights, dx, params, dilation);
    check("grouped conv2d_input_grad", dy, "dy", weights, "weights", dx, "dx", groups);
    MatmulStats stats;
    const Tensor dys = split_groups(device, dy, groups, stats);
    const Tensor ws = split_groups(device, weights, groups, stats);
    const std::size_t cg = dx.size(3) / groups, fg = weights.size(3) / groups;
    Tensor dxs = Tensor::empty(device, dx.dtype(), {groups, dx.element_count() / dx.size(3), cg});
    for (std::uint32_t g = 0; g < groups; ++g) {
        Tensor dx_g = dxs.select(0, g).reshape({dx.size(0), dx.size(1), dx.size(2), cg});
        add(stats,
            conv2d_input_grad(
                device, dys.select(0, g).reshape({dy.size(0), dy.size(1), dy.size(2), fg}),
                ws.select(0, g).reshape({weights.size(0), weights.size(1), weights.size(2), fg}),
                dx_g, params, dilation));
    }
    join_groups(device, dxs, dx, stats);
    return stats;
}

MatmulStats grouped_conv2d_weight_grad(Device &device, const Tensor &x, const Tensor &dy,
                                       Tensor &dw, const ConvGrouping &grouping,
                                       const Conv2dParams &params) {
    const std::uint32_t groups = grouping.groups;
    const ConvDilation dilation{grouping.dilation_h, grouping.dilation_w};
    if (groups == 1)
        return conv2d_weight_grad(device, x, dy, dw, params, dilation);
    check("grouped conv2d_weight_grad", x, "x", dy, "dy", dw, "dw", groups);
    MatmulStats stats;
    const Tensor xs = split_groups(device, x, groups, stats);
    const Tensor dys = split_groups(device, dy, groups, stats);
    const std::size_t cg = x.size(3) / groups, fg = dy.size(3) / groups;
    Tensor dws = Tensor::empty(device, dw.dtype(), {groups, dw.element_count() / dw.size(3), fg});
    for (std::uint32_t g = 0; g < groups; ++g) {
        Tensor dw_g = dws.select(0, g).reshape({dw.size(0), dw.size(1), dw.size(2), fg});
        add(stats, conv2d_weight_grad(
                       device, xs.select(0, g).reshape({x.size(0), x.size(1), x.size(2), cg}),
                       dys.select(0, g).reshape({dy.size(0), dy.size(1), dy.size(2), fg}), dw_g,
                       params, dilation));
    }
    join_groups(device, dws, dw, stats);
    return stats;
}

} // namespace tpurt
