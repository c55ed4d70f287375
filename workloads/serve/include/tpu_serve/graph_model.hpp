// SPDX-License-Identifier: MIT
// graph_model.hpp - a compiled model (.tpumodel, tpu-serve --model x.tpumodel) behind the
// server: its KServe v2 signature taken from the graph (the input's and output's names, FP32,
// their dimensions after the batch axis) and its runs over the batch axis. A model is compiled
// at one batch size (tpu-compile --input x:16x784): the batcher's batches of any size are cut
// into runs of that many samples, the last padded with zeros and its padding's results dropped.
#pragma once

#include "tpu_serve/protocol.hpp"

#include <tpumodel/model.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tpu_serve {

// The signature of `m` served as `name` (max_batch left 0 for the caller). Throws
// std::invalid_argument saying why the model cannot be served: other than one input and one
// output, not float32, no batch axis shared by input and output, an image left in NHWC.
ModelSignature graph_signature(const tpumodel::Model &m, const std::string &name);

class GraphRunner {
  public:
    // One run of the model on its inputs (card::Executor::run or cpu::run_model).
    using RunModel =
        std::function<std::vector<tpumodel::Tensor>(const std::vector<tpumodel::Tensor> &)>;
    // `m` must pass graph_signature().
    GraphRunner(const tpumodel::Model &m, RunModel run);

    // rows x features samples -> rows x classes outputs.
    std::vector<float> run(const float *samples, std::size_t rows) const;
    std::size_t batch() const { return batch_; } // samples per run of the model

  private:
    RunModel run_;
    tpumodel::Tensor input_; // the graph input's declaration
    std::size_t batch_, features_, classes_;
};

} // namespace tpu_serve
