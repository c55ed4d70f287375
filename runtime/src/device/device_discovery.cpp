// SPDX-License-Identifier: MIT
// device_discovery.cpp - scans /dev/accel for nodes driven by tpu.ko and explains what it found
// when the requested card is not there.
#include "device/device_discovery.hpp"

#include "backend/drm_backend.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace tpurt::detail {

namespace {

// N of ".../accelN", or -1 for names that are not accel nodes.
long accel_minor(const std::string &name) {
    constexpr std::string_view prefix = "accel";
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
        return -1;
    char *end = nullptr;
    const long minor = std::strtol(name.c_str() + prefix.size(), &end, 10);
    return *end == '\0' ? minor : -1;
}

} // namespace

AccelScan scan_accel_nodes() {
    AccelScan scan;
    std::error_code ec;
    std::vector<std::pair<long, std::string>> nodes;
    for (const auto &entry : std::filesystem::directory_iterator(accel_dir, ec)) {
        const long minor = accel_minor(entry.path().filename().string());
        if (minor >= 0)
            nodes.emplace_back(minor, entry.path().string());
    }
    scan.accel_dir_exists = !ec;
    std::sort(nodes.begin(), nodes.end());
    for (const auto &[minor, path] : nodes) {
        try {
            if (DrmBackend::open(path)->is_tpu())
                scan.tpu_nodes.push_back(path);
        } catch (const Error &error) {
            scan.unreadable.push_back(error.what());
        }
    }
    return scan;
}

std::string no_device_message(const AccelScan &scan, unsigned index) {
    std::string message;
    if (!scan.tpu_nodes.empty())
        message = "no TPU " + std::to_string(index) + ": only " +
                  std::to_string(scan.tpu_nodes.size()) + " TPU device(s) found under " + accel_dir;
    else if (!scan.accel_dir_exists)
        message = std::string("no TPU found: ") + accel_dir +
                  " does not exist — is tpu.ko loaded (modprobe tpu / insmod driver/tpu.ko)?";
    else
        message = std::string("no TPU found: ") + accel_dir +
                  " has no tpu device — is tpu.ko loaded (modprobe tpu / insmod "
                  "driver/tpu.ko)?";
    for (const std::string &reason : scan.unreadable)
        message += "; " + reason;
    return message;
}

} // namespace tpurt::detail
