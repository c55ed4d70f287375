// SPDX-License-Identifier: MIT
// device_file.cpp - opening a device node and issuing ioctls on it.
#include "device/device_file.hpp"

#include "tpurt/error.hpp"

#include <xf86drm.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace tpurt::detail {

std::shared_ptr<DeviceFile> DeviceFile::open(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        std::string hint;
        if (err == EACCES || err == EPERM)
            hint = " — run as root or add your user to the group owning " + path;
        throw Error(ErrorCode::DeviceAccess,
                    "cannot open " + path + ": " + std::strerror(err) + hint, err);
    }
    return std::shared_ptr<DeviceFile>(new DeviceFile(fd, path));
}

DeviceFile::~DeviceFile() {
    ::close(fd_);
}

int DeviceFile::try_ioctl(unsigned long request, void *arg) const {
    return drmIoctl(fd_, request, arg) == 0 ? 0 : errno;
}

void DeviceFile::ioctl(unsigned long request, void *arg, const char *what) const {
    const int err = try_ioctl(request, arg);
    if (err != 0)
        throw Error(ErrorCode::SystemCall,
                    std::string(what) + " on " + path_ + " failed: " + std::strerror(err), err);
}

} // namespace tpurt::detail
