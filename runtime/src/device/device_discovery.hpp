// SPDX-License-Identifier: MIT
// device_discovery.hpp - internal: finding TPU nodes under /dev/accel.
#pragma once

#include <string>
#include <vector>

namespace tpurt::detail {

inline constexpr const char *accel_dir = "/dev/accel";

struct AccelScan {
    std::vector<std::string> tpu_nodes;  // nodes whose DRM driver is "tpu", by minor
    std::vector<std::string> unreadable; // "path: reason" for nodes that could not be opened
    bool accel_dir_exists = false;
};

AccelScan scan_accel_nodes();
// The message for "no TPU at index", listing what the scan saw.
std::string no_device_message(const AccelScan &scan, unsigned index);

} // namespace tpurt::detail
