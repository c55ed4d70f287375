// SPDX-License-Identifier: MIT
// c_api_tensors.cpp - the C API's buffers and tensors (tpurt.h) on tpurt::Buffer and
// tpurt::Tensor, and their host copies, at once or on a stream.
#include "c_api/c_api_internal.hpp"

#include <vector>

using tpurt::c_api::fail;
using tpurt::c_api::guarded;
using tpurt::c_api::require;

namespace {

constexpr std::size_t tensor_desc_v1 = sizeof(tpurt_tensor_desc);

tpurt::DType dtype_of(std::uint32_t dtype, const char *call) {
    if (dtype > TPURT_FP32)
        throw tpurt::Error(tpurt::ErrorCode::InvalidArgument,
                           std::string(call) + ": dtype " + std::to_string(dtype) +
                               " is none of TPURT_INT8, TPURT_BF16, TPURT_INT32, TPURT_FP32");
    return static_cast<tpurt::DType>(dtype);
}

} // namespace

static_assert(int{TPURT_INT8} == int{TPU_DT_INT8} && int{TPURT_BF16} == int{TPU_DT_BF16} &&
              int{TPURT_INT32} == int{TPU_DT_INT32} && int{TPURT_FP32} == int{TPU_DT_FP32});

extern "C" {

int tpurt_buffer_create(tpurt_device *dev, size_t bytes, tpurt_buffer **out) {
    return guarded([&] {
        require(dev, "tpurt_buffer_create", "dev");
        require(out, "tpurt_buffer_create", "out");
        if (bytes == 0)
            return fail(TPURT_E_INVALID, "tpurt_buffer_create: bytes is 0");
        *out = new tpurt_buffer{std::make_shared<tpurt::Buffer>(dev->device.allocate(bytes))};
        return static_cast<int>(TPURT_OK);
    });
}

void tpurt_buffer_destroy(tpurt_buffer *buffer) {
    delete buffer;
}

void *tpurt_buffer_data(tpurt_buffer *buffer) {
    return buffer ? buffer->buffer->data() : nullptr;
}

size_t tpurt_buffer_size(const tpurt_buffer *buffer) {
    return buffer ? buffer->buffer->size() : 0;
}

uint64_t tpurt_buffer_device_addr(const tpurt_buffer *buffer) {
    return buffer ? buffer->buffer->device_addr() : 0;
}

int tpurt_tensor_create(tpurt_device *dev, const struct tpurt_tensor_desc *desc,
                        tpurt_tensor **out) {
    return guarded([&] {
        require(dev, "tpurt_tensor_create", "dev");
        require(out, "tpurt_tensor_create", "out");
        const tpurt_tensor_desc d =
            tpurt::c_api::read_versioned(desc, tensor_desc_v1, "tpurt_tensor_create");
        if (d.rank == 0 || d.rank > TPURT_MAX_RANK || d.pad != 0)
            return fail(TPURT_E_INVALID, "tpurt_tensor_create: rank " + std::to_string(d.rank) +
                                             " is not 1.." + std::to_string(TPURT_MAX_RANK) +
                                             " (or pad is not zero)");
        std::vector<std::size_t> shape(d.shape, d.shape + d.rank);
        *out = new tpurt_tensor{
            tpurt::Tensor::empty(dev->device, dtype_of(d.dtype, "tpurt_tensor_create"), shape)};
        return static_cast<int>(TPURT_OK);
    });
}

void tpurt_tensor_destroy(tpurt_tensor *tensor) {
    delete tensor;
}

int tpurt_tensor_describe(const tpurt_tensor *tensor, struct tpurt_tensor_desc *desc) {
    return guarded([&] {
        require(tensor, "tpurt_tensor_describe", "tensor");
        tpurt_tensor_desc d = {};
        d.dtype = static_cast<std::uint32_t>(tensor->tensor.dtype());
        d.rank = static_cast<std::uint32_t>(tensor->tensor.rank());
        for (std::size_t i = 0; i < d.rank && i < TPURT_MAX_RANK; ++i)
            d.shape[i] = tensor->tensor.size(i);
        tpurt::c_api::write_versioned(desc, d, tensor_desc_v1, "tpurt_tensor_describe");
        return static_cast<int>(TPURT_OK);
    });
}

int tpurt_tensor_write(tpurt_stream *stream, tpurt_tensor *tensor, const void *data, size_t bytes) {
    return guarded([&] {
        require(tensor, "tpurt_tensor_write", "tensor");
        require(data, "tpurt_tensor_write", "data");
        if (stream)
            stream->stream.copy_from_host(tensor->tensor, data, bytes);
        else
            tensor->tensor.copy_from_host(data, bytes);
        return static_cast<int>(TPURT_OK);
    });
}

int tpurt_tensor_read(tpurt_stream *stream, const tpurt_tensor *tensor, void *data, size_t bytes) {
    return guarded([&] {
        require(tensor, "tpurt_tensor_read", "tensor");
        require(data, "tpurt_tensor_read", "data");
        if (stream)
            stream->stream.copy_to_host(tensor->tensor, data, bytes);
        else
            tensor->tensor.copy_to_host(data, bytes);
        return static_cast<int>(TPURT_OK);
    });
}

} // extern "C"
