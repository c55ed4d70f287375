// SPDX-License-Identifier: MIT
// test_limits.cpp - guest test of the driver's per-user, per-file and per-device limits (root:
// it switches users in forked children): one user's 300 opens leave another user able to
// open the card and run a job ([contexts], with the default limits); pinned memory and jobs
// in flight are bounded per file (EDQUOT) and per device (ENOSPC), page tables included in
// the pinned memory, and freeing or finishing gives the room back ([memory], [jobs]: the VM
// loads tpu.ko with small limits for them). A user who keeps the contexts of closed files
// alive through exported buffers (PRIME) is held to the same limit ([contexts][prime]).
#include "guest_programs.hpp"
#include "uapi_helpers.hpp"
#include "users.hpp"

#include <catch2/catch.hpp>

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/tpurt.hpp>

#include <xf86drm.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using users::kNode;

// SUBMIT of `program` (in `code`) on `fd`: the errno, 0 on success (the id in `job_id`).
int submit(int fd, const tpurt::Buffer &code, std::size_t bytes, std::uint64_t &job_id) {
    struct drm_tpu_submit args = {};
    args.program_handle = code.handle();
    args.program_size = static_cast<std::uint32_t>(bytes);
    const int err = uapi::ioctl_errno(fd, DRM_IOCTL_TPU_SUBMIT, &args);
    job_id = args.job_id;
    return err;
}

int wait(int fd, std::uint64_t job_id) {
    struct drm_tpu_wait args = {};
    args.job_id = job_id;
    args.timeout_ns = 60'000'000'000;
    return uapi::ioctl_errno(fd, DRM_IOCTL_TPU_WAIT, &args) ? -1 : int(args.status);
}

} // namespace

TEST_CASE("300 opens from one user leave a second user able to use the card", "[contexts]") {
    users::OpenToUsers open_to_users;
    // User 1000 opens the card 300 times and keeps every file open; exit status: the errno
    // of the first failed open (0: all 300 worked), then it waits until user 1001 is done.
    int go[2];
    REQUIRE(pipe(go) == 0);
    int report[2];
    REQUIRE(pipe(report) == 0);
    const pid_t hog = fork();
    REQUIRE(hog >= 0);
    if (hog == 0) {
        close(go[1]);
        close(report[0]);
        unsigned char first_errno = 0;
        if (setgid(1000) == 0 && setuid(1000) == 0) {
            std::vector<int> fds;
            for (int i = 0; i < 300 && !first_errno; i++) {
                const int fd = open(kNode, O_RDWR | O_CLOEXEC);
                if (fd < 0)
                    first_errno = static_cast<unsigned char>(errno);
                else
                    fds.push_back(fd);
            }
        } else {
            first_errno = 255;
        }
        if (write(report[1], &first_errno, 1) != 1)
            _exit(1);
        char byte;
        _exit(read(go[0], &byte, 1) == 1 ? 0 : 1);
    }
    close(go[0]);
    close(report[1]);
    unsigned char hog_errno = 255;
    REQUIRE(read(report[0], &hog_errno, 1) == 1);
    INFO("the first open of user 1000 that failed: errno " << int(hog_errno));
    CHECK(hog_errno == EDQUOT);

    // With user 1000's files still open, user 1001 opens the card and runs a matmul.
    CHECK(users::run_matmul_as(1001) == 0);
    REQUIRE(write(go[1], "x", 1) == 1);
    int status = 0;
    REQUIRE(waitpid(hog, &status, 0) == hog);
    CHECK(WIFEXITED(status));
    // Its files closed, user 1000 can open the card again.
    CHECK(users::open_errno_as(1000) == 0);
}

// Issue 24, item 3: a buffer exported as a dma-buf keeps its file's context (and its context
// id) after the file is closed. The per-user limit counted open files, so one user's loop of
// open, BO_CREATE, PRIME_HANDLE_TO_FD, close took every context id of the card: every later
// open, by any user, failed with ENOSPC.
TEST_CASE("contexts kept alive by exported buffers count against their user", "[contexts][prime]") {
    users::OpenToUsers open_to_users;
    // User 1000 opens the card, exports a buffer, closes the card, 300 times, keeping the
    // dma-bufs; it reports the errno that stopped it (0: none did) and the step, then waits
    // until user 1001 is done.
    int go[2];
    REQUIRE(pipe(go) == 0);
    int report[2];
    REQUIRE(pipe(report) == 0);
    const pid_t hog = fork();
    REQUIRE(hog >= 0);
    if (hog == 0) {
        close(go[1]);
        close(report[0]);
        unsigned char result[3] = {0, 0, 0}; // errno, step (1 open, 2 create, 3 export), files
        if (setgid(1000) == 0 && setuid(1000) == 0) {
            std::vector<int> dmabufs;
            for (int i = 0; i < 300 && !result[0]; i++) {
                const int fd = open(kNode, O_RDWR | O_CLOEXEC);
                if (fd < 0) {
                    result[0] = static_cast<unsigned char>(errno);
                    result[1] = 1;
                    break;
                }
                std::uint32_t handle = 0;
                struct drm_prime_handle prime = {};
                if ((result[0] = static_cast<unsigned char>(uapi::create_bo(fd, 4096, handle)))) {
                    result[1] = 2;
                } else {
                    prime.handle = handle;
                    prime.flags = DRM_CLOEXEC | DRM_RDWR;
                    result[0] = static_cast<unsigned char>(
                        uapi::ioctl_errno(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime));
                    result[1] = result[0] ? 3 : 0;
                }
                if (!result[0])
                    dmabufs.push_back(prime.fd);
                close(fd);
            }
            result[2] = static_cast<unsigned char>(dmabufs.size() > 255 ? 255 : dmabufs.size());
        } else {
            result[0] = 255;
        }
        if (write(report[1], result, sizeof(result)) != sizeof(result))
            _exit(1);
        char byte;
        _exit(read(go[0], &byte, 1) == 1 ? 0 : 1);
    }
    close(go[0]);
    close(report[1]);
    unsigned char result[3] = {255, 0, 0};
    REQUIRE(read(report[0], result, sizeof(result)) == sizeof(result));
    INFO("user 1000 kept " << int(result[2]) << " buffers, then errno " << int(result[0])
                           << " at step " << int(result[1]) << " (1 open, 2 create, 3 export)");
    CHECK(result[0] == EDQUOT);
    CHECK(result[1] == 1);

    // With user 1000's buffers (and so its contexts) alive, user 1001 opens the card and runs
    // a matmul.
    CHECK(users::run_matmul_as(1001) == 0);
    REQUIRE(write(go[1], "x", 1) == 1);
    int status = 0;
    REQUIRE(waitpid(hog, &status, 0) == hog);
    CHECK(WIFEXITED(status));
    // Its buffers freed, user 1000 can open the card again.
    CHECK(users::open_errno_as(1000) == 0);
}

