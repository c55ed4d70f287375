// SPDX-License-Identifier: MIT
// reference_conv2d.cpp - the direct convolution on the CPU, in the card's reduction order:
// per output element, taps (ky, kx) ascending over every tap, padding taps contributing
// products of zero, channels ascending within a tap (bf16: in blocks of 32 channels from the
// tap's first, each an even and an odd chain of the bf16 MATMUL step added to the accumulator
// once); see conv2d.hpp. A convolution layer adds ACTIVATE's epilogue (reference_dense.hpp).
#include "tpurt/golden/reference_conv2d.hpp"
#include "tpurt/error.hpp"
#include "tpurt/golden/reference_dense.hpp"
#include "tpurt/golden/reference_fp32.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace tpurt {

namespace {

void check_sizes(std::size_t in, std::size_t w, std::size_t out, const Conv2dShape &s) {
    if (s.kernel_h > s.height + 2ull * s.pad_h || s.kernel_w > s.width + 2ull * s.pad_w ||
        s.stride_h == 0 || s.stride_w == 0)
        throw Error(ErrorCode::InvalidArgument, "reference_conv2d: bad shape");
    if (in < s.input_elements() || w < s.weight_elements() || out < s.output_elements())
        throw Error(ErrorCode::InvalidArgument, "reference_conv2d: spans too small");
}

float daz(float x) {
    return std::fabs(x) < 0x1p-126f ? std::copysign(0.0f, x) : x;
}

// The bf16 MATMUL step (docs/hardware.md, Numerics): FTZ(RNE(DAZ(acc) + DAZ(a) DAZ(w))), the
// product exact, the sum rounded once to 24 bits, a result below 2^-126 after that rounding
// (with an unbounded exponent) flushed to a zero of its sign.
float bf16_step(float acc, float a, float w) {
    const double product = static_cast<double>(daz(a)) * static_cast<double>(daz(w));
    const double sum = add_round_to_odd(product, static_cast<double>(daz(acc)));
    if (!(std::fabs(sum) < 0x1p-126))
        return static_cast<float>(sum); // normal, infinite, NaN: one rounding
    // Scaled into the normal range the conversion rounds to 24 bits (products of normal bf16
    // values and their sums with normal fp32 values are at least 2^-252 unless zero).
    const float scaled = static_cast<float>(sum * 0x1p200);
    return std::fabs(scaled) < 0x1p74f ? std::copysign(0.0f, scaled)
                                       : std::copysign(0x1p-126f, scaled);
}

// The block's add (docs/hardware.md, Numerics): FTZ(RNE(DAZ(x) + DAZ(y))); for terms that are
// zero or normal a tiny sum is exact.
float bf16_add(float x, float y) {
    const float r = daz(x) + daz(y);
    return std::fabs(r) < 0x1p-126f ? std::copysign(0.0f, r) : r;
}

constexpr std::uint32_t bf16_block = 32;

// Accumulate one pixel's channels into acc[f] in the card's order: int8 and fp32 one channel
// at a time, bf16 in blocks of 32 channels from the first, each summed in an even-channel and
// an odd-channel chain from +0 and then added to acc[f] once.
struct Int8Steps {
    static void pixel(const std::int8_t *x, const std::int8_t *w, std::uint32_t channels,
                      std::uint32_t filters, std::int32_t *acc) {
        for (std::uint32_t c = 0; c < channels; ++c)
            for (std::uint32_t f = 0; f < filters; ++f) // unsigned: wrap-around is defined
                acc[f] = static_cast<std::int32_t>(
                    static_cast<std::uint32_t>(acc[f]) +
                    static_cast<std::uint32_t>(std::int32_t{x[c]} * w[c * filters + f]));
    }
};

struct Fp32Steps {
    static void pixel(const float *x, const float *w, std::uint32_t channels, std::uint32_t filters,
                      float *acc) {
        for (std::uint32_t c = 0; c < channels; ++c)
            for (std::uint32_t f = 0; f < filters; ++f)
                acc[f] = fused_multiply_add(x[c], w[c * filters + f], acc[f]);
    }
};

struct Bf16Steps {
    static void pixel(const Bf16 *x, const Bf16 *w, std::uint32_t channels, std::uint32_t filters,
                      float *acc) {
        for (std::uint32_t f = 0; f < filters; ++f)
            for (std::uint32_t b = 0; b < channels; b += bf16_block) {
                float chain[2] = {0.0f, 0.0f}; // even, odd
                for (std::uint32_t c = b; c < channels && c < b + bf16_block; ++c)
                    chain[c % 2] =
                        bf16_step(chain[c % 2], x[c].to_float(), w[c * filters + f].to_float());
                acc[f] = bf16_add(acc[f], bf16_add(chain[0], chain[1]));
            }
    }
};

template <typename Steps, typename In, typename Acc>
void convolve(std::span<const In> input, std::span<const In> weights, std::span<Acc> output,
              const Conv2dShape &s) {
    check_sizes(input.size(), weights.size(), output.size(), s);
    const std::uint32_t oh = s.out_height(), ow = s.out_width();
    const std::vector<In> zeros(s.channels); // a padding pixel
    std::vector<Acc> acc(s.filters);
    for (std::uint32_t n = 0; n < s.batch; ++n)
        for (std::uint32_t oy = 0; oy < oh; ++oy)
            for (std::uint32_t ox = 0; ox < ow; ++ox) {
                std::fill(acc.begin(), acc.end(), Acc{});
                for (std::uint32_t ky = 0; ky < s.kernel_h; ++ky)
                    for (std::uint32_t kx = 0; kx < s.kernel_w; ++kx) {
                        const std::int64_t iy = std::int64_t{oy} * s.stride_h + ky - s.pad_h;
                        const std::int64_t ix = std::int64_t{ox} * s.stride_w + kx - s.pad_w;
                        const bool inside = iy >= 0 && iy < s.height && ix >= 0 && ix < s.width;
                        const In *x =
                            inside ? &input[((std::uint64_t{n} * s.height + iy) * s.width + ix) *
                                            s.channels]
                                   : zeros.data();
                        const In *w = &weights[(std::uint64_t{ky} * s.kernel_w + kx) * s.channels *
                                               s.filters];
                        Steps::pixel(x, w, s.channels, s.filters, acc.data());
                    }
                const std::uint64_t o = ((std::uint64_t{n} * oh + oy) * ow + ox) * s.filters;
                std::copy(acc.begin(), acc.end(), output.begin() + o);
            }
}

} // namespace

