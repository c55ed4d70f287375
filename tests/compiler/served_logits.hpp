// SPDX-License-Identifier: MIT
// served_logits.hpp - a model behind tpu-serve's HTTP server in the process (KServe v2 JSON on
// a free port), asked for its logits as a client asks: the tests that compare what the server
// answers with what the model computes.
#pragma once

#include <tpu_serve/batcher.hpp>
#include <tpu_serve/protocol.hpp>

#include <cstddef>
#include <vector>

namespace compiler_test {

// tpu-serve's batches on the HTTP path: requests of at most this many samples.
constexpr std::size_t serve_batch = 32;

// The logits (output "logits") the server answers for `count` samples of x (each of
// `sample_dims`, sent as [n, sample_dims...]), in requests of serve_batch samples, with `sig`
// and `run` behind it.
std::vector<float> served_logits(tpu_serve::ModelSignature sig, tpu_serve::Batcher::RunFn run,
                                 const float *x, std::size_t count,
                                 const std::vector<std::size_t> &sample_dims);

} // namespace compiler_test
