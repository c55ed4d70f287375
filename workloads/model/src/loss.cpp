// SPDX-License-Identifier: MIT
// loss.cpp - softmax cross-entropy on the CPU (loss.hpp): each row's log-sum-exp in double from
// its largest logit, the mean loss, the correct rows and the gradient of the mean.
#include "tpu_model/loss.hpp"

#include <algorithm>
#include <cmath>

namespace tpu_model {

LossResult softmax_cross_entropy(const std::vector<float> &logits, std::size_t batch,
                                 std::size_t classes, const std::uint8_t *labels) {
    LossResult r;
    r.dlogits.resize(batch * classes);
    double total = 0.0;
    for (std::size_t i = 0; i < batch; ++i) {
        const float *z = logits.data() + i * classes;
        const float top = *std::max_element(z, z + classes);
        double sum = 0.0;
        for (std::size_t c = 0; c < classes; ++c)
            sum += std::exp(double(z[c] - top));
        const double log_sum = std::log(sum) + top;
        total += log_sum - z[labels[i]];
        if (std::size_t(std::max_element(z, z + classes) - z) == labels[i])
            ++r.correct;
        for (std::size_t c = 0; c < classes; ++c) {
            const double p = std::exp(double(z[c]) - log_sum);
            r.dlogits[i * classes + c] = float((p - (c == labels[i] ? 1.0 : 0.0)) / double(batch));
        }
    }
    r.loss = float(total / double(batch));
    return r;
}

} // namespace tpu_model
