// SPDX-License-Identifier: MIT
// file_write.cpp - write, fsync, rename, fsync the directory (the order SQLite and PostgreSQL
// use for files that must survive a crash).
#include "tpu_data/file_write.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace tpu_data {

namespace {

[[noreturn]] void fail(const std::string &file, const std::string &step, int err) {
    throw std::runtime_error(file + ": " + step + ": " + std::strerror(err));
}

// Syncs the directory holding `path`, so that the rename itself is on disk.
void sync_directory_of(const std::string &path) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    const std::string dir = parent.empty() ? std::string(".") : parent.string();
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        fail(dir, "cannot open the directory to sync it", errno);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0 && err != EINVAL) // some file systems cannot sync a directory
        fail(dir, "cannot sync the directory", err);
}

} // namespace

void write_file_atomically(const std::string &path, const void *data, std::size_t size) {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail(tmp, "cannot create", errno);
    const char *p = static_cast<const char *>(data);
    std::size_t left = size;
    const char *step = nullptr;
    while (left > 0 && step == nullptr) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno != EINTR)
            step = "write failed";
        else if (n > 0) {
            p += n;
            left -= std::size_t(n);
        }
    }
    if (step == nullptr && ::fsync(fd) != 0)
        step = "cannot sync to disk";
    int err = errno;
    if (::close(fd) != 0 && step == nullptr) {
        step = "write failed";
        err = errno;
    }
    if (step != nullptr) {
        std::remove(tmp.c_str());
        fail(tmp, step, err);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        err = errno;
        std::remove(tmp.c_str());
        fail(path, "cannot put the new file in place", err);
    }
    sync_directory_of(path);
}

} // namespace tpu_data
