// SPDX-License-Identifier: MIT
// norm_kernels.cpp - the reference kernels of the normalisations: LayerNormalization (over the
// axes from `axis`, scale and bias broadcast over them; Mean and InvStdDev if asked for) and
// BatchNormalization in inference mode (per channel, NCHW or an NHWC image), in binary32.
#include "kernel_support.hpp"

#include <cmath>

namespace tpumodel::cpu {

namespace {

using Inputs = std::span<const Tensor *const>;
using Outputs = std::span<Tensor *const>;

std::vector<float> floats_of(const Node &node, const Tensor *t, const char *what) {
    if (!t || (t->dtype != DType::Float && t->dtype != DType::Bfloat16))
        throw KernelError(node, std::string("its ") + what + " is missing or not float");
    std::vector<float> v(t->element_count());
    for (std::uint64_t i = 0; i < v.size(); ++i)
        v[i] = float(real_at(*t, i));
    return v;
}

void layer_norm_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0);
    require_plain(node, x);
    const std::size_t axis = normalise_axis(node, node.get_int("axis", -1), x.shape.size());
    const auto eps = node.get_float("epsilon", 1e-5f);
    std::uint64_t rows = 1, len = 1;
    for (std::size_t i = 0; i < x.shape.size(); ++i)
        (i < axis ? rows : len) *= std::uint64_t(x.shape[i]);
    const std::vector<float> xs = floats_of(node, &x, "input");
    const std::vector<float> scale = floats_of(node, in.size() > 1 ? in[1] : nullptr, "scale");
    const std::vector<float> bias =
        in.size() > 2 && in[2] ? floats_of(node, in[2], "bias") : std::vector<float>(len, 0.0f);
    auto at = [&](const std::vector<float> &v, std::uint64_t j) {
        return v.size() == 1 ? v[0] : v[j % v.size()];
    };
    if ((scale.size() != 1 && len % scale.size() != 0) ||
        (bias.size() != 1 && len % bias.size() != 0))
        throw KernelError(node, "scale or bias does not broadcast over the normalised axes");
    Tensor &y = *out[0];
    shape_output(y, x.dtype, x.shape);
    // Mean and InvStdDev (optional outputs): the input's shape with the normalised axes as 1.
    std::vector<std::int64_t> stat_shape = x.shape;
    for (std::size_t i = axis; i < stat_shape.size(); ++i)
        stat_shape[i] = 1;
    if (node.get_int("stash_type", 1) != std::int64_t(DType::Float))
        throw KernelError(node, "stashes its statistics in float32 only");
    const DType stash = DType::Float;
    for (std::size_t i = 1; i < out.size(); ++i)
        shape_output(*out[i], stash, stat_shape);
    for (std::uint64_t r = 0; r < rows; ++r) {
        float mean = 0, var = 0;
        for (std::uint64_t j = 0; j < len; ++j)
            mean += xs[r * len + j];
        mean /= float(len);
        for (std::uint64_t j = 0; j < len; ++j) {
            const float d = xs[r * len + j] - mean;
            var += d * d;
        }
        var /= float(len);
        const float inv = 1.0f / std::sqrt(var + eps);
        if (out.size() > 1)
            store(*out[1], r, mean, 0);
        if (out.size() > 2)
            store(*out[2], r, inv, 0);
        for (std::uint64_t j = 0; j < len; ++j)
            store(y, r * len + j, (xs[r * len + j] - mean) * inv * at(scale, j) + at(bias, j), 0);
    }
}

void batch_norm_kernel(const Node &node, Inputs in, Outputs out) {
    if (out.size() != 1 || node.get_int("training_mode", 0) != 0)
        throw KernelError(node, "runs in inference mode only (one output, training_mode 0)");
    if (in.size() != 5)
        throw KernelError(node, "needs X, scale, B, mean and var");
    const Tensor &x = input(node, in, 0);
    if (x.shape.size() < 2)
        throw KernelError(node, "takes an input of rank 2 or more");
    const bool nhwc = x.layout == Layout::Nhwc;
    if (!nhwc)
        require_plain(node, x);
    const std::uint64_t c = std::uint64_t(nhwc ? x.shape.back() : x.shape[1]);
    std::uint64_t inner = 1;
    for (std::size_t i = 2; !nhwc && i < x.shape.size(); ++i)
        inner *= std::uint64_t(x.shape[i]);
    const std::vector<float> xs = floats_of(node, &x, "input");
    const std::vector<float> scale = floats_of(node, in[1], "scale"),
                             b = floats_of(node, in[2], "B");
    const std::vector<float> mean = floats_of(node, in[3], "mean"),
                             var = floats_of(node, in[4], "var");
    if (scale.size() != c || b.size() != c || mean.size() != c || var.size() != c)
        throw KernelError(node, "scale, B, mean and var must have one value per channel");
    const auto eps = node.get_float("epsilon", 1e-5f);
    Tensor &y = *out[0];
    shape_output(y, x.dtype, x.shape);
    y.layout = x.layout;
    for (std::uint64_t i = 0; i < xs.size(); ++i) {
        const std::uint64_t ch = nhwc ? i % c : (i / inner) % c;
        store(y, i, (xs[i] - mean[ch]) / std::sqrt(var[ch] + eps) * scale[ch] + b[ch], 0);
    }
}

} // namespace

void add_norm_kernels(KernelTable &table) {
    table["LayerNormalization"] = layer_norm_kernel;
    table["BatchNormalization"] = batch_norm_kernel;
}

} // namespace tpumodel::cpu
