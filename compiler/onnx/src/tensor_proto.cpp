// SPDX-License-Identifier: MIT
// tensor_proto.cpp - ONNX TensorProtos (initialisers, Constant values, test data files) as
// tpumodel tensors: the data from raw_data or the typed fields, checked against the shape.
#include "tpu_onnx/tensor_proto.hpp"

#include "tpu_onnx/compile.hpp"

#include <cstring>
#include <fstream>

namespace tpu_onnx {

namespace {

using tpumodel::DType;
using tpumodel::Tensor;

template <typename Field> void copy_field(Tensor &t, const Field &values) {
    t.data.resize(t.element_count() * tpumodel::dtype_size(t.dtype));
    const std::size_t size = tpumodel::dtype_size(t.dtype);
    for (int i = 0; i < values.size() && std::size_t(i) * size < t.data.size(); ++i) {
        const auto v = values.Get(i);
        std::memcpy(t.data.data() + std::size_t(i) * size, &v, size); // little-endian: low bytes
    }
}

} // namespace

DType dtype_from_onnx(std::int32_t elem_type, const std::string &what, const std::string &path) {
    if (elem_type >= 0 && elem_type < 256 && tpumodel::dtype_known(std::uint8_t(elem_type)))
        return DType(elem_type);
    const std::string name = onnx::TensorProto_DataType_IsValid(elem_type)
                                 ? onnx::TensorProto_DataType_Name(elem_type)
                                 : std::to_string(elem_type);
    throw CompileError(path + ": " + what + " is of type " + name +
                       ": tpu-compile takes FLOAT, BFLOAT16, INT8, UINT8, INT32, INT64, BOOL");
}

Tensor tensor_from_proto(const onnx::TensorProto &p, const std::string &name,
                         const std::string &path) {
    Tensor t;
    t.name = name;
    t.dtype = dtype_from_onnx(p.data_type(), "constant '" + name + "'", path);
    t.constant = true;
    for (std::int64_t d : p.dims())
        t.shape.push_back(d);
    if (p.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
        throw CompileError(path + ": constant '" + name +
                           "' keeps its data in an external file, which tpu-compile does not read");
    std::uint64_t count = 1;
    for (std::int64_t d : t.shape) {
        if (d < 0)
            throw CompileError(path + ": constant '" + name + "' has a negative dimension");
        count *= std::uint64_t(d);
        if (count > tpumodel::max_elements)
            throw CompileError(path + ": constant '" + name + "' is absurdly large");
    }
    const std::uint64_t bytes = count * tpumodel::dtype_size(t.dtype);
    std::uint64_t held = 0;
    if (p.has_raw_data()) {
        held = p.raw_data().size();
        if (held == bytes)
            t.data.assign(p.raw_data().begin(), p.raw_data().end());
    } else if (t.dtype == DType::Float) {
        held = std::uint64_t(p.float_data_size()) * 4;
        copy_field(t, p.float_data());
    } else if (t.dtype == DType::Int64) {
        held = std::uint64_t(p.int64_data_size()) * 8;
        copy_field(t, p.int64_data());
    } else {
        held = std::uint64_t(p.int32_data_size()) * tpumodel::dtype_size(t.dtype);
        copy_field(t, p.int32_data());
    }
    if (held != bytes)
        throw CompileError(path + ": constant '" + name + "' holds " + std::to_string(held) +
                           " bytes of data, its shape needs " + std::to_string(bytes));
    return t;
}

Tensor load_tensor_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    onnx::TensorProto proto;
    if (!in)
        throw CompileError(path + ": cannot open the file");
    if (!proto.ParseFromIstream(&in))
        throw CompileError(path + ": not an ONNX TensorProto (the protobuf does not parse)");
    return tensor_from_proto(proto, proto.name(), path);
}

} // namespace tpu_onnx
