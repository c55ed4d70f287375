// SPDX-License-Identifier: MIT
// c_api_internal.hpp - internal: what the C API's files share: the opaque objects of tpurt.h,
// the mapping of exceptions to TPURT_E_* codes with the per-thread message, and the checks of
// versioned (struct_size) argument structs.
#pragma once

#include "tpurt/tpurt.h"

#include "tpurt/card/launch.hpp"
#include "tpurt/device.hpp"
#include "tpurt/error.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <string>

struct tpurt_device {
    tpurt::Device device;
};
struct tpurt_buffer {
    std::shared_ptr<tpurt::Buffer> buffer;
};
struct tpurt_tensor {
    tpurt::Tensor tensor;
};
struct tpurt_stream {
    tpurt::Stream stream;
};
struct tpurt_event {
    tpurt::Event event;
};
struct tpurt_graph {
    tpurt::Graph graph;
};
struct tpurt_executable {
    std::shared_ptr<const tpurt::Executable> exe;
};

namespace tpurt::c_api {

int fail(int status, const std::string &message);
int status_of(ErrorCode code);
void clear_error();
const char *last_error_text();

// Runs `body`, mapping exceptions to status codes and recording their message.
template <typename Body> int guarded(Body &&body) {
    try {
        clear_error();
        return body();
    } catch (const Error &error) {
        return fail(status_of(error.code()), error.what());
    } catch (const std::bad_alloc &) {
        return fail(TPURT_E_NO_MEMORY, "out of host memory");
    } catch (const std::exception &error) {
        return fail(TPURT_E_INTERNAL, error.what());
    }
}

// Throws Error(InvalidArgument) naming `call` if `pointer` is NULL.
inline void require(const void *pointer, const char *call, const char *name) {
    if (!pointer)
        throw Error(ErrorCode::InvalidArgument, std::string(call) + ": " + name + " is NULL");
}

// A versioned input struct: the caller's struct_size bytes, at least `first_version` (the
// size of the struct's first version); bytes beyond what this library knows must be zero.
template <typename T> T read_versioned(const T *in, std::size_t first_version, const char *call) {
    require(in, call, "the argument struct");
    const std::size_t size = in->struct_size;
    if (size < first_version)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(call) + ": struct_size " + std::to_string(size) +
                        " is below the struct's first version (" + std::to_string(first_version) +
                        " bytes): set struct_size = sizeof(the struct)");
    const auto *bytes = reinterpret_cast<const unsigned char *>(in);
    for (std::size_t i = sizeof(T); i < size; ++i)
        if (bytes[i] != 0)
            throw Error(ErrorCode::InvalidArgument,
                        std::string(call) + ": fields beyond this library's version are set");
    T value{};
    std::memcpy(&value, in, std::min(size, sizeof(T)));
    return value;
}

// A versioned output struct: `value` into the caller's struct_size bytes (struct_size kept).
template <typename T>
void write_versioned(T *out, T value, std::size_t first_version, const char *call) {
    require(out, call, "the result struct");
    const std::size_t size = out->struct_size;
    if (size < first_version)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(call) + ": struct_size " + std::to_string(size) +
                        " is below the struct's first version (" + std::to_string(first_version) +
                        " bytes): set struct_size = sizeof(the struct)");
    value.struct_size = static_cast<std::uint32_t>(size);
    std::memcpy(out, &value, std::min(size, sizeof(T)));
}

// Runs `launch` on dev (stream NULL: waits) or queues it on the stream.
int run_or_queue(tpurt_device *dev, tpurt_stream *stream, tpurt::OpLaunch launch, const char *call);
int run_or_queue(tpurt_device *dev, tpurt_stream *stream, tpurt::OpSequence sequence,
                 const char *call);
// The stream's device, or dev for a NULL stream.
tpurt::Device &device_of(tpurt_device *dev, tpurt_stream *stream, const char *call);

// TPURT_WAIT_DEFAULT or a negative value: the runtime's default timeout.
inline std::chrono::nanoseconds timeout_of(std::int64_t timeout_ns) {
    return timeout_ns < 0 ? std::chrono::nanoseconds(Job::default_timeout)
                          : std::chrono::nanoseconds(timeout_ns);
}

} // namespace tpurt::c_api
