// SPDX-License-Identifier: MIT
// device.cpp - tpurt::Device: opening cards, reading counters, allocating buffers and submitting
// programs in recycled program buffers (DRM_IOCTL_TPU_SUBMIT).
#include "tpurt/device.hpp"

#include "device/device_discovery.hpp"
#include "device/device_state.hpp"
#include "tpurt/error.hpp"
#include "tpurt/executable.hpp"

#include <drm/tpu_accel.h>

#include <cstring>
#include <utility>

namespace tpurt {

namespace detail {

DeviceState &state_of(const Device &device) {
    return *device.state_;
}

} // namespace detail

Device::Device(std::shared_ptr<detail::DeviceFile> file, DeviceInfo info)
    : state_(std::make_shared<detail::DeviceState>()) {
    state_->file = file;
    state_->info = std::move(info);
    const int node = state_->info.numa_node;
    const auto allocate = [file, node](std::size_t bytes) { return Buffer(file, bytes, node); };
    state_->programs = std::make_shared<detail::BufferPool>(allocate, 64u << 20);
    state_->staging = std::make_shared<detail::BufferPool>(allocate, 256u << 20);
    state_->scratch = std::make_shared<detail::BufferPool>(allocate, 256u << 20);
}

std::vector<DeviceInfo> Device::list() {
    std::vector<DeviceInfo> devices;
    for (const std::string &path : detail::scan_accel_nodes().tpu_nodes)
        devices.push_back(detail::query_device_info(*detail::DeviceFile::open(path)));
    return devices;
}

Device Device::open(unsigned index) {
    const detail::AccelScan scan = detail::scan_accel_nodes();
    if (index >= scan.tpu_nodes.size())
        throw Error(ErrorCode::NoDevice, detail::no_device_message(scan, index));
    return open_path(scan.tpu_nodes[index]);
}

Device Device::open_path(const std::string &path) {
    auto file = detail::DeviceFile::open(path);
    if (!detail::is_tpu(*file))
        throw Error(ErrorCode::NoDevice, path + " is not driven by tpu.ko");
    DeviceInfo info = detail::query_device_info(*file);
    return Device(std::move(file), std::move(info));
}

const DeviceInfo &Device::info() const {
    return state_->info;
}

int Device::fd() const {
    return state_->file->fd();
}

DeviceCounters Device::counters() const {
    const auto read = [this](std::uint32_t param, const char *name) {
        struct drm_tpu_get_param arg = {};
        arg.param = param;
        state_->file->ioctl(DRM_IOCTL_TPU_GET_PARAM, &arg, name);
        return static_cast<std::uint64_t>(arg.value);
    };
    DeviceCounters counters;
    counters.cycles = read(DRM_TPU_PARAM_CNT_CYCLES, "GET_PARAM CNT_CYCLES");
    counters.macs = read(DRM_TPU_PARAM_CNT_MACS, "GET_PARAM CNT_MACS");
    counters.jobs_done = read(DRM_TPU_PARAM_CNT_JOBS_DONE, "GET_PARAM CNT_JOBS_DONE");
    counters.jobs_failed = read(DRM_TPU_PARAM_CNT_JOBS_FAILED, "GET_PARAM CNT_JOBS_FAILED");
    return counters;
}

Buffer Device::allocate(std::size_t bytes) {
    return Buffer(state_->file, bytes, state_->info.numa_node);
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

    struct drm_tpu_submit submit = {};
    submit.program_handle = program->buffer().handle();
    submit.program_size = static_cast<std::uint32_t>(bytes);
    submit.bo_count = static_cast<std::uint32_t>(handles.size());
    submit.bo_handles = reinterpret_cast<std::uintptr_t>(handles.data());
    state_->file->ioctl(DRM_IOCTL_TPU_SUBMIT, &submit, "DRM_IOCTL_TPU_SUBMIT");
    return Job(state_->file, submit.job_id, std::move(program));
}

RuntimeStats Device::runtime_stats() const {
    return {.executables_cached = state_->executables.size(),
            .compilations = state_->executables.compilations(),
            .program_buffers_created = state_->programs->created(),
            .staging_buffers_created = state_->staging->created(),
            .staging_bytes_cached = state_->staging->cached_bytes()};
}

} // namespace tpurt