// tpu.ko loaded with max_file_pinned_mb=4 max_device_pinned_mb=6. A file's page tables count
// too: a few tables of 4 KiB (8 KiB above the leaf level) for these buffers of 960 KiB.
TEST_CASE("pinned memory is bounded per file and per device", "[memory]") {
    constexpr std::uint64_t kKiB = 1 << 10, kBo = 960 * kKiB;
    tpurt::Device a = tpurt::Device::open(0), b = tpurt::Device::open(0);
    std::vector<std::uint32_t> bos_a(4), bos_b(2);
    for (std::uint32_t &bo : bos_a)
        REQUIRE(uapi::create_bo(a.fd(), kBo, bo) == 0);
    std::uint32_t extra = 0;
    CHECK(uapi::create_bo(a.fd(), kBo, extra) == EDQUOT);
    // The buffers alone leave 256 KiB of the file's 4 MiB; with the page tables that is over.
    CHECK(uapi::create_bo(a.fd(), 256 * kKiB, extra) == EDQUOT);

    for (std::uint32_t &bo : bos_b)
        REQUIRE(uapi::create_bo(b.fd(), kBo, bo) == 0);
    CHECK(uapi::create_bo(b.fd(), kBo, extra) == ENOSPC);

    // Freeing one of a's buffers makes room on the device for b.
    REQUIRE(uapi::close_bo(a.fd(), bos_a.back()) == 0);
    bos_a.pop_back();
    REQUIRE(uapi::create_bo(b.fd(), kBo, extra) == 0);
    bos_b.push_back(extra);
    CHECK(uapi::create_bo(a.fd(), kBo, extra) == ENOSPC);
    for (std::uint32_t bo : bos_a)
        REQUIRE(uapi::close_bo(a.fd(), bo) == 0);
    for (std::uint32_t bo : bos_b)
        REQUIRE(uapi::close_bo(b.fd(), bo) == 0);
}

// tpu.ko loaded with max_file_jobs=4 max_device_jobs=6.
TEST_CASE("jobs in flight are bounded per file and per device", "[jobs]") {
    tpurt::Device a = tpurt::Device::open(0), b = tpurt::Device::open(0);
    const tpurt::Program busy = guest::busy_program(40), halt = guest::halt_program();
    tpurt::Buffer busy_a = a.allocate_copy(busy.insns.data(), busy.size_bytes());
    tpurt::Buffer halt_a = a.allocate_copy(halt.insns.data(), halt.size_bytes());
    tpurt::Buffer halt_b = b.allocate_copy(halt.insns.data(), halt.size_bytes());

    // The busy job is held on the card (the card's test-only hold), so every job stays in
    // flight until it is released.
    uapi::CardHold hold(guest::kHangAt);
    std::vector<std::uint64_t> ids_a(4), ids_b(2);
    REQUIRE(submit(a.fd(), busy_a, busy.size_bytes(), ids_a[0]) == 0);
    for (int i = 1; i < 4; i++)
        REQUIRE(submit(a.fd(), halt_a, halt.size_bytes(), ids_a[i]) == 0);
    std::uint64_t id = 0;
    CHECK(submit(a.fd(), halt_a, halt.size_bytes(), id) == EDQUOT);
    for (std::uint64_t &job : ids_b)
        REQUIRE(submit(b.fd(), halt_b, halt.size_bytes(), job) == 0);
    CHECK(submit(b.fd(), halt_b, halt.size_bytes(), id) == ENOSPC);

    REQUIRE(hold.wait_held());
    hold.release();
    for (std::uint64_t job : ids_a)
        CHECK(wait(a.fd(), job) == TPU_ERR_NONE);
    for (std::uint64_t job : ids_b)
        CHECK(wait(b.fd(), job) == TPU_ERR_NONE);
    // Ended jobs give their room back at once.
    REQUIRE(submit(b.fd(), halt_b, halt.size_bytes(), id) == 0);
    CHECK(wait(b.fd(), id) == TPU_ERR_NONE);
}
