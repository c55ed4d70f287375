// SPDX-License-Identifier: MIT
// test_resources.cpp - guest test of what one process may take from the others through tpu.ko
// (root: it switches users in forked children and unbinds the driver): SUBMIT priorities above
// the lowest need CAP_SYS_NICE ([priority]); the page tables of freed buffers go with them
// ([pagetables], counted in debugfs "status"); SUBMIT reads its user arrays before it enters the
// device, so a fault on them that never ends does not hold up an unbind ([uffd], with a
// userfaultfd region whose faults this test answers only after the unbind); and under bounce
// buffering (the guest booted with swiotlb=force, ctest's vm_swiotlb) the card and the CPU see
// each other's writes to a job's buffers ([swiotlb]).
#include "guest_programs.hpp"
#include "raw_card.hpp"
#include "uapi_helpers.hpp"
#include "users.hpp"

#include <catch2/catch.hpp>

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using users::as_user;
using users::kNode;
using users::OpenToUsers;
constexpr std::uint64_t kMiB = 1 << 20;

// SUBMIT of the one-instruction program in `code` at `priority`: the errno, 0 on success.
int submit_halt(int fd, std::uint32_t code, std::uint32_t priority) {
    struct drm_tpu_submit args = {};
    args.program_handle = code;
    args.program_size = TPU_INSN_SIZE;
    args.priority = priority;
    return uapi::ioctl_errno(fd, DRM_IOCTL_TPU_SUBMIT, &args);
}

// The page tables of every context of accel0 (debugfs "status", line "page_tables: N").
std::uint64_t page_tables() {
    std::ifstream status(uapi::debugfs_dir() + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("page_tables: ", 0) == 0)
            return std::stoull(line.substr(13));
    FAIL("debugfs status has no page_tables line");
    return 0;
}

// A matmul through a fresh file of accel0 is exact.
void check_card_works() {
    tpurt::Device device = tpurt::Device::open(0);
    const auto a = tpurt::random_int8(32 * 32, 5);
    std::vector<std::int32_t> got(32 * 32), want(32 * 32);
    tpurt::matmul(device, a, a, got, 32, 32, 32);
    tpurt::reference_matmul(a, a, want, 32, 32, 32);
    CHECK(got == want);
}

// One page whose first access blocks until answered through a userfaultfd (root: the kernel's
// own accesses fault there too).
class StuckPage {
  public:
    StuckPage() {
        uffd_ = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
        REQUIRE(uffd_ >= 0);
        struct uffdio_api api = {};
        api.api = UFFD_API;
        REQUIRE(ioctl(uffd_, UFFDIO_API, &api) == 0);
        page_ = mmap(nullptr, TPU_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
        REQUIRE(page_ != MAP_FAILED);
        struct uffdio_register reg = {};
        reg.range.start = reinterpret_cast<std::uintptr_t>(page_);
        reg.range.len = TPU_PAGE_SIZE;
        reg.mode = UFFDIO_REGISTER_MODE_MISSING;
        REQUIRE(ioctl(uffd_, UFFDIO_REGISTER, &reg) == 0);
    }
    ~StuckPage() {
        answer();
        munmap(page_, TPU_PAGE_SIZE);
        close(uffd_);
    }
    StuckPage(const StuckPage &) = delete;
    StuckPage &operator=(const StuckPage &) = delete;

    std::uint64_t address() const { return reinterpret_cast<std::uintptr_t>(page_); }

    // Whether a thread faulted on the page within `limit`.
    bool faulted(std::chrono::milliseconds limit) {
        struct pollfd pfd = {uffd_, POLLIN, 0};
        if (poll(&pfd, 1, static_cast<int>(limit.count())) != 1)
            return false;
        struct uffd_msg msg = {};
        return read(uffd_, &msg, sizeof(msg)) == sizeof(msg) && msg.event == UFFD_EVENT_PAGEFAULT;
    }

    // Maps a zeroed page there, waking the faulting thread (once).
    void answer() {
        if (answered_)
            return;
        answered_ = true;
        struct uffdio_zeropage zero = {};
        zero.range.start = address();
        zero.range.len = TPU_PAGE_SIZE;
        ioctl(uffd_, UFFDIO_ZEROPAGE, &zero);
    }

  private:
    int uffd_ = -1;
    void *page_ = nullptr;
    bool answered_ = false;
};

// Unbinds tpu.ko from `card` in a child process; returns the child's pid.
pid_t start_unbind(const std::string &card) {
    const pid_t child = fork();
    if (child == 0) {
        try {
            raw::unbind_driver(card);
        } catch (...) {
            _exit(1);
        }
        _exit(0);
    }
    return child;
}

} // namespace

