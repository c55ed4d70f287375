// SPDX-License-Identifier: MIT
// device.cpp - tpurt::Device: opening cards, reading counters, allocating buffers and submitting
// programs (DRM_IOCTL_TPU_SUBMIT).
#include "tpurt/device.hpp"

#include "device_discovery.hpp"
#include "tpurt/error.hpp"

#include <drm/tpu_accel.h>

#include <cstring>
#include <utility>

namespace tpurt {

Device::Device(std::shared_ptr<detail::DeviceFile> file, DeviceInfo info)
    : file_(std::move(file)), info_(std::move(info)) {}

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

int Device::fd() const {
    return file_->fd();
}

DeviceCounters Device::counters() const {
    const auto read = [this](std::uint32_t param, const char *name) {
        struct drm_tpu_get_param arg = {};
        arg.param = param;
        file_->ioctl(DRM_IOCTL_TPU_GET_PARAM, &arg, name);
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
    return Buffer(file_, bytes, info_.numa_node);
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
    Buffer code = allocate_copy(program.insns.data(), program.size_bytes());

    std::vector<std::uint32_t> handles;
    handles.reserve(buffers.size());
    for (const Buffer *buffer : buffers)
        handles.push_back(buffer->handle());

    struct drm_tpu_submit submit = {};
    submit.program_handle = code.handle();
    submit.program_size = static_cast<std::uint32_t>(program.size_bytes());
    submit.bo_count = static_cast<std::uint32_t>(handles.size());
    submit.bo_handles = reinterpret_cast<std::uintptr_t>(handles.data());
    file_->ioctl(DRM_IOCTL_TPU_SUBMIT, &submit, "DRM_IOCTL_TPU_SUBMIT");
    return Job(file_, submit.job_id, std::move(code));
}

} // namespace tpurt
