// SPDX-License-Identifier: MIT
// c_api_streams.cpp - the C API's streams, events, executables and ops on tensors (tpurt.h):
// each op runs and waits with a NULL stream, or is queued on the stream.
#include "c_api/c_api_internal.hpp"

#include "tpurt/codegen/matmul_compiler.hpp"
#include "tpurt/codegen/op_executables.hpp"
#include "tpurt/ops/tensor_ops.hpp"

#include <vector>

using tpurt::c_api::fail;
using tpurt::c_api::guarded;
using tpurt::c_api::require;

namespace {

constexpr std::size_t stream_options_v1 = sizeof(tpurt_stream_options);
constexpr std::size_t dense_desc_v1 = sizeof(tpurt_dense_desc);

static_assert(int{TPURT_ACT_EXP} == int{TPU_ACT_EXP} && int{TPURT_ACT_GELU} == int{TPU_ACT_GELU});
static_assert(int{TPURT_ACT_LOG} == int{TPU_ACT_LOG} &&
              int{TPURT_ACT_RECIP} == int{TPU_ACT_RECIP} && int{TPURT_ACT_ERF} == int{TPU_ACT_ERF});
static_assert(int{TPURT_MIN} == int{TPU_VOP_MIN} && int{TPURT_MAX} == int{TPU_VOP_MAX});
static_assert(int{TPURT_REDUCE_MAX} == int{TPU_ROP_MAX});

template <typename E>
E enum_of(std::uint32_t value, std::uint32_t last, const char *call, const char *what) {
    if (value > last)
        throw tpurt::Error(tpurt::ErrorCode::InvalidArgument,
                           std::string(call) + ": " + what + " " + std::to_string(value) +
                               " is out of range (0.." + std::to_string(last) + ")");
    return static_cast<E>(value);
}

} // namespace

namespace tpurt::c_api {

int run_or_queue(tpurt_device *dev, tpurt_stream *stream, tpurt::OpLaunch launch,
                 const char *call) {
    if (stream) {
        stream->stream.enqueue(std::move(launch));
    } else {
        require(dev, call, "dev (with a NULL stream)");
        launch.run(dev->device);
    }
    return TPURT_OK;
}

int run_or_queue(tpurt_device *dev, tpurt_stream *stream, tpurt::OpSequence sequence,
                 const char *call) {
    if (stream) {
        stream->stream.enqueue(std::move(sequence));
    } else {
        require(dev, call, "dev (with a NULL stream)");
        sequence.run(dev->device);
    }
    return TPURT_OK;
}

tpurt::Device &device_of(tpurt_device *dev, tpurt_stream *stream, const char *call) {
    if (stream)
        return stream->stream.device();
    require(dev, call, "dev (with a NULL stream)");
    return dev->device;
}

} // namespace tpurt::c_api

using tpurt::c_api::device_of;
using tpurt::c_api::run_or_queue;

