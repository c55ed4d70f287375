// SPDX-License-Identifier: MIT
// device_discovery.hpp - internal: finding TPU nodes under /dev/accel and reading a card's
// properties (GET_PARAM) and PCI placement (sysfs).
#pragma once

#include "device/device_file.hpp"
#include "tpurt/device_info.hpp"

#include <string>
#include <vector>

namespace tpurt::detail {

inline constexpr const char *accel_dir = "/dev/accel";
inline constexpr const char *tpu_driver_name = "tpu";

struct AccelScan {
    std::vector<std::string> tpu_nodes;  // nodes whose DRM driver is "tpu", by minor
    std::vector<std::string> unreadable; // "path: reason" for nodes that could not be opened
    bool accel_dir_exists = false;
};

AccelScan scan_accel_nodes();
// Whether the open DRM file is driven by tpu.ko.
bool is_tpu(const DeviceFile &file);
// Queries the card behind an open TPU node.
DeviceInfo query_device_info(const DeviceFile &file);
// The message for "no TPU at index", listing what the scan saw.
std::string no_device_message(const AccelScan &scan, unsigned index);

} // namespace tpurt::detail
