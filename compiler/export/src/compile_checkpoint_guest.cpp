// SPDX-License-Identifier: MIT
// compile_checkpoint_guest.cpp - compile_checkpoint in the guest's build, which has no ONNX
// and so no compiler: it says where to compile the checkpoint (compile_checkpoint.hpp).
#include "tpu_export/compile_checkpoint.hpp"

#include <stdexcept>

namespace tpu_export {

tpumodel::Model compile_checkpoint(const tpu_model::Checkpoint &c, const std::string &path,
                                   const CheckpointCompileOptions &) {
    throw std::runtime_error(path + ": the model " + c.model +
                             " runs compiled, and this build has no ONNX compiler: on the host, "
                             "tpu-export it and tpu-compile the ONNX file, then use the .tpumodel");
}

} // namespace tpu_export
