// SPDX-License-Identifier: MIT
// users.hpp - guest tests that act as other users (root forks a child that switches uid):
// running code as a user, letting users reach the card's node while a test lives, and the
// check that a user can still open the card and run a job while another one holds resources.
#pragma once

#include <catch2/catch.hpp>

#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace users {

constexpr const char *kNode = "/dev/accel/accel0";

// Runs `body` in a child process as user (and group) `uid`; returns its exit status (255: it
// threw or could not switch user, -1: it did not exit).
template <class Body> int as_user(uid_t uid, Body body) {
    const pid_t child = fork();
    if (child == 0) {
        int status = 255;
        try {
            if (setgid(uid) == 0 && setuid(uid) == 0)
                status = body();
        } catch (...) {
        }
        _exit(status);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

// Lets users other than root open the card (the VM's initramfs root is 0700) while it lives.
class OpenToUsers {
  public:
    OpenToUsers() {
        REQUIRE(stat("/", &root_) == 0);
        REQUIRE(chmod("/", 0755) == 0);
        REQUIRE(chmod(kNode, 0666) == 0);
    }
    ~OpenToUsers() {
        chmod(kNode, 0600);
        chmod("/", root_.st_mode & 07777);
    }
    OpenToUsers(const OpenToUsers &) = delete;
    OpenToUsers &operator=(const OpenToUsers &) = delete;

  private:
    struct stat root_ = {};
};

// 0 if user `uid` opens the card and runs an int8 matmul that equals the reference.
inline int run_matmul_as(uid_t uid) {
    return as_user(uid, [] {
        tpurt::Device device = tpurt::Device::open(0);
        const auto a = tpurt::random_int8(32 * 32, 5);
        std::vector<std::int32_t> got(32 * 32), want(32 * 32);
        tpurt::matmul(device, a, a, got, 32, 32, 32);
        tpurt::reference_matmul(a, a, want, 32, 32, 32);
        return got == want ? 0 : 1;
    });
}

// The errno of user `uid`'s open() of the card, 0 if it opened.
inline int open_errno_as(uid_t uid) {
    return as_user(uid, [] {
        const int fd = open(kNode, O_RDWR | O_CLOEXEC);
        return fd >= 0 ? 0 : errno;
    });
}

} // namespace users
