// SPDX-License-Identifier: MIT
// device_query.cpp - reads a card's properties through DRM_IOCTL_TPU_GET_PARAM and its PCI slot
// and NUMA node from sysfs (/sys/class/accel/accelN/device).
#include "device/device_discovery.hpp"

#include <drm/tpu_accel.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace tpurt::detail {

namespace {

std::uint64_t get_param(const DeviceFile &file, std::uint32_t param, const char *name) {
    struct drm_tpu_get_param arg = {};
    arg.param = param;
    file.ioctl(DRM_IOCTL_TPU_GET_PARAM, &arg, name);
    return arg.value;
}

std::uint32_t get_param32(const DeviceFile &file, std::uint32_t param, const char *name) {
    return static_cast<std::uint32_t>(get_param(file, param, name));
}

unsigned minor_of(const std::string &path) {
    const std::string name = std::filesystem::path(path).filename().string();
    const std::size_t digits = name.find_first_of("0123456789");
    if (digits == std::string::npos)
        return 0;
    return static_cast<unsigned>(std::strtoul(name.c_str() + digits, nullptr, 10));
}

void read_sysfs(DeviceInfo &info) {
    const std::filesystem::path device =
        "/sys/class/accel/accel" + std::to_string(info.minor) + "/device";
    std::error_code ec;
    const std::filesystem::path pci = std::filesystem::canonical(device, ec);
    if (ec)
        return;
    info.pci_slot = pci.filename().string();
    std::ifstream numa(pci / "numa_node");
    int node = -1;
    if (numa >> node)
        info.numa_node = node;
}

} // namespace

DeviceInfo query_device_info(const DeviceFile &file) {
    DeviceInfo info;
    info.path = file.path();
    info.minor = minor_of(file.path());
    info.device_id = get_param32(file, DRM_TPU_PARAM_DEVICE_ID, "GET_PARAM DEVICE_ID");
    info.spec_version = get_param32(file, DRM_TPU_PARAM_SPEC_VERSION, "GET_PARAM SPEC_VERSION");
    info.caps = get_param32(file, DRM_TPU_PARAM_CAPS, "GET_PARAM CAPS");
    info.clock_mhz = get_param32(file, DRM_TPU_PARAM_CLOCK_MHZ, "GET_PARAM CLOCK_MHZ");
    info.limits.mxu_rows = get_param32(file, DRM_TPU_PARAM_MXU_ROWS, "GET_PARAM MXU_ROWS");
    info.limits.mxu_cols = get_param32(file, DRM_TPU_PARAM_MXU_COLS, "GET_PARAM MXU_COLS");
    info.limits.ub_bytes = get_param32(file, DRM_TPU_PARAM_UB_SIZE, "GET_PARAM UB_SIZE");
    info.limits.acc_bytes = get_param32(file, DRM_TPU_PARAM_ACC_SIZE, "GET_PARAM ACC_SIZE");
    info.va_start = get_param(file, DRM_TPU_PARAM_VA_START, "GET_PARAM VA_START");
    info.va_size = get_param(file, DRM_TPU_PARAM_VA_SIZE, "GET_PARAM VA_SIZE");
    read_sysfs(info);
    return info;
}

} // namespace tpurt::detail