// Issue 24, item 5: the card serves its highest non-empty queue, so priorities above the lowest
// let one tenant starve the others; like amdgpu and panthor, tpu.ko refuses them with EACCES to
// a process without CAP_SYS_NICE.
TEST_CASE("SUBMIT priorities above the lowest need CAP_SYS_NICE", "[priority]") {
    OpenToUsers open_to_users;
    const tpurt::Program halt = guest::halt_program();
    const auto submit_as = [&](uid_t uid, std::uint32_t priority) {
        return as_user(uid, [&] {
            tpurt::Device device = tpurt::Device::open(0);
            tpurt::Buffer code = device.allocate_copy(halt.insns.data(), halt.size_bytes());
            return submit_halt(device.fd(), code.handle(), priority);
        });
    };
    CHECK(submit_as(1000, DRM_TPU_PRIORITY_LOW) == 0);
    for (std::uint32_t p = DRM_TPU_PRIORITY_LOW + 1; p <= DRM_TPU_PRIORITY_MAX; p++) {
        INFO("priority " << p);
        CHECK(submit_as(1000, p) == EACCES);
        CHECK(submit_as(0, p) == 0);
    }
    // An out-of-range priority is still EINVAL, for anyone.
    CHECK(submit_as(1000, DRM_TPU_PRIORITY_MAX + 1) == EINVAL);

    // libtpurt: a high-priority stream's work fails at synchronize, EACCES, the message says
    // why (exit status 0); a low-priority stream's works.
    const auto stream_as = [&](uid_t uid, int priority) {
        return as_user(uid, [&] {
            tpurt::Device device = tpurt::Device::open(0);
            const std::vector<float> a_values{1, 2, 3, 4};
            tpurt::Tensor a = tpurt::Tensor::from_host<float>(device, a_values, {1, 4});
            tpurt::Tensor out = tpurt::Tensor::empty(device, tpurt::DType::Fp32, {1, 4});
            tpurt::Stream stream(device, tpurt::StreamOptions{.priority = priority});
            tpurt::add(stream, a, a, out);
            try {
                stream.synchronize();
            } catch (const tpurt::Error &error) {
                return error.sys_errno() == EACCES &&
                               std::string(error.what()).find("CAP_SYS_NICE") != std::string::npos
                           ? 0
                           : 2;
            }
            return out.to_vector<float>() == std::vector<float>{2, 4, 6, 8} ? 1 : 3;
        });
    };
    CHECK(stream_as(1000, DRM_TPU_PRIORITY_HIGH) == 0);
    CHECK(stream_as(1000, DRM_TPU_PRIORITY_LOW) == 1);
    CHECK(stream_as(0, DRM_TPU_PRIORITY_HIGH) == 1);
}

