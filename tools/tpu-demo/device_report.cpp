// SPDX-License-Identifier: MIT
// device_report.cpp - the device and counter sections of tpu-demo's report.
#include "device_report.hpp"

#include <cstdio>
#include <string>

namespace {

std::string bytes_text(std::uint64_t bytes) {
    char text[32];
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        std::snprintf(text, sizeof(text), "%llu MiB", static_cast<unsigned long long>(bytes >> 20));
    else if (bytes >= 1024 && bytes % 1024 == 0)
        std::snprintf(text, sizeof(text), "%llu KiB", static_cast<unsigned long long>(bytes >> 10));
    else
        std::snprintf(text, sizeof(text), "%llu bytes", static_cast<unsigned long long>(bytes));
    return text;
}

} // namespace

void print_device_report(unsigned index, const tpurt::DeviceInfo &info) {
    const std::string numa = info.numa_node >= 0 ? std::to_string(info.numa_node) : "none";
    std::printf("TPU %u: %s (PCI %s, device id 0x%04x, NUMA node %s)\n", index, info.path.c_str(),
                info.pci_slot.empty() ? "?" : info.pci_slot.c_str(), info.device_id, numa.c_str());
    std::printf("  spec %u.%u, %ux%u systolic array at %u MHz, types:%s%s%s%s\n", info.spec_major(),
                info.spec_minor(), info.limits.mxu_rows, info.limits.mxu_cols, info.clock_mhz,
                info.supports(tpurt::DType::Int8) ? " int8" : "",
                info.supports(tpurt::DType::Bf16) ? " bf16" : "",
                info.supports(tpurt::DType::Fp32) ? " fp32" : "",
                info.has_vector_unit() ? ", vector unit" : "");
    std::printf("  unified buffer %s, accumulators %s, device address space %s at 0x%llx\n",
                bytes_text(info.limits.ub_bytes).c_str(), bytes_text(info.limits.acc_bytes).c_str(),
                bytes_text(info.va_size).c_str(), static_cast<unsigned long long>(info.va_start));
}

void print_counters(const tpurt::DeviceCounters &counters) {
    std::printf("\ncard counters: %llu jobs done, %llu failed, %llu cycles, %llu MACs\n",
                static_cast<unsigned long long>(counters.jobs_done),
                static_cast<unsigned long long>(counters.jobs_failed),
                static_cast<unsigned long long>(counters.cycles),
                static_cast<unsigned long long>(counters.macs));
}
