// SPDX-License-Identifier: MIT
// reference_conv_grad.cpp - the convolution gradients on the CPU (see conv_grad_compiler.hpp):
// the lowered operands built element by element with plain loops, then reference_conv2d().
#include "tpurt/golden/reference_conv_grad.hpp"
#include "tpurt/error.hpp"
#include "tpurt/golden/reference_conv2d.hpp"

#include <cstring>

namespace tpurt {

namespace {

using Bytes = std::vector<std::byte>;

// Element i of `from` (elements of e bytes) to element j of `to`.
void copy_element(const std::byte *from, std::size_t i, std::byte *to, std::size_t j,
                  std::size_t e) {
    std::memcpy(to + j * e, from + i * e, e);
}

template <typename In, typename Acc>
Bytes conv_typed(const Bytes &input, const Bytes &weights, const Conv2dShape &s) {
    std::vector<In> x(s.input_elements()), w(s.weight_elements());
    std::memcpy(x.data(), input.data(), input.size());
    std::memcpy(w.data(), weights.data(), weights.size());
    std::vector<Acc> out(s.output_elements());
    reference_conv2d(std::span<const In>(x), std::span<const In>(w), std::span<Acc>(out), s);
    Bytes bytes(out.size() * sizeof(Acc));
    std::memcpy(bytes.data(), out.data(), bytes.size());
    return bytes;
}

Bytes conv(DType type, const Bytes &input, const Bytes &weights, const Conv2dShape &s) {
    switch (type) {
    case DType::Int8:
        return conv_typed<std::int8_t, std::int32_t>(input, weights, s);
    case DType::Bf16:
        return conv_typed<Bf16, float>(input, weights, s);
    case DType::Fp32:
        return conv_typed<float, float>(input, weights, s);
    default:
        throw Error(ErrorCode::InvalidArgument, "reference conv2d gradient: inputs are int8, "
                                                "bf16 or fp32");
    }
}

void require_bytes(std::span<const std::byte> have, std::uint64_t elements, DType type,
                   const char *name) {
    if (have.size() != elements * element_size(type))
        throw Error(ErrorCode::InvalidArgument, std::string("reference conv2d gradient: ") + name +
                                                    " holds " + std::to_string(have.size()) +
                                                    " bytes, needs " +
                                                    std::to_string(elements * element_size(type)));
}

// dy [N, OH, OW, F] spread into [N, HS, WS, F].
Bytes spread(const ConvGradProblem &p, const ConvGradLowering &l, std::span<const std::byte> dy) {
    const Conv2dShape &s = p.shape, &to = l.input_grad;
    const std::size_t e = element_size(p.type);
    Bytes out(to.input_elements() * e);
    for (std::size_t n = 0; n < s.batch; ++n)
        for (std::size_t oy = 0; oy < l.out_h; ++oy)
            for (std::size_t ox = 0; ox < l.out_w; ++ox)
                for (std::size_t f = 0; f < s.filters; ++f)
                    copy_element(dy.data(), ((n * l.out_h + oy) * l.out_w + ox) * s.filters + f,
                                 out.data(),
                                 ((n * to.height + oy * s.stride_h) * to.width + ox * s.stride_w) *
                                         s.filters +
                                     f,
                                 e);
    return out;
}

} // namespace

std::vector<std::byte> reference_conv2d_input_grad(const ConvGradProblem &p,
                                                   std::span<const std::byte> dy,
                                                   std::span<const std::byte> weights) {
    const ConvGradLowering l = lower_conv_grad(p);
    const Conv2dShape &s = p.shape, &k = l.input_grad;
    require_bytes(dy, std::uint64_t{s.batch} * l.out_h * l.out_w * s.filters, p.type, "dy");
    require_bytes(weights, s.weight_elements(), p.type, "weights");
    const std::size_t e = element_size(p.type);
    // kernel[KH' - 1 - ky dh][KW' - 1 - kx dw][f][c] = weights[ky][kx][c][f], zeros elsewhere.
    Bytes kernel(k.weight_elements() * e);
    for (std::size_t ky = 0; ky < s.kernel_h; ++ky)
        for (std::size_t kx = 0; kx < s.kernel_w; ++kx)
            for (std::size_t c = 0; c < s.channels; ++c)
                for (std::size_t f = 0; f < s.filters; ++f)
                    copy_element(weights.data(),
                                 ((ky * s.kernel_w + kx) * s.channels + c) * s.filters + f,
                                 kernel.data(),
                                 (((k.kernel_h - 1 - ky * p.dilation_h) * k.kernel_w +
                                   (k.kernel_w - 1 - kx * p.dilation_w)) *
                                      s.filters +
                                  f) * s.channels +
                                     c,
                                 e);
    return conv(p.type, spread(p, l, dy), kernel, k);
}

std::vector<std::byte> reference_conv2d_weight_grad(const ConvGradProblem &p,
                                                    std::span<const std::byte> x,
                                                    std::span<const std::byte> dy) {
    const ConvGradLowering l = lower_conv_grad(p);
    const Conv2dShape &s = p.shape, &w = l.weight_grad;
    require_bytes(x, s.input_elements(), p.type, "x");
    require_bytes(dy, std::uint64_t{s.batch} * l.out_h * l.out_w * s.filters, p.type, "dy");
    const std::size_t e = element_size(p.type), ae = element_size(accumulator_type(p.type));
    const Bytes dys = spread(p, l, dy);
    Bytes xt(x.size()), dyt(dys.size());
    for (std::size_t n = 0; n < s.batch; ++n)
        for (std::size_t y = 0; y < s.height; ++y)
            for (std::size_t z = 0; z < s.width; ++z)
                for (std::size_t c = 0; c < s.channels; ++c)
                    copy_element(x.data(), ((n * s.height + y) * s.width + z) * s.channels + c,
                                 xt.data(), ((c * s.height + y) * s.width + z) * s.batch + n, e);
    for (std::size_t n = 0; n < s.batch; ++n)
        for (std::size_t y = 0; y < w.kernel_h; ++y)
            for (std::size_t z = 0; z < w.kernel_w; ++z)
                for (std::size_t f = 0; f < s.filters; ++f)
                    copy_element(
                        dys.data(), ((n * w.kernel_h + y) * w.kernel_w + z) * s.filters + f,
                        dyt.data(), ((y * w.kernel_w + z) * s.batch + n) * s.filters + f, e);
    const Bytes g = conv(p.type, xt, dyt, w);
    const std::size_t kh = w.out_height(), kw = w.out_width();
    Bytes dw(s.weight_elements() * ae);
    for (std::size_t ky = 0; ky < s.kernel_h; ++ky)
        for (std::size_t kx = 0; kx < s.kernel_w; ++kx)
            for (std::size_t c = 0; c < s.channels; ++c)
                for (std::size_t f = 0; f < s.filters; ++f)
                    copy_element(
                        g.data(),
                        ((c * kh + ky * p.dilation_h) * kw + kx * p.dilation_w) * s.filters + f,
                        dw.data(), ((ky * s.kernel_w + kx) * s.channels + c) * s.filters + f, ae);
    return dw;
}

} // namespace tpurt
