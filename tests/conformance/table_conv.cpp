// SPDX-License-Identifier: MIT
// table_conv.cpp - the conformance cases of the convolution family: conv2d (int8 -> int32,
// bf16 and fp32 -> fp32; strides, padding, a 1 x 1 image, channels just over the array),
// conv2d_layer (bias, scale, exact activations, output conversions), conv2d_input_grad and
// conv2d_weight_grad (strides, padding, dilation) and grouped_conv2d (groups, depthwise,
// dilation); all exact against golden/reference_conv2d.hpp and reference_conv_grad.hpp.
#include "conformance.hpp"

#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/golden/reference_conv_grad.hpp>

namespace conformance {

namespace {

template <typename T> std::span<const T> view(const std::vector<std::byte> &b) {
    return {reinterpret_cast<const T *>(b.data()), b.size() / sizeof(T)};
}

// The convolution of `type` on raw bytes into its accumulator type's bytes.
std::vector<std::byte> conv_bytes(DType type, const std::vector<std::byte> &input,
                                  const std::vector<std::byte> &weights,
                                  const tpurt::Conv2dShape &s) {
    const std::size_t outputs = std::size_t{s.batch} * s.out_height() * s.out_width() * s.filters;
    std::vector<std::byte> out(outputs * 4);
    if (type == DType::Int8)
        tpurt::reference_conv2d(view<std::int8_t>(input), view<std::int8_t>(weights),
                                {reinterpret_cast<std::int32_t *>(out.data()), outputs}, s);
    else if (type == DType::Bf16)
        tpurt::reference_conv2d(view<tpurt::Bf16>(input), view<tpurt::Bf16>(weights),
                                {reinterpret_cast<float *>(out.data()), outputs}, s);
    else
        tpurt::reference_conv2d(view<float>(input), view<float>(weights),
                                {reinterpret_cast<float *>(out.data()), outputs}, s);
    return out;
}

DType acc_type(DType type) {
    return type == DType::Int8 ? DType::Int32 : DType::Fp32;
}

Fill inputs(DType type) {
    return type == DType::Int8 ? uniform(-128, 127) : uniform(-2, 2);
}

std::string label(DType type, const tpurt::Conv2dShape &s) {
    return std::string(tpurt::dtype_name(type)) + " " + std::to_string(s.batch) + "x" +
           std::to_string(s.height) + "x" + std::to_string(s.width) + "x" +
           std::to_string(s.channels) + " k" + std::to_string(s.kernel_h) + "x" +
           std::to_string(s.kernel_w) + " f" + std::to_string(s.filters);
}

std::vector<std::pair<std::string, std::string>> params(const tpurt::Conv2dShape &s) {
    return {{"stride_h", std::to_string(s.stride_h)},
            {"stride_w", std::to_string(s.stride_w)},
            {"pad_h", std::to_string(s.pad_h)},
            {"pad_w", std::to_string(s.pad_w)}};
}

Shape input_shape(const tpurt::Conv2dShape &s) {
    return {s.batch, s.height, s.width, s.channels};
}
Shape weight_shape(const tpurt::Conv2dShape &s) {
    return {s.kernel_h, s.kernel_w, s.channels, s.filters};
}
Shape output_shape(const tpurt::Conv2dShape &s) {
    return {s.batch, s.out_height(), s.out_width(), s.filters};
}

// batch, height, width, channels, kernel_h, kernel_w, filters, strides, padding.
tpurt::Conv2dShape shape(std::uint32_t n, std::uint32_t h, std::uint32_t w, std::uint32_t c,
                         std::uint32_t kh, std::uint32_t kw, std::uint32_t f, std::uint32_t sh = 1,
                         std::uint32_t sw = 1, std::uint32_t ph = 0, std::uint32_t pw = 0) {
    return {.batch = n,
            .height = h,
            .width = w,
            .channels = c,
            .kernel_h = kh,
            .kernel_w = kw,
            .filters = f,
            .stride_h = sh,
            .stride_w = sw,
            .pad_h = ph,
            .pad_w = pw};
}

void add_conv(std::vector<Case> &cases, DType type, const tpurt::Conv2dShape &s) {
    cases.push_back({"conv2d",
                     label(type, s),
                     {in("input", type, input_shape(s), inputs(type)),
                      in("weights", type, weight_shape(s), inputs(type)),
                      out("output", acc_type(type), output_shape(s))},
                     params(s),
                     [=](Arrays &x) { x.bytes[2] = conv_bytes(type, x.bytes[0], x.bytes[1], s); }});
}

void add_layer(std::vector<Case> &cases, DType type, DType out_type, tpurt::Activation f,
               const char *name, const char *scale, bool bias, const tpurt::Conv2dShape &s) {
    cases.push_back({"conv2d_layer",
                     label(type, s) + " -> " + tpurt::dtype_name(out_type) + (bias ? " bias" : ""),
                     {in("input", type, input_shape(s), inputs(type)),
                      in("weights", type, weight_shape(s), inputs(type)),
                      out("output", out_type, output_shape(s)),
                      bias ? in("bias", DType::Fp32, {s.filters}, uniform(-8, 8)) : none("bias")},
                     [&] {
                         auto p = params(s);
                         p.push_back({"activation", name});
                         p.push_back({"scale", scale});
                         return p;
                     }(),
                     [=](Arrays &x) {
                         const std::vector<float> b = bias ? x.floats(3) : std::vector<float>{};
                         const tpurt::MatmulEpilogue e{.function = f,
                                                       .out_type = out_type,
                                                       .bias_addr = std::nullopt,
                                                       .scale = std::stof(scale)};
                         x.bytes[2] =
                             tpurt::reference_conv2d_layer(type, x.bytes[0], x.bytes[1], b, e, s);
                     }});
}

void add_grads(std::vector<Case> &cases, DType type, const tpurt::Conv2dShape &s, std::uint32_t dh,
               std::uint32_t dw) {
    const tpurt::ConvGradProblem p{.type = type, .shape = s, .dilation_h = dh, .dilation_w = dw};
    // The forward output with the dilated kernel.
    tpurt::Conv2dShape dilated = s;
    dilated.kernel_h = (s.kernel_h - 1) * dh + 1;
    dilated.kernel_w = (s.kernel_w - 1) * dw + 1;
    auto attrs = params(s);
    attrs.push_back({"dilation_h", std::to_string(dh)});
    attrs.push_back({"dilation_w", std::to_string(dw)});
    const std::string l = label(type, s) + " s" + std::to_string(s.stride_h) +
                          std::to_string(s.stride_w) + " p" + std::to_string(s.pad_h) +
                          std::to_string(s.pad_w) + " d" + std::to_string(dh) + std::to_string(dw);
    const Fill small = type == DType::Int8 ? uniform(-8, 8) : uniform(-2, 2);
    cases.push_back(
        {"conv2d_input_grad",
         l,
         {in("dy", type, output_shape(dilated), small), in("weights", type, weight_shape(s), small),
          out("dx", acc_type(type), input_shape(s))},
         attrs,
         [=](Arrays &x) {
             x.bytes[2] = tpurt::reference_conv2d_input_grad(p, x.bytes[0], x.bytes[1]);
         }});
    cases.push_back(
        {"conv2d_weight_grad",
         l,
         {in("x", type, input_shape(s), small), in("dy", type, output_shape(dilated), small),
          out("dw", acc_type(type), weight_shape(s))},
         attrs,
         [=](Arrays &x) {
             x.bytes[2] = tpurt::reference_conv2d_weight_grad(p, x.bytes[0], x.bytes[1]);
         }});
}

// grouped_conv2d's golden model: per group, the group's channels of the input, its filters'
// weights gathered into a kernel with the taps `d` apart and zeros between (as the card's
// lowering does), reference_conv2d() of that, scattered into the group's output channels.
std::vector<std::byte> grouped_bytes(DType type, const std::vector<std::byte> &input,
                                     const std::vector<std::byte> &weights,
                                     const tpurt::Conv2dShape &s, std::uint32_t groups,
                                     std::uint32_t dh, std::uint32_t dw) {
    const std::size_t size = tpurt::element_size(type), cg = s.channels / groups,
                      fg = s.filters / groups;
    tpurt::Conv2dShape g = s;
    g.channels = static_cast<std::uint32_t>(cg);
    g.filters = static_cast<std::uint32_t>(fg);
    g.kernel_h = (s.kernel_h - 1) * dh + 1;
    g.kernel_w = (s.kernel_w - 1) * dw + 1;
    const std::size_t pixels = std::size_t{s.batch} * s.height * s.width;
    const std::size_t outs = std::size_t{s.batch} * g.out_height() * g.out_width();
    std::vector<std::byte> result(outs * s.filters * 4);
    for (std::uint32_t group = 0; group < groups; ++group) {
        std::vector<std::byte> in(pixels * cg * size),
            kernel(std::size_t{g.kernel_h} * g.kernel_w * cg * fg * size);
        for (std::size_t p = 0; p < pixels; ++p)
            std::memcpy(&in[p * cg * size], &input[(p * s.channels + group * cg) * size],
                        cg * size);
        for (std::uint32_t ky = 0; ky < s.kernel_h; ++ky)
            for (std::uint32_t kx = 0; kx < s.kernel_w; ++kx)
                for (std::size_t c = 0; c < cg; ++c)
                    std::memcpy(
                        &kernel[(((ky * dh) * g.kernel_w + kx * dw) * cg + c) * fg * size],
                        &weights[(((std::size_t{ky} * s.kernel_w + kx) * cg + c) * s.filters +
                                  group * fg) *
                                 size],
                        fg * size);
        const std::vector<std::byte> part = conv_bytes(type, in, kernel, g);
        for (std::size_t p = 0; p < outs; ++p)
            std::memcpy(&result[(p * s.filters + group * fg) * 4], &part[p * fg * 4], fg * 4);
    }
    return result;
}

void add_grouped(std::vector<Case> &cases, DType type, const tpurt::Conv2dShape &s,
                 std::uint32_t groups, std::uint32_t dh, std::uint32_t dw) {
    tpurt::Conv2dShape dilated = s;
    dilated.kernel_h = (s.kernel_h - 1) * dh + 1;
    dilated.kernel_w = (s.kernel_w - 1) * dw + 1;
    auto attrs = params(s);
    attrs.push_back({"groups", std::to_string(groups)});
    attrs.push_back({"dilation_h", std::to_string(dh)});
    attrs.push_back({"dilation_w", std::to_string(dw)});
    cases.push_back({"grouped_conv2d",
                     label(type, s) + " g" + std::to_string(groups) + " d" + std::to_string(dh) +
                         std::to_string(dw),
                     {in("input", type, input_shape(s), inputs(type)),
                      in("weights", type, {s.kernel_h, s.kernel_w, s.channels / groups, s.filters},
                         inputs(type)),
                      out("output", acc_type(type), output_shape(dilated))},
                     attrs,
                     [=](Arrays &x) {
                         x.bytes[2] =
                             grouped_bytes(type, x.bytes[0], x.bytes[1], s, groups, dh, dw);
                     }});
}

} // namespace

std::vector<Case> conv_cases() {
    std::vector<Case> cases;
    for (DType type : {DType::Int8, DType::Bf16, DType::Fp32}) {
        add_conv(cases, type, shape(1, 1, 1, 1, 1, 1, 1));
        add_conv(cases, type, shape(2, 7, 5, 3, 3, 3, 5, 2, 1, 1, 1));
        add_conv(cases, type, shape(1, 5, 6, 131, 2, 2, 129, 1, 2, 0, 1));
        add_grads(cases, type, shape(2, 7, 6, 3, 3, 2, 5, 2, 1, 1, 0), 1, 1);
        add_grads(cases, type, shape(1, 9, 8, 2, 2, 3, 3, 1, 2, 1, 2), 2, 1);
    }
    add_layer(cases, DType::Int8, DType::Int8, tpurt::Activation::Relu, "relu", "0.0078125", true,
              shape(1, 6, 5, 3, 3, 3, 7, 1, 1, 1, 1));
    add_layer(cases, DType::Bf16, DType::Bf16, tpurt::Activation::Relu6, "relu6", "0.25", true,
              shape(2, 5, 5, 4, 3, 3, 3, 2, 2, 1, 1));
    add_layer(cases, DType::Fp32, DType::Fp32, tpurt::Activation::None, "none", "1", false,
              shape(1, 3, 4, 2, 1, 1, 130));
    for (DType type : {DType::Bf16, DType::Fp32}) {
        add_grouped(cases, type, shape(1, 6, 7, 4, 3, 3, 6, 1, 1, 1, 1), 2, 1, 1);
        add_grouped(cases, type, shape(2, 7, 7, 3, 3, 3, 3, 2, 1, 2, 2), 3, 2, 2); // depthwise
    }
    return cases;
}

} // namespace conformance