extern "C" {

int tpurt_stream_create(tpurt_device *dev, const struct tpurt_stream_options *options,
                        tpurt_stream **out) {
    return guarded([&] {
        require(dev, "tpurt_stream_create", "dev");
        require(out, "tpurt_stream_create", "out");
        tpurt::StreamOptions opts;
        if (options)
            opts.priority =
                tpurt::c_api::read_versioned(options, stream_options_v1, "tpurt_stream_create")
                    .priority;
        *out = new tpurt_stream{tpurt::Stream(dev->device, opts)};
        return static_cast<int>(TPURT_OK);
    });
}

void tpurt_stream_destroy(tpurt_stream *stream) {
    delete stream;
}

int tpurt_stream_synchronize(tpurt_stream *stream, int64_t timeout_ns) {
    return guarded([&] {
        require(stream, "tpurt_stream_synchronize", "stream");
        stream->stream.synchronize(tpurt::c_api::timeout_of(timeout_ns));
        return static_cast<int>(TPURT_OK);
    });
}

int tpurt_stream_wait_event(tpurt_stream *stream, const tpurt_event *event) {
    return guarded([&] {
        require(stream, "tpurt_stream_wait_event", "stream");
        require(event, "tpurt_stream_wait_event", "event");
        stream->stream.wait(event->event);
        return static_cast<int>(TPURT_OK);
    });
}

int tpurt_event_record(tpurt_stream *stream, tpurt_event **out) {
    return guarded([&] {
        require(stream, "tpurt_event_record", "stream");
        require(out, "tpurt_event_record", "out");
        *out = new tpurt_event{stream->stream.record()};
        return static_cast<int>(TPURT_OK);
    });
}

void tpurt_event_destroy(tpurt_event *event) {
    delete event;
}

int tpurt_event_query(const tpurt_event *event) {
    return guarded([&] {
        require(event, "tpurt_event_query", "event");
        return event->event.query() ? 1 : 0;
    });
}

int tpurt_event_wait(const tpurt_event *event, int64_t timeout_ns) {
    return guarded([&] {
        require(event, "tpurt_event_wait", "event");
        event->event.wait(tpurt::c_api::timeout_of(timeout_ns));
        return static_cast<int>(TPURT_OK);
    });
}

int tpurt_executable_compile_dense(tpurt_device *dev, const struct tpurt_dense_desc *desc,
                                   tpurt_executable **out) {
    return guarded([&] {
        const char *call = "tpurt_executable_compile_dense";
        require(dev, call, "dev");
        require(out, call, "out");
        const tpurt_dense_desc d = tpurt::c_api::read_versioned(desc, dense_desc_v1, call);
        const auto type = enum_of<tpurt::DType>(d.dtype, TPURT_FP32, call, "dtype");
        const auto out_type = enum_of<tpurt::DType>(d.out_dtype, TPURT_FP32, call, "out_dtype");
        const auto function =
            enum_of<tpurt::Activation>(d.activation, TPURT_ACT_EXP, call, "activation");
        if (d.m == 0 || d.k == 0 || d.n == 0 || d.has_bias > 1 || d.pad != 0)
            return fail(TPURT_E_INVALID, std::string(call) +
                                             ": m, k and n must be non-zero, has_bias 0 or 1 "
                                             "and pad zero");
        if (!tpurt::is_matmul_input(type))
            return fail(TPURT_E_INVALID, std::string(call) +
                                             ": the card multiplies int8, bf16 "
                                             "or fp32, not " +
                                             tpurt::dtype_name(type));
        tpurt::MatmulProblem problem;
        problem.type = type;
        problem.m = d.m;
        problem.k = d.k;
        problem.n = d.n;
        problem.a_stride = std::uint64_t{d.k} * tpurt::element_size(type);
        problem.b_stride = std::uint64_t{d.n} * tpurt::element_size(type);
        problem.c_stride = std::uint64_t{d.n} * tpurt::element_size(out_type);
        const bool plain = function == tpurt::Activation::None && d.scale == 1.0f && !d.has_bias &&
                           out_type == tpurt::accumulator_type(type);
        if (!plain)
            problem.epilogue = tpurt::MatmulEpilogue{
                .function = function,
                .out_type = out_type,
                .bias_addr = d.has_bias ? std::optional<std::uint64_t>(0) : std::nullopt,
                .scale = d.scale};
        *out = new tpurt_executable{tpurt::cached_executable(dev->device, problem)};
        return static_cast<int>(TPURT_OK);
    });
}

void tpurt_executable_destroy(tpurt_executable *exe) {
    delete exe;
}

int tpurt_executable_arg_count(const tpurt_executable *exe) {
    return guarded([&] {
        require(exe, "tpurt_executable_arg_count", "exe");
        return static_cast<int>(exe->exe->args().size());
    });
}

int tpurt_executable_job_count(const tpurt_executable *exe) {
    return guarded([&] {
        require(exe, "tpurt_executable_job_count", "exe");
        return static_cast<int>(exe->exe->program_count());
    });
}

int tpurt_executable_launch(tpurt_device *dev, tpurt_stream *stream, const tpurt_executable *exe,
                            tpurt_tensor *const *args, uint32_t arg_count) {
    return guarded([&] {
        const char *call = "tpurt_executable_launch";
        require(exe, call, "exe");
        require(args, call, "args");
        tpurt::OpLaunch launch{.executable = exe->exe, .bases = {}, .buffers = {}};
        for (uint32_t i = 0; i < arg_count; ++i) {
            require(args[i], call, "an argument tensor");
            launch.bases.push_back(args[i]->tensor.device_addr());
            launch.buffers.push_back(args[i]->tensor.storage());
        }
        return run_or_queue(dev, stream, std::move(launch), call);
    });
}

int tpurt_op_matmul(tpurt_device *dev, tpurt_stream *stream, const tpurt_tensor *a,
                    const tpurt_tensor *b, tpurt_tensor *c) {
    return guarded([&] {
        const char *call = "tpurt_op_matmul";
        require(a, call, "a");
        require(b, call, "b");
        require(c, call, "c");
        return run_or_queue(
            dev, stream,
            tpurt::prepare_matmul(device_of(dev, stream, call), a->tensor, b->tensor, c->tensor),
            call);
    });
}

int tpurt_op_dense(tpurt_device *dev, tpurt_stream *stream, const tpurt_tensor *a,
                   const tpurt_tensor *w, const tpurt_tensor *bias, tpurt_tensor *out,
                   uint32_t activation, float scale) {
    return guarded([&] {
        const char *call = "tpurt_op_dense";
        require(a, call, "a");
        require(w, call, "w");
        require(out, call, "out");
        const auto function =
            enum_of<tpurt::Activation>(activation, TPURT_ACT_EXP, call, "activation");
        return run_or_queue(dev, stream,
                            tpurt::prepare_dense(device_of(dev, stream, call), a->tensor, w->tensor,
                                                 bias ? &bias->tensor : nullptr, out->tensor,
                                                 function, scale),
                            call);
    });
}

int tpurt_op_elementwise(tpurt_device *dev, tpurt_stream *stream, uint32_t op,
                         const tpurt_tensor *a, const tpurt_tensor *b, tpurt_tensor *out) {
    return guarded([&] {
        const char *call = "tpurt_op_elementwise";
        require(a, call, "a");
        require(b, call, "b");
        require(out, call, "out");
        const auto vop = enum_of<tpurt::VectorOp>(op, TPURT_MIN, call, "op");
        return run_or_queue(dev, stream,
                            tpurt::prepare_elementwise(device_of(dev, stream, call), vop, a->tensor,
                                                       b->tensor, out->tensor),
                            call);
    });
}

int tpurt_op_unary(tpurt_device *dev, tpurt_stream *stream, uint32_t activation,
                   const tpurt_tensor *a, tpurt_tensor *out, float scale) {
    return guarded([&] {
        const char *call = "tpurt_op_unary";
        require(a, call, "a");
        require(out, call, "out");
        const auto function =
            enum_of<tpurt::Activation>(activation, TPURT_ACT_ERF, call, "activation");
        return run_or_queue(dev, stream,
                            tpurt::prepare_unary(device_of(dev, stream, call), function, a->tensor,
                                                 out->tensor, scale),
                            call);
    });
}

int tpurt_op_reduce_rows(tpurt_device *dev, tpurt_stream *stream, uint32_t op,
                         const tpurt_tensor *a, tpurt_tensor *out) {
    return guarded([&] {
        const char *call = "tpurt_op_reduce_rows";
        require(a, call, "a");
        require(out, call, "out");
        const auto rop = enum_of<tpurt::ReduceOp>(op, TPURT_REDUCE_MAX, call, "op");
        return run_or_queue(
            dev, stream,
            tpurt::prepare_reduce_rows(device_of(dev, stream, call), rop, a->tensor, out->tensor),
            call);
    });
}

int tpurt_op_transpose(tpurt_device *dev, tpurt_stream *stream, const tpurt_tensor *a,
                       tpurt_tensor *out) {
    return guarded([&] {
        const char *call = "tpurt_op_transpose";
        require(a, call, "a");
        require(out, call, "out");
        return run_or_queue(
            dev, stream,
            tpurt::prepare_transpose(device_of(dev, stream, call), a->tensor, out->tensor), call);
    });
}

} // extern "C"
