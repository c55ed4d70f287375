// SPDX-License-Identifier: MIT
// c_api.cpp - the C API of tpurt.h on top of the C++ runtime: errors (exceptions become
// TPURT_E_* codes and a per-thread message), devices and their counters, host-array matmuls.
#include "c_api/c_api_internal.hpp"

#include "tpurt/device.hpp"
#include "tpurt/error.hpp"
#include "tpurt/ops/matmul.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

using tpurt::c_api::fail;
using tpurt::c_api::guarded;

namespace tpurt::c_api {

namespace {
thread_local std::string last_error;
} // namespace

int status_of(ErrorCode code) {
    switch (code) {
    case ErrorCode::NoDevice:
        return TPURT_E_NO_DEVICE;
    case ErrorCode::DeviceAccess:
        return TPURT_E_DEVICE_ACCESS;
    case ErrorCode::SystemCall:
        return TPURT_E_SYSTEM;
    case ErrorCode::InvalidArgument:
        return TPURT_E_INVALID;
    case ErrorCode::Unsupported:
        return TPURT_E_UNSUPPORTED;
    case ErrorCode::JobFailed:
        return TPURT_E_JOB_FAILED;
    case ErrorCode::Timeout:
        return TPURT_E_TIMEOUT;
    }
    return TPURT_E_INTERNAL;
}

int fail(int status, const std::string &message) {
    last_error = message;
    return status;
}

void clear_error() {
    last_error.clear();
}

const char *last_error_text() {
    return last_error.c_str();
}

} // namespace tpurt::c_api

namespace {

// First versions of the versioned structs: the sizes in TPURT_API_VERSION 2.
constexpr std::size_t info_v1 = sizeof(tpurt_device_info);
constexpr std::size_t counters_v1 = sizeof(tpurt_counters);

void copy_text(char *dst, std::size_t size, const std::string &src) {
    const std::size_t len = std::min(size - 1, src.size());
    std::memcpy(dst, src.data(), len);
    dst[len] = '\0';
}

bool valid_matmul_args(const tpurt_device *dev, const void *a, const void *b, const void *c) {
    return dev && a && b && c;
}

} // namespace

extern "C" {

int tpurt_device_count(void) {
    return guarded([] { return static_cast<int>(tpurt::Device::list().size()); });
}

int tpurt_open(unsigned index, tpurt_device **out) {
    if (!out)
        return fail(TPURT_E_INVALID, "tpurt_open: out is NULL");
    return guarded([&] {
        *out = new tpurt_device{tpurt::Device::open(index)};
        return TPURT_OK;
    });
}

void tpurt_close(tpurt_device *dev) {
    delete dev;
}

namespace {

tpurt_device_info info_of(const tpurt::DeviceInfo &src) {
    tpurt_device_info info = {};
    copy_text(info.path, sizeof(info.path), src.path);
    copy_text(info.pci_slot, sizeof(info.pci_slot), src.pci_slot);
    info.numa_node = src.numa_node;
    info.spec_version = src.spec_version;
    info.caps = src.caps;
    info.clock_mhz = src.clock_mhz;
    info.mxu_rows = src.limits.mxu_rows;
    info.mxu_cols = src.limits.mxu_cols;
    info.ub_bytes = src.limits.ub_bytes;
    info.acc_bytes = src.limits.acc_bytes;
    info.minor = src.minor;
    return info;
}

} // namespace

uint32_t tpurt_api_version(void) {
    return TPURT_API_VERSION;
}

int tpurt_device_list_info(unsigned index, struct tpurt_device_info *info) {
    return guarded([&]() -> int {
        const std::vector<tpurt::DeviceInfo> devices = tpurt::Device::list();
        if (index >= devices.size())
            return fail(TPURT_E_NO_DEVICE, "tpurt_device_list_info: there are " +
                                               std::to_string(devices.size()) +
                                               " cards, no index " + std::to_string(index));
        tpurt::c_api::write_versioned(info, info_of(devices[index]), info_v1,
                                      "tpurt_device_list_info");
        return TPURT_OK;
    });
}

int tpurt_get_info(const tpurt_device *dev, struct tpurt_device_info *info) {
    return guarded([&] {
        tpurt::c_api::require(dev, "tpurt_get_info", "dev");
        tpurt::c_api::write_versioned(info, info_of(dev->device.info()), info_v1, "tpurt_get_info");
        return TPURT_OK;
    });
}

int tpurt_get_counters(const tpurt_device *dev, struct tpurt_counters *counters) {
    return guarded([&] {
        tpurt::c_api::require(dev, "tpurt_get_counters", "dev");
        const tpurt::DeviceCounters src = dev->device.counters();
        tpurt_counters value = {};
        value.cycles = src.cycles;
        value.macs = src.macs;
        value.jobs_done = src.jobs_done;
        value.jobs_failed = src.jobs_failed;
        tpurt::c_api::write_versioned(counters, value, counters_v1, "tpurt_get_counters");
        return TPURT_OK;
    });
}

int tpurt_matmul_int8(tpurt_device *dev, const int8_t *a, const int8_t *b, int32_t *c, uint32_t m,
                      uint32_t k, uint32_t n) {
    if (!valid_matmul_args(dev, a, b, c))
        return fail(TPURT_E_INVALID, "tpurt_matmul_int8: NULL argument");
    return guarded([&] {
        tpurt::matmul(dev->device, std::span<const std::int8_t>(a, std::size_t{m} * k),
                      std::span<const std::int8_t>(b, std::size_t{k} * n),
                      std::span<std::int32_t>(c, std::size_t{m} * n), m, k, n);
        return TPURT_OK;
    });
}

int tpurt_matmul_bf16(tpurt_device *dev, const uint16_t *a, const uint16_t *b, float *c, uint32_t m,
                      uint32_t k, uint32_t n) {
    if (!valid_matmul_args(dev, a, b, c))
        return fail(TPURT_E_INVALID, "tpurt_matmul_bf16: NULL argument");
    static_assert(sizeof(tpurt::Bf16) == sizeof(uint16_t));
    return guarded([&] {
        const auto *a16 = reinterpret_cast<const tpurt::Bf16 *>(a);
        const auto *b16 = reinterpret_cast<const tpurt::Bf16 *>(b);
        tpurt::matmul(dev->device, std::span<const tpurt::Bf16>(a16, std::size_t{m} * k),
                      std::span<const tpurt::Bf16>(b16, std::size_t{k} * n),
                      std::span<float>(c, std::size_t{m} * n), m, k, n);
        return TPURT_OK;
    });
}

int tpurt_matmul_fp32(tpurt_device *dev, const float *a, const float *b, float *c, uint32_t m,
                      uint32_t k, uint32_t n) {
    if (!valid_matmul_args(dev, a, b, c))
        return fail(TPURT_E_INVALID, "tpurt_matmul_fp32: NULL argument");
    return guarded([&] {
        tpurt::matmul(dev->device, std::span<const float>(a, std::size_t{m} * k),
                      std::span<const float>(b, std::size_t{k} * n),
                      std::span<float>(c, std::size_t{m} * n), m, k, n);
        return TPURT_OK;
    });
}

const char *tpurt_last_error(void) {
    return tpurt::c_api::last_error_text();
}

} // extern "C"
