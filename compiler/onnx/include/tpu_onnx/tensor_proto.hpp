// SPDX-License-Identifier: MIT
// tensor_proto.hpp - ONNX tensors (TensorProto: initialisers, Constant values, the .pb files of
// ONNX's test data) as tpumodel tensors. Throws CompileError naming the tensor and `path`.
#pragma once

#include <tpumodel/model.hpp>

#include <onnx/onnx_pb.h>

#include <string>

namespace tpu_onnx {

// ONNX's element type as a tpumodel dtype; refused (naming `what`) unless the stack handles it.
tpumodel::DType dtype_from_onnx(std::int32_t elem_type, const std::string &what,
                                const std::string &path);
// A constant tensor named `name` with the proto's dtype, shape and data.
tpumodel::Tensor tensor_from_proto(const onnx::TensorProto &p, const std::string &name,
                                   const std::string &path);
// A serialised TensorProto file (test_data_set_N/input_M.pb) as a constant tensor.
tpumodel::Tensor load_tensor_file(const std::string &path);

} // namespace tpu_onnx
