// SPDX-License-Identifier: MIT
// conv_grad_ops.cpp - the gradients of conv2d() with respect to its input and its weights,
// composed from the card's TRANSPOSE, permute() (shape_ops.hpp) and conv2d() (see
// train_ops.hpp).
#include "tpurt/error.hpp"
#include "tpurt/shape_ops.hpp"
#include "tpurt/train_ops.hpp"

#include <string>

namespace tpurt {

namespace {

[[noreturn]] void refuse(const std::string &op, const std::string &message) {
    throw Error(ErrorCode::InvalidArgument, op + ": " + message);
}

void require_dense4(const std::string &op, const char *name, const Tensor &t) {
    if (t.rank() != 4 || !t.is_contiguous())
        refuse(op, std::string(name) + " " + t.layout().describe() +
                       " must be a densely packed rank-4 tensor");
}

void add(MatmulStats &total, const MatmulStats &s) {
    total += s;
    total.jobs += s.jobs;
}

// The conv2d() checks that the backward lowering relies on: stride 1, padding below the kernel.
void check_params(const std::string &op, const Conv2dParams &p, std::size_t kh, std::size_t kw) {
    if (p.stride_h != 1 || p.stride_w != 1)
        refuse(op, "only stride 1 is lowered (strides " + std::to_string(p.stride_h) + " x " +
                       std::to_string(p.stride_w) + ")");
    if (p.pad_h >= kh || p.pad_w >= kw)
        refuse(op, "padding must be below the kernel size");
}

} // namespace

MatmulStats conv2d_input_grad(Device &device, const Tensor &dy, const Tensor &weights, Tensor &dx,
                              const Conv2dParams &params) {
    const std::string op = "conv2d_input_grad";
    require_dense4(op, "dy", dy);
    require_dense4(op, "weights", weights);
    require_dense4(op, "dx", dx);
    const std::size_t kh = weights.size(0), kw = weights.size(1), c = weights.size(2),
                      f = weights.size(3);
    check_params(op, params, kh, kw);
    if (dy.size(3) != f || dx.size(3) != c || dx.size(0) != dy.size(0) ||
        dy.size(1) + kh - 1 != dx.size(1) + 2 * params.pad_h ||
        dy.size(2) + kw - 1 != dx.size(2) + 2 * params.pad_w)
        refuse(op, "dy " + dy.layout().describe() + ", weights " + weights.layout().describe() +
                       " and dx " + dx.layout().describe() + " are not a convolution's");
    // w'[a][b] = w[kh - 1 - a][kw - 1 - b]^T: [KH, KW, F, C].
    MatmulStats stats;
    Tensor flipped = Tensor::empty(device, weights.dtype(), {kh, kw, f, c});
    for (std::size_t a = 0; a < kh; ++a)
        for (std::size_t b = 0; b < kw; ++b) {
            Tensor out = flipped.select(0, kh - 1 - a).select(0, kw - 1 - b);
            add(stats, transpose(device, weights.select(0, a).select(0, b), out));
        }
    const Conv2dParams full{.stride_h = 1,
                            .stride_w = 1,
                            .pad_h = static_cast<std::uint32_t>(kh - 1 - params.pad_h),
                            .pad_w = static_cast<std::uint32_t>(kw - 1 - params.pad_w)};
    add(stats, conv2d(device, dy, flipped, dx, full));
    return stats;
}

MatmulStats conv2d_weight_grad(Device &device, const Tensor &x, const Tensor &dy, Tensor &dw,
                               const Conv2dParams &params) {
    const std::string op = "conv2d_weight_grad";
    require_dense4(op, "x", x);
    require_dense4(op, "dy", dy);
    require_dense4(op, "dw", dw);
    const std::size_t n = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
    const std::size_t oh = dy.size(1), ow = dy.size(2), f = dy.size(3);
    const std::size_t kh = dw.size(0), kw = dw.size(1);
    check_params(op, params, kh, kw);
    if (dy.size(0) != n || dw.size(2) != c || dw.size(3) != f || x.dtype() != dy.dtype() ||
        oh + kh - 1 != h + 2 * params.pad_h || ow + kw - 1 != w + 2 * params.pad_w)
        refuse(op, "x " + x.layout().describe() + ", dy " + dy.layout().describe() + " and dw " +
                       dw.layout().describe() + " are not a convolution's");
    MatmulStats stats;
    // x as [C, H, W, N] (batch as channels) and dy as the [OH, OW, N, F] kernel, each one permute.
    const std::size_t to_chwn[] = {3, 1, 2, 0}, to_hwnf[] = {1, 2, 0, 3};
    Tensor xt = Tensor::empty(device, x.dtype(), {c, h, w, n});
    add(stats, permute(device, x, to_chwn, xt));
    Tensor dyt = Tensor::empty(device, dy.dtype(), {oh, ow, n, f});
    add(stats, permute(device, dy, to_hwnf, dyt));
    // [C, KH, KW, F] = conv(x as [C, H, W, N], dy as the kernel), then permuted into dw.
    Tensor g = Tensor::empty(device, DType::Fp32, {c, kh, kw, f});
    add(stats, conv2d(device, xt, dyt, g, {.pad_h = params.pad_h, .pad_w = params.pad_w}));
    add(stats, permute(device, g, to_hwnf, dw));
    return stats;
}

} // namespace tpurt