void reference_conv2d(std::span<const std::int8_t> input, std::span<const std::int8_t> weights,
                      std::span<std::int32_t> output, const Conv2dShape &shape) {
    convolve<Int8Steps>(input, weights, output, shape);
}

void reference_conv2d(std::span<const Bf16> input, std::span<const Bf16> weights,
                      std::span<float> output, const Conv2dShape &shape) {
    convolve<Bf16Steps>(input, weights, output, shape);
    for (float &v : output.first(shape.output_elements())) // the card's canonical NaN
        if (std::isnan(v))
            v = std::bit_cast<float>(0x7fc00000u);
}

void reference_conv2d(std::span<const float> input, std::span<const float> weights,
                      std::span<float> output, const Conv2dShape &shape) {
    convolve<Fp32Steps>(input, weights, output, shape);
}

namespace {

template <typename T> std::vector<T> elements_of(std::span<const std::byte> bytes, std::size_t n) {
    if (bytes.size() < n * sizeof(T))
        throw Error(ErrorCode::InvalidArgument, "reference_conv2d_layer: arrays too small");
    std::vector<T> out(n);
    std::memcpy(out.data(), bytes.data(), n * sizeof(T));
    return out;
}

template <typename In, typename Acc>
std::vector<float> conv_accumulators(std::span<const std::byte> input,
                                     std::span<const std::byte> weights, const Conv2dShape &s) {
    const std::vector<In> x = elements_of<In>(input, s.input_elements());
    const std::vector<In> w = elements_of<In>(weights, s.weight_elements());
    std::vector<Acc> acc(s.output_elements());
    reference_conv2d(std::span<const In>(x), std::span<const In>(w), std::span<Acc>(acc), s);
    return {acc.begin(), acc.end()}; // int32 -> fp32 nearest even, as ACTIVATE converts
}

} // namespace

std::vector<std::byte> reference_conv2d_layer(DType type, std::span<const std::byte> input,
                                              std::span<const std::byte> weights,
                                              std::span<const float> bias,
                                              const MatmulEpilogue &epilogue,
                                              const Conv2dShape &shape) {
    std::vector<float> acc;
    switch (type) {
    case DType::Int8:
        acc = conv_accumulators<std::int8_t, std::int32_t>(input, weights, shape);
        break;
    case DType::Bf16:
        acc = conv_accumulators<Bf16, float>(input, weights, shape);
        break;
    case DType::Fp32:
        acc = conv_accumulators<float, float>(input, weights, shape);
        break;
    default:
        throw Error(ErrorCode::InvalidArgument,
                    "reference_conv2d_layer: inputs are int8, bf16 or fp32");
    }
    return reference_epilogue(acc, shape.filters, bias, epilogue.function, epilogue.scale,
                              epilogue.out_type);
}

} // namespace tpurt
