// SPDX-License-Identifier: MIT
// device_file.hpp - internal: an open /dev/accel/accelN file shared by a Device and every
// Buffer and Job made from it, and the ioctl wrapper that turns failures into tpurt::Error.
#pragma once

#include <memory>
#include <string>
#include <utility>

namespace tpurt::detail {

class DeviceFile {
  public:
    // Opens `path` read-write; throws Error(DeviceAccess) with the reason if that fails.
    static std::shared_ptr<DeviceFile> open(const std::string &path);
    ~DeviceFile();
    DeviceFile(const DeviceFile &) = delete;
    DeviceFile &operator=(const DeviceFile &) = delete;

    int fd() const { return fd_; }
    const std::string &path() const { return path_; }

    // Issues an ioctl (restarted on EINTR); returns 0 or the errno it failed with.
    int try_ioctl(unsigned long request, void *arg) const;
    // Issues an ioctl; throws Error(SystemCall) naming `what` and the errno on failure.
    void ioctl(unsigned long request, void *arg, const char *what) const;

  private:
    DeviceFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

    int fd_;
    std::string path_;
};

} // namespace tpurt::detail
