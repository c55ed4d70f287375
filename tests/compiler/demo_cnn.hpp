// SPDX-License-Identifier: MIT
// demo_cnn.hpp - the demo's CNN for the round-trip tests: `make demo`'s model (two 3x3
// convolution blocks of 32 and 64 filters, dense 128 and 10) trained by the demo's trainer
// (tpu-train's graph trainer: bf16 mixed precision, Adam, cosine schedule) on the in-process card
// for one epoch of the real Fashion-MNIST (938 steps of 64), saved as tpu-train saves its
// checkpoint. ctest's fixture "compiler: the demo's CNN trained on the in-process card" trains it
// once into the build tree; the tests that read it train it themselves when run without the
// fixture.
#pragma once

#include <string>

namespace compiler_test {

// Where the fixture saves the checkpoint.
std::string demo_cnn_path();

// The checkpoint at demo_cnn_path(), trained now if it is not there (or if `retrain`).
std::string demo_cnn_checkpoint(bool retrain = false);

} // namespace compiler_test
