// SPDX-License-Identifier: MIT
// onnx_layout.cpp - a model spec's samples in ONNX's layout, for its compiled model
// (compile_checkpoint.hpp; the host's and the guest's builds).
#include "tpu_export/compile_checkpoint.hpp"

#include <tpu_nn/spec.hpp>

namespace tpu_export {

std::vector<float> to_onnx_layout(const tpu_model::Checkpoint &c, const float *samples,
                                  std::size_t count) {
    const tpu_nn::Shape s = tpu_nn::parse_spec(c.model).input;
    const std::size_t size = tpu_nn::elements(s);
    std::vector<float> out(samples, samples + count * size);
    if (s.size() != 3 || s[2] == 1)
        return out;
    const std::size_t h = s[0], w = s[1], ch = s[2];
    for (std::size_t n = 0; n < count; ++n)
        for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x)
                for (std::size_t k = 0; k < ch; ++k)
                    out[n * size + (k * h + y) * w + x] = samples[n * size + (y * w + x) * ch + k];
    return out;
}

} // namespace tpu_export
