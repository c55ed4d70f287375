// SPDX-License-Identifier: MIT
// c_api.cpp - the C API of tpurt.h on top of the C++ runtime: exceptions become TPURT_E_* codes
// and a per-thread error message.
#include "tpurt/tpurt.h"

#include "tpurt/device.hpp"
#include "tpurt/error.hpp"
#include "tpurt/matmul.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

struct tpurt_device {
    tpurt::Device device;
};

namespace {

thread_local std::string last_error;

int status_of(tpurt::ErrorCode code) {
    switch (code) {
    case tpurt::ErrorCode::NoDevice:
        return TPURT_E_NO_DEVICE;
    case tpurt::ErrorCode::DeviceAccess:
        return TPURT_E_DEVICE_ACCESS;
    case tpurt::ErrorCode::SystemCall:
        return TPURT_E_SYSTEM;
    case tpurt::ErrorCode::InvalidArgument:
        return TPURT_E_INVALID;
    case tpurt::ErrorCode::Unsupported:
        return TPURT_E_UNSUPPORTED;
    case tpurt::ErrorCode::JobFailed:
        return TPURT_E_JOB_FAILED;
    case tpurt::ErrorCode::Timeout:
        return TPURT_E_TIMEOUT;
    }
    return TPURT_E_INTERNAL;
}

int fail(int status, const char *message) {
    last_error = message;
    return status;
}

// Runs `body`, mapping exceptions to status codes and recording their message.
template <typename Body> int guarded(Body &&body) {
    try {
        last_error.clear();
        return body();
    } catch (const tpurt::Error &error) {
        return fail(status_of(error.code()), error.what());
    } catch (const std::bad_alloc &) {
        return fail(TPURT_E_NO_MEMORY, "out of host memory");
    } catch (const std::exception &error) {
        return fail(TPURT_E_INTERNAL, error.what());
    }
}

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

int tpurt_get_info(const tpurt_device *dev, struct tpurt_device_info *info) {
    if (!dev || !info)
        return fail(TPURT_E_INVALID, "tpurt_get_info: NULL argument");
    const tpurt::DeviceInfo &src = dev->device.info();
    *info = {};
    copy_text(info->path, sizeof(info->path), src.path);
    copy_text(info->pci_slot, sizeof(info->pci_slot), src.pci_slot);
    info->numa_node = src.numa_node;
    info->spec_version = src.spec_version;
    info->caps = src.caps;
    info->clock_mhz = src.clock_mhz;
    info->mxu_rows = src.limits.mxu_rows;
    info->mxu_cols = src.limits.mxu_cols;
    info->ub_bytes = src.limits.ub_bytes;
    info->acc_bytes = src.limits.acc_bytes;
    return TPURT_OK;
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
    return last_error.c_str();
}

} // extern "C"
