// SPDX-License-Identifier: MIT
// device.cpp - tpurt::Device: opening cards, reading counters, allocating buffers and submitting
// programs in recycled program buffers, all through the card's backend.
#include "tpurt/device.hpp"

#include "backend/drm_backend.hpp"
#include "device/device_discovery.hpp"
#include "device/device_state.hpp"
#include "tpurt/error.hpp"
#include "tpurt/executable.hpp"

#include <tpu_hw.h>

#include <cstring>
#include <utility>

namespace tpurt {

namespace detail {

DeviceState &state_of(const Device &device) {
    return *device.state_;
}

} // namespace detail

Device::Device(std::shared_ptr<detail::Backend> backend, DeviceInfo info)
    : state_(std::make_shared<detail::DeviceState>()) {
    state_->backend = backend;
    state_->info = std::move(info);
    const int node = state_->info.numa_node;
    const auto allocate = [backend, node](std::size_t bytes) {
        return Buffer(backend, bytes, node);
    };
    state_->programs = std::make_shared<detail::BufferPool>(allocate, 64u << 20);
    state_->staging = std::make_shared<detail::BufferPool>(allocate, 256u << 20);
    state_->scratch = std::make_shared<detail::BufferPool>(allocate, 256u << 20);
}

std::vector<DeviceInfo> Device::list() {
    std::vector<DeviceInfo> devices;
    for (const std::string &path : detail::scan_accel_nodes().tpu_nodes)
        devices.push_back(detail::DrmBackend::open(path)->query_info());
    return devices;
}

Device Device::open(unsigned index) {
    const detail::AccelScan scan = detail::scan_accel_nodes();
    if (index >= scan.tpu_nodes.size())
        throw Error(ErrorCode::NoDevice, detail::no_device_message(scan, index));
    return open_path(scan.tpu_nodes[index]);
}

Device Device::open_path(const std::string &path) {
    auto backend = detail::DrmBackend::open(path);
    if (!backend->is_tpu())
        throw Error(ErrorCode::NoDevice, path + " is not driven by tpu.ko");
    DeviceInfo info = backend->query_info();
    return Device(std::move(backend), std::move(info));
}

const DeviceInfo &Device::info() const {
    return state_->info;
}

int Device::fd() const {
    return state_->backend->fd();
}

DeviceCounters Device::counters() const {
    return state_->backend->counters();
}

Buffer Device::allocate(std::size_t bytes) {
    return Buffer(state_->backend, bytes, state_->info.numa_node);
}

Buffer Device::allocate_copy(const void *data, std::size_t bytes) {
    Buffer buffer = allocate(bytes);
    std::memcpy(buffer.data(), data, bytes);
    return buffer;
}

Job Device::submit(const Program &program, std::span<const Buffer *const> buffers) {
    if (program.insns.empty() || program.size_bytes() > TPU_PROGRAM_MAX_BYTES)
        throw Error(ErrorCode::InvalidArgument,
                    "a program holds 1.." + std::to_string(max_program_insns) +
                        " instructions, not " + std::to_string(program.insns.size()));
    auto code = std::make_shared<detail::PooledBuffer>(
        state_->programs->acquire_copy(program.insns.data(), program.size_bytes()));
    return submit_program(std::move(code), program.size_bytes(), buffers);
}

Job Device::launch(const Executable &executable, std::size_t index,
                   std::span<const std::uint64_t> bases, std::span<const Buffer *const> buffers) {
    const std::size_t bytes = executable.program_bytes(index);
    auto code = std::make_shared<detail::PooledBuffer>(state_->programs->acquire(bytes));
    executable.patch(index, bases,
                     {static_cast<union tpu_insn *>(code->buffer().data()), bytes / TPU_INSN_SIZE});
    return submit_program(std::move(code), bytes, buffers);
}

Job Device::submit_program(std::shared_ptr<detail::PooledBuffer> program, std::size_t bytes,
                           std::span<const Buffer *const> buffers) {
    std::vector<std::uint32_t> handles;
    handles.reserve(buffers.size());
    for (const Buffer *buffer : buffers) {
        if (!buffer || buffer->handle() == 0)
            throw Error(ErrorCode::InvalidArgument,
                        "a job's buffer is missing or was moved from or released");
        handles.push_back(buffer->handle());
    }

    detail::SubmitRequest request;
    request.program = program->buffer().handle();
    request.program_bytes = static_cast<std::uint32_t>(bytes);
    request.buffers = handles;
    std::uint64_t job_id = 0;
    if (const int err = state_->backend->submit(request, job_id))
        throw Error(ErrorCode::SystemCall,
                    "DRM_IOCTL_TPU_SUBMIT on " + state_->backend->name() +
                        " failed: " + std::strerror(err),
                    err);
    return Job(state_->backend, job_id, std::move(program));
}

void Device::set_link(std::uint32_t port, bool up) {
    const std::string why = state_->backend->set_link(port, up);
    if (!why.empty())
        throw Error(ErrorCode::InvalidArgument, "link " + std::string(up ? "up" : "down") +
                                                    " on port " + std::to_string(port) + " of " +
                                                    state_->backend->name() + ": " + why);
}

bool Device::abort_running_job() {
    return state_->backend->abort_running();
}

RuntimeStats Device::runtime_stats() const {
    return {.executables_cached = state_->executables.size(),
            .compilations = state_->executables.compilations(),
            .program_buffers_created = state_->programs->created(),
            .staging_buffers_created = state_->staging->created(),
            .staging_bytes_cached = state_->staging->cached_bytes()};
}

} // namespace tpurt