// Issue 24, item 4: page tables were allocated as buffers were mapped and freed only with the
// file's context, so mappings that move through the address space left ever more tables behind.
TEST_CASE("the page tables of freed buffers are freed with them", "[pagetables]") {
    const int fd = open(kNode, O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    const std::uint64_t empty = page_tables();

    // 64 MiB need 32 leaf tables (and a level-1 table); freeing the buffer frees them.
    std::uint32_t big = 0;
    REQUIRE(uapi::create_bo(fd, 64 * kMiB, big) == 0);
    const std::uint64_t mapped = page_tables();
    CHECK(mapped >= empty + 32);
    REQUIRE(uapi::close_bo(fd, big) == 0);
    CHECK(page_tables() == empty);

    // Buffers of growing sizes with a small one behind each: every big one lands on new
    // addresses, past the holes the earlier ones left. The tables follow what is mapped.
    std::vector<std::uint32_t> small;
    std::uint64_t peak = 0;
    for (std::uint64_t round = 0; round < 8; round++) {
        REQUIRE(uapi::create_bo(fd, 16 * kMiB + round * 2 * kMiB, big) == 0);
        std::uint32_t sentinel = 0;
        REQUIRE(uapi::create_bo(fd, TPU_PAGE_SIZE, sentinel) == 0);
        small.push_back(sentinel);
        REQUIRE(uapi::close_bo(fd, big) == 0);
        peak = std::max(peak, page_tables());
    }
    INFO("page tables: " << empty << " empty, at most " << peak << " during the rounds");
    CHECK(page_tables() <= empty + 2 * small.size() + 1);
    for (std::uint32_t handle : small)
        REQUIRE(uapi::close_bo(fd, handle) == 0);
    CHECK(page_tables() == empty);
    close(fd);
}

// Issue 24, item 8: SUBMIT read bo_handles, in_syncs and out_syncs inside drm_dev_enter(), whose
// SRCU read section an unbind waits for: a fault on them that never ends (here a userfaultfd
// page nobody answers) held PCI remove, and with it the unplug of every DRM device.
TEST_CASE("SUBMIT's user arrays do not hold up an unbind", "[uffd]") {
    const std::string card = raw::find_card();
    for (const char *array : {"bo_handles", "in_syncs", "out_syncs"}) {
        INFO("SUBMIT's " << array << " on a page whose fault blocks");
        const int fd = open(kNode, O_RDWR | O_CLOEXEC);
        REQUIRE(fd >= 0);
        std::uint32_t code = 0;
        REQUIRE(uapi::create_bo(fd, TPU_PAGE_SIZE, code) == 0);
        StuckPage stuck;
        struct drm_tpu_submit args = {};
        args.program_handle = code;
        args.program_size = TPU_INSN_SIZE;
        if (std::strcmp(array, "bo_handles") == 0) {
            args.bo_count = 1;
            args.bo_handles = stuck.address();
        } else if (std::strcmp(array, "in_syncs") == 0) {
            args.in_sync_count = 1;
            args.in_syncs = stuck.address();
        } else {
            args.out_sync_count = 1;
            args.out_syncs = stuck.address();
        }
        int submit_errno = -1;
        std::thread submitter(
            [&] { submit_errno = uapi::ioctl_errno(fd, DRM_IOCTL_TPU_SUBMIT, &args); });
        REQUIRE(stuck.faulted(std::chrono::seconds(10)));

        const pid_t unbind = start_unbind(card);
        REQUIRE(unbind > 0);
        const bool unbound = uapi::exited_ok(unbind, std::chrono::seconds(5));
        CHECK(unbound);
        stuck.answer();
        submitter.join();
        if (!unbound)
            REQUIRE(uapi::exited_ok(unbind, std::chrono::seconds(30)));
        // Read after the unbind, the device is gone; read before it (unfixed), the zeroed
        // page names handle 0: no such BO or syncobj.
        CHECK(submit_errno == (unbound ? ENODEV : ENOENT));
        close(fd);
        raw::bind_driver(card);
    }
    check_card_works();
}

// Issue 24, item 10: with the guest's DMA bounced (swiotlb=force, as in SEV and TDX guests) the
// card works on bounce buffers: the driver must copy a job's buffers there before it runs and
// back once it ended.
TEST_CASE("the card and the CPU see each other's writes through bounce buffers", "[swiotlb]") {
    const std::string used = "/sys/kernel/debug/swiotlb/io_tlb_used";
    uapi::debugfs_dir(); // mounts debugfs
    const auto bounce_slots = [&] {
        std::ifstream in(used);
        std::uint64_t slots = 0;
        in >> slots;
        return slots;
    };
    tpurt::Device device = tpurt::Device::open(0);
    const std::uint64_t before = bounce_slots();
    tpurt::Buffer in = device.allocate(TPU_PAGE_SIZE), out = device.allocate(TPU_PAGE_SIZE);
    INFO("swiotlb slots in use: " << before << ", then " << bounce_slots());
    REQUIRE(bounce_slots() > before); // the buffers are bounced: swiotlb=force took

    const tpurt::Program copy = tpurt::ProgramBuilder()
                                    .dma_in(guest::int8_rows(in.device_addr(), 0, 16, 256))
                                    .dma_out(guest::int8_rows(out.device_addr(), 0, 16, 256))
                                    .halt()
                                    .finish();
    for (std::uint8_t round = 1; round <= 3; round++) {
        INFO("round " << int(round));
        std::memset(in.data(), round, TPU_PAGE_SIZE);
        std::memset(out.data(), 0, TPU_PAGE_SIZE);
        device.submit(copy, {&in, &out}).wait();
        const auto *got = static_cast<const std::uint8_t *>(out.data());
        // Every byte the card wrote, as the CPU sees it.
        CHECK(std::count(got, got + TPU_PAGE_SIZE, round) == TPU_PAGE_SIZE);
    }
}
