// SPDX-License-Identifier: MIT
// test_unbind - tpu.ko unbound from the card through sysfs while a process still has the device
// open, buffers mapped and jobs queued and running (root only): the jobs end, the open file
// gets ENODEV, every job's fence says -ENODEV (in the ring or still waiting for another job),
// closing it afterwards is clean (the VM harness fails the run on any kernel warning, oops or
// hung task), a file closed with jobs in the ring right before the unbind leaves nothing
// behind, and the driver binds again to a working card (as accel0: the old device was freed),
// also when the unbind comes while a job's timeout handler runs (held there by the debugfs test
// hook timeout_hold, or with a job that ended meanwhile by pending_hold), while a file's close is
// on its way (close_hold) and while a reset waits for a job's free that drops the last reference to
// a buffer (free_hold); and a card the driver can no longer vouch for (a TLB invalidation or a card
// reset that did not take, debugfs inject_tlb_timeout and inject_reset_fails) is wedged: bus
// mastering off, its jobs ended, its freed pages kept until the unbind; a job killed with its file,
// freed after the unbind found no job alive (last_free_hold), keeps the device until it is freed.
// The long and hung jobs these cases need running are held by the card (the test-only card_hold,
// QEMU's x-test-hold: guest::kHangAt), so they are running when the test goes on, on any host.
#include "fence_helpers.hpp"
#include "guest_programs.hpp"
#include "raw_card.hpp"
#include "uapi_helpers.hpp"

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>

namespace {

using guest::kHangAt;
using guest::kHangMatmuls;
// The driver's ring holds 255 jobs.
constexpr unsigned kMoreThanTheRing = 300;
// Jobs that all fit in the ring: a close does not wait for them (drm_sched_entity_flush() waits,
// killably, until the file's queued jobs are in the ring).
constexpr unsigned kInTheRing = 100;

// A matmul through a fresh file of accel0 is exact.
void check_card_works() {
    tpurt::Device device = tpurt::Device::open(0);
    const std::uint32_t m = 37, k = 129, n = 65;
    const auto a = tpurt::random_int8(std::size_t{m} * k, 7);
    const auto b = tpurt::random_int8(std::size_t{k} * n, 8);
    std::vector<std::int32_t> got(std::size_t{m} * n), want(got.size());
    tpurt::matmul(device, a, b, got, m, k, n);
    tpurt::reference_matmul(a, b, want, m, k, n);
    CHECK(got == want);
}

// A job the card holds (`hold` armed for guest::kHangAt), then `count - 1` HALT jobs queued
// behind it, each with its fence; once the job is held.
std::vector<std::unique_ptr<fences::FencedJob>>
held_job_and_halts(tpurt::Device &device, unsigned count, const uapi::CardHold &hold) {
    std::vector<std::unique_ptr<fences::FencedJob>> jobs;
    jobs.push_back(std::make_unique<fences::FencedJob>(device, guest::busy_program(kHangMatmuls),
                                                       std::vector<const tpurt::Buffer *>{}));
    while (jobs.size() < count)
        jobs.push_back(std::make_unique<fences::FencedJob>(device, guest::halt_program(),
                                                           std::vector<const tpurt::Buffer *>{}));
    REQUIRE(hold.wait_held());
    return jobs;
}

std::string read_text(const std::string &path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    return line;
}

void write_text(const std::string &path, const std::string &text) {
    std::ofstream out(path);
    out << text;
    out.flush();
    if (!out)
        throw std::runtime_error("cannot write " + text + " to " + path);
}

// Unbinds tpu.ko from `card` in a child process; whether the unbind returned within `limit` (a
// child stuck in the kernel is left behind).
bool unbind_within(const std::string &card, std::chrono::milliseconds limit) {
    const pid_t child = fork();
    if (child < 0)
        throw std::runtime_error("fork failed");
    if (child == 0) {
        try {
            raw::unbind_driver(card);
        } catch (...) {
            _exit(1);
        }
        _exit(0);
    }
    return uapi::exited_ok(child, limit);
}

// The WAIT of `job` fails with ENODEV: the device is gone.
void check_gone(tpurt::Job &job) {
    try {
        job.wait();
        FAIL("a job waited for after unbinding tpu.ko reported success");
    } catch (const tpurt::JobError &error) {
        FAIL(std::string("expected ENODEV, the job ended with ") + error.what());
    } catch (const tpurt::Error &error) {
        CHECK(error.code() == tpurt::ErrorCode::SystemCall);
        CHECK(error.sys_errno() == ENODEV);
    }
}

// A raw SUBMIT of the program in `code` at `priority`, its fence into `out_syncobj`, waiting for
// the fence in `in_syncobj` (0: none); the errno, 0 on success.
int submit(int fd, const tpurt::Buffer &code, std::uint32_t size, std::uint32_t priority,
           std::uint32_t in_syncobj, std::uint32_t out_syncobj,
           const std::vector<std::uint32_t> &bos = {}) {
    struct drm_tpu_sync in = {.handle = in_syncobj, .flags = 0, .point = 0};
    struct drm_tpu_submit args = {};
    args.program_handle = code.handle();
    args.program_size = size;
    args.bo_count = static_cast<std::uint32_t>(bos.size());
    args.bo_handles = reinterpret_cast<std::uintptr_t>(bos.data());
    args.out_syncobj = out_syncobj;
    args.priority = priority;
    if (in_syncobj) {
        args.in_syncs = reinterpret_cast<std::uintptr_t>(&in);
        args.in_sync_count = 1;
    }
    return drmIoctl(fd, DRM_IOCTL_TPU_SUBMIT, &args) == 0 ? 0 : errno;
}

// The card's PCI command register has bus mastering on (bit 2).
bool bus_master_on(const std::string &card) {
    const int fd = open((card + "/config").c_str(), O_RDONLY);
    if (fd < 0)
        throw std::runtime_error("cannot open " + card + "/config");
    std::uint16_t command = 0;
    const bool ok = pread(fd, &command, 2, 4) == 2;
    close(fd);
    if (!ok)
        throw std::runtime_error("cannot read the PCI command register of " + card);
    return command & 0x4;
}

// The value of `key` in debugfs "status" ("" if there is no such line).
std::string status_value(const std::string &key) {
    std::ifstream in(uapi::debugfs_dir() + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(key + ": ", 0) == 0)
            return line.substr(key.size() + 2);
    return "";
}

// The kernel log (/dev/kmsg), read from its start.
class KernelLog {
  public:
    KernelLog() : fd_(open("/dev/kmsg", O_RDONLY | O_NONBLOCK)) {
        if (fd_ < 0)
            throw std::runtime_error("cannot open /dev/kmsg");
    }
    ~KernelLog() { close(fd_); }
    KernelLog(const KernelLog &) = delete;
    KernelLog &operator=(const KernelLog &) = delete;

    // Whether a message read so far, or now, contains `text`.
    bool has(const std::string &text) {
        char record[8192];
        for (;;) {
            const ssize_t n = read(fd_, record, sizeof(record));
            if (n < 0 && errno == EPIPE)
                continue; // overwritten records skipped
            if (n <= 0)
                return found_;
            found_ = found_ || std::string(record, std::size_t(n)).find(text) != std::string::npos;
        }
    }

  private:
    int fd_;
    bool found_ = false;
};

} // namespace

TEST_CASE("unbinding tpu.ko under an open file ends its jobs and binds again", "[unbind]") {
    const std::string card = raw::find_card();
    {
        tpurt::Device device = tpurt::Device::open(0);
        tpurt::Buffer data = device.allocate(TPU_PAGE_SIZE);
        std::memset(data.data(), 0x5a, 64);
        uapi::CardHold hold(kHangAt);
        tpurt::Job busy = device.submit(guest::busy_program(kHangMatmuls), {});
        tpurt::Job behind =
            device.submit(tpurt::ProgramBuilder()
                              .dma_in(guest::int8_rows(data.device_addr(), 0, 1, 64))
                              .dma_out(guest::int8_rows(data.device_addr() + 64, 0, 1, 64))
                              .halt()
                              .finish(),
                          {&data});
        // The busy job is on the card, held there: it is running at the unbind.
        REQUIRE(hold.wait_held());

        raw::unbind_driver(card);
        CHECK_FALSE(std::filesystem::exists(card + "/driver"));
        check_gone(busy);
        check_gone(behind);
        CHECK_THROWS_AS(device.allocate(TPU_PAGE_SIZE), tpurt::Error);
        // The mapping outlives the driver: the pages are the process's until it unmaps them.
        CHECK(static_cast<std::uint8_t *>(data.data())[0] == 0x5a);
    } // buffers unmapped and the file closed with the driver gone

    raw::bind_driver(card);
    check_card_works();
}

TEST_CASE("unbinding ends the fences of running and waiting jobs with -ENODEV", "[unbind]") {
    const std::string card = raw::find_card();
    {
        tpurt::Device device = tpurt::Device::open(0);
        // More jobs than the ring holds behind a held one: some wait outside the ring. The held
        // one outlasts the 300 submissions (the unbind ends it, the file closes after the unbind
        // without waiting for it).
        uapi::CardHold hold(kHangAt);
        const auto jobs = held_job_and_halts(device, kMoreThanTheRing, hold);
        REQUIRE(fences::fence_status(jobs.front()->sync_file(), 0) == 0);

        raw::unbind_driver(card);
        unsigned enodev = 0;
        for (const auto &job : jobs)
            enodev += fences::fence_status(job->sync_file()) == -ENODEV;
        CHECK(enodev == jobs.size());
    }
    raw::bind_driver(card);
    check_card_works();
}

TEST_CASE("a file closed with jobs in the ring, then an unbind, leaves nothing behind",
          "[unbind]") {
    const std::string card = raw::find_card();
    auto hold = std::make_unique<uapi::CardHold>(kHangAt); // until the unbind
    {
        tpurt::Device device = tpurt::Device::open(0);
        const auto jobs = held_job_and_halts(device, kInTheRing, *hold);
    } // closed: the jobs in the ring hold the last references to the file's address space
    REQUIRE(hold->held() == int(kHangAt));
    raw::unbind_driver(card);
    hold.reset(); // the device is gone; the card reset of the next probe ends the held job
    // bind_driver() waits for accel0, which comes back only if the old device was released.
    raw::bind_driver(card);
    check_card_works();
}

// Defect 2 of issue 9: a job leaked when PCI remove meets the job timeout's handler, which runs
// with the job taken off the scheduler's pending list; the handler must put it back even when it
// finds the device gone, or the job (its buffers, its file's context and so the device) is never
// freed. ctest's vm_unbind_timeout runs this case with job_timeout_ms=1000. Deterministic: the
// debugfs test hook timeout_hold holds the handler before it does anything until the unbind has
// unplugged the device. A leaked job hangs the unbind (PCI remove waits until every job is
// freed, so its return shows the job and the buffer references it held were freed) and keeps the
// old device, so accel0 would not come back.
TEST_CASE("unbinding while a job's timeout handler runs frees the job, its buffers and the device",
          "[unbind][timeout]") {
    using namespace std::chrono_literals;
    const std::string card = raw::find_card();
    const std::string hold = uapi::debugfs_dir() + "/timeout_hold";
    REQUIRE(read_text(hold) == "0");
    {
        tpurt::Device device = tpurt::Device::open(0);
        tpurt::Buffer data = device.allocate(TPU_PAGE_SIZE);
        write_text(hold, "1");
        REQUIRE(read_text(hold) == "1");
        uapi::CardHold card_hold(kHangAt);
        fences::FencedJob hung(device, guest::busy_program(kHangMatmuls), {&data});
        fences::FencedJob behind(device, guest::halt_program(),
                                 std::vector<const tpurt::Buffer *>{});
        // The 1 s timeout fires and its handler holds, the job off the pending list.
        REQUIRE(uapi::wait_for([&] { return read_text(hold) == "2"; }, 60s));
        REQUIRE(fences::fence_status(hung.sync_file(), 0) == 0);

        const bool returned = unbind_within(card, 60s);
        INFO("the unbind " << (returned ? "returned" : "hangs: PCI remove waits for a leaked job"));
        REQUIRE(returned);
        // The unbind ended the jobs in the ring; the handler, released, left them to remove.
        CHECK(fences::fence_status(hung.sync_file()) == -ENODEV);
        CHECK(fences::fence_status(behind.sync_file()) == -ENODEV);
    } // the buffer and the file go with the driver unbound
    // bind_driver() waits for accel0, which comes back only if the old device was released.
    raw::bind_driver(card);
    CHECK(read_text(uapi::debugfs_dir() + "/timeout_hold") == "0");
    check_card_works();
}

// Defect 11 of issue 24: the timeout handler put its job back on drm_sched's pending list before
// it stopped the scheduler's work, so a job ending meanwhile could be freed by free_job while the
// handler still used it. ctest's vm_unbind_timeout runs this with job_timeout_ms=1000. The job,
// holding the last reference to a buffer, waits in a stalled ring (stall_queues) until it times
// out; the handler holds once the job is back on the list (pending_hold, until the unbind). Let
// go, the card runs the job and its fence signals; free_job must not run before the handler is
// done (it would drop the buffer, and free the job under the handler).
TEST_CASE("a job that ends while its timeout handler runs is not freed under the handler",
          "[unbind][timeout][pending]") {
    using namespace std::chrono_literals;
    const std::string card = raw::find_card();
    const std::string hold = uapi::debugfs_dir() + "/pending_hold";
    const auto pinned = [&] { return std::stoull(read_text(card + "/tpu/pinned_bytes")); };
    REQUIRE(read_text(hold) == "0");
    {
        tpurt::Device device = tpurt::Device::open(0);
        std::unique_ptr<fences::FencedJob> job;
        std::uint64_t with_buffer = 0;
        {
            uapi::StalledQueues stalled;
            auto data = std::make_unique<tpurt::Buffer>(device.allocate(1 << 20));
            write_text(hold, "1");
            job = std::make_unique<fences::FencedJob>(
                device, guest::halt_program(), std::vector<const tpurt::Buffer *>{data.get()});
            with_buffer = pinned();
            data.reset(); // the job holds the buffer's last reference
            REQUIRE(pinned() == with_buffer);
            // The 1 s timeout fires; the handler holds with the job back on the pending list.
            REQUIRE(uapi::wait_for([&] { return read_text(hold) == "2"; }, 60s));
        } // the card fetches again: it runs the job
        REQUIRE(fences::fence_status(job->sync_file()) == 1);
        INFO("pinned bytes: " << with_buffer << " with the buffer, " << pinned() << " now");
        CHECK(pinned() == with_buffer);
        CHECK(read_text(hold) == "2");

        const bool returned = unbind_within(card, 60s);
        INFO("the unbind " << (returned ? "returned" : "hangs"));
        REQUIRE(returned);
    }
    raw::bind_driver(card);
    CHECK(read_text(uapi::debugfs_dir() + "/pending_hold") == "0");
    check_card_works();
}

// Defect 1 of issue 24: a file's close took the file off the device's list, then destroyed its
// scheduler entities without the device knowing; PCI remove meanwhile finished the schedulers,
// freeing their run queues, which the close then walked (use-after-free). The close, held by the
// debugfs hook close_hold between the two until the device is unplugged (and half a second
// more), has a priority-3 job waiting for a long priority-0 job. Remove must wait for the close.
TEST_CASE("a close on its way while the driver is unbound finishes before the schedulers go",
          "[unbind][close]") {
    using namespace std::chrono_literals;
    const std::string card = raw::find_card();
    const std::string hold = uapi::debugfs_dir() + "/close_hold";
    REQUIRE(read_text(hold) == "0");
    int long_fence = -1, waiting_fence = -1;
    std::thread closer;
    // A second file keeps the device (and so the schedulers its fences name) until the fences
    // are read: a sync_file outliving the device is another matter (drm_sched in 6.12).
    auto keep = std::make_unique<tpurt::Device>(tpurt::Device::open(0));
    // The long job is held by the card until the unbind.
    auto card_hold = std::make_unique<uapi::CardHold>(kHangAt);
    {
        auto device = std::make_unique<tpurt::Device>(tpurt::Device::open(0));
        const int fd = device->fd();
        const tpurt::Program busy = guest::busy_program(kHangMatmuls);
        const tpurt::Program halt = guest::halt_program();
        auto busy_code = std::make_unique<tpurt::Buffer>(
            device->allocate_copy(busy.insns.data(), busy.size_bytes()));
        auto halt_code = std::make_unique<tpurt::Buffer>(
            device->allocate_copy(halt.insns.data(), halt.size_bytes()));
        std::uint32_t first = 0, second = 0;
        REQUIRE(drmSyncobjCreate(fd, 0, &first) == 0);
        REQUIRE(drmSyncobjCreate(fd, 0, &second) == 0);
        REQUIRE(submit(fd, *busy_code, static_cast<std::uint32_t>(busy.size_bytes()), 0, 0,
                       first) == 0);
        REQUIRE(submit(fd, *halt_code, static_cast<std::uint32_t>(halt.size_bytes()),
                       DRM_TPU_PRIORITY_MAX, first, second) == 0);
        REQUIRE(drmSyncobjExportSyncFile(fd, first, &long_fence) == 0);
        REQUIRE(drmSyncobjExportSyncFile(fd, second, &waiting_fence) == 0);
        REQUIRE(fences::fence_status(waiting_fence, 0) == 0);
        REQUIRE(card_hold->wait_held());
        drmSyncobjDestroy(fd, first);
        drmSyncobjDestroy(fd, second);
        busy_code.reset();
        halt_code.reset();
        write_text(hold, "1");
        // The last reference to the file goes: its close holds before destroying its entities.
        closer = std::thread([device = std::move(device)]() mutable { device.reset(); });
    }
    REQUIRE(uapi::wait_for([&] { return read_text(hold) == "2"; }, 60s));

    const bool returned = unbind_within(card, 60s);
    closer.join();
    INFO("the unbind " << (returned ? "returned" : "hangs"));
    REQUIRE(returned);
    CHECK(fences::fence_status(long_fence) == -ENODEV);
    CHECK(fences::fence_status(waiting_fence) == -ENODEV);
    card_hold.reset();
    close(long_fence);
    close(waiting_fence);
    keep.reset();
    raw::bind_driver(card);
    CHECK(read_text(uapi::debugfs_dir() + "/close_hold") == "0");
    check_card_works();
}

// Defect 2 of issue 24: a buffer freed inside a drm_dev_enter() section once the unplug had begun
// waited for PCI remove to stop the card, while remove waited (synchronize_srcu()) for that
// section to end: the unbind hung in D state. Here a reset through debugfs is inside its section,
// waiting for a job's free_job (cancel_work_sync()), which the hook free_hold holds until the
// unplug begins; that job holds the last reference to a buffer. The unbind must return.
TEST_CASE("a buffer freed by a job's free that a reset waits for does not hang the unbind",
          "[unbind][free]") {
    using namespace std::chrono_literals;
    const std::string card = raw::find_card();
    const std::string hold = uapi::debugfs_dir() + "/free_hold";
    const std::string reset = uapi::debugfs_dir() + "/reset";
    REQUIRE(read_text(hold) == "0");
    std::thread resetter;
    {
        tpurt::Device device = tpurt::Device::open(0);
        auto data = std::make_unique<tpurt::Buffer>(device.allocate(TPU_PAGE_SIZE));
        write_text(hold, "1");
        {
            fences::FencedJob job(device, guest::halt_program(), {data.get()});
            REQUIRE(fences::fence_status(job.sync_file()) == 1);
        }
        // The job ended; its free holds, with the last references to the buffers.
        REQUIRE(uapi::wait_for([&] { return read_text(hold) == "2"; }, 60s));
        data.reset();
        // The reset enters its section and waits for the held free (not for the unbind).
        resetter = std::thread([&] {
            std::ofstream out(reset);
            out << "1";
            out.flush();
        });
        std::this_thread::sleep_for(1s);

        const bool returned = unbind_within(card, 60s);
        INFO("the unbind " << (returned ? "returned"
                                        : "hangs: a free inside a section waits for "
                                          "remove, which waits for the section"));
        REQUIRE(returned);
        resetter.join();
    }
    raw::bind_driver(card);
    check_card_works();
}

// Defect 6 of issue 24: a TLB invalidation that did not complete was only logged, and the pages
// freed while the card could still reach them through a stale translation. Now the card is
// wedged: bus mastering off, jobs refused, the freed buffer's pages kept (quarantined) until the
// unbind, after which the driver binds again to a working card.
TEST_CASE("a TLB invalidation that does not complete wedges the card", "[unbind][wedge]") {
    const std::string card = raw::find_card();
    REQUIRE(bus_master_on(card));
    {
        tpurt::Device device = tpurt::Device::open(0);
        auto data = std::make_unique<tpurt::Buffer>(device.allocate(TPU_PAGE_SIZE));
        write_text(uapi::debugfs_dir() + "/inject_tlb_timeout", "1");
        data.reset(); // its unmap's invalidation "times out"
        REQUIRE(read_text(uapi::debugfs_dir() + "/inject_tlb_timeout") == "0");
        CHECK_FALSE(bus_master_on(card));
        CHECK_THROWS(fences::FencedJob(device, guest::halt_program(), {}));
        CHECK(status_value("wedged") == "1");
        CHECK(status_value("quarantined") == "2"); // the buffer and the refused job's program
    }
    raw::unbind_driver(card);
    raw::bind_driver(card);
    CHECK(status_value("wedged") == "0");
    CHECK(bus_master_on(card));
    check_card_works();
}

// Defect 6 of issue 24: a reset of the card that did not take ended every job, so their buffers
// could be freed while the card still ran the hung one. ctest's vm_wedge runs this with queue
// resets that fail (x-queue-reset-fails) and a 1 s timeout; the card reset fails too
// (inject_reset_fails: RESET is not written, the hung job runs on). Its last instruction copies 64
// bytes into `out`: once its fence has signalled, the card must no longer be able to do that.
TEST_CASE("a card reset that does not take wedges the card before the jobs end",
          "[unbind][wedge][escalation]") {
    using namespace std::chrono_literals;
    const std::string card = raw::find_card();
    {
        tpurt::Device device = tpurt::Device::open(0);
        tpurt::Buffer in = device.allocate(TPU_PAGE_SIZE);
        tpurt::Buffer out = device.allocate(TPU_PAGE_SIZE);
        std::memset(in.data(), 0x5a, 64);
        std::memset(out.data(), 0, 64);
        constexpr std::uint32_t ub = 4u << 20; // above what the busy MATMULs use
        tpurt::ProgramBuilder builder;
        builder.dma_in(guest::int8_rows(in.device_addr(), ub, 1, 64));
        builder.load_weights(guest::packed_weights(tpurt::DType::Int8, 128, 128));
        for (unsigned i = 0; i < kHangMatmuls; i++)
            builder.matmul(guest::packed_matmul(tpurt::DType::Int8, 8192, 128, 128));
        builder.dma_out(guest::int8_rows(out.device_addr(), ub, 1, 64));
        // The card holds the job before its DMA_OUT until the test lets it go.
        constexpr unsigned kCopyOut = 2 + kHangMatmuls;
        uapi::CardHold hold(kCopyOut);
        write_text(uapi::debugfs_dir() + "/inject_reset_fails", "1");
        fences::FencedJob hung(device, builder.halt().finish(), {&in, &out});
        const int status = fences::fence_status(hung.sync_file());
        CHECK(status < 0);
        CHECK(status_value("wedged") == "1");
        CHECK_FALSE(bus_master_on(card));
        // The hung job is still held (its queue and the card were not reset); let go, it runs on
        // to its DMA_OUT and ends.
        REQUIRE(hold.held() == int(kCopyOut));
        hold.release();
        const bool ended = uapi::wait_for(
            [] { return (std::stoul(status_value("run_queue"), nullptr, 16) >> 31) == 0; }, 120s);
        CHECK(ended);
        const auto *bytes = static_cast<const std::uint8_t *>(out.data());
        unsigned written = 0;
        for (unsigned i = 0; i < 64; i++)
            written += bytes[i] != 0;
        INFO("bytes the job wrote after its fence signalled: " << written);
        CHECK(written == 0);
    }
    raw::unbind_driver(card);
    raw::bind_driver(card);
    check_card_works();
}

// Defect 9 of issue 24: the buffers of a file still open at the unbind stayed DMA-mapped (and its
// page tables allocated) until the file closed, then were unmapped against a device no longer
// bound. ctest's vm_unbind_swiotlb boots the guest with swiotlb=force, where every streaming DMA
// mapping takes bounce-buffer slots (debugfs swiotlb/io_tlb_used): PCI remove must give them back.
TEST_CASE("unbinding undoes the DMA mappings of the buffers of files still open",
          "[unbind][swiotlb]") {
    const std::string card = raw::find_card();
    uapi::debugfs_dir(); // mounts debugfs
    const auto slots = [] { return std::stol(read_text("/sys/kernel/debug/swiotlb/io_tlb_used")); };
    {
        tpurt::Device device = tpurt::Device::open(0);
        const long before = slots();
        tpurt::Buffer data = device.allocate(4u << 20);
        const long mapped = slots();
        INFO("bounce slots in use: " << before << " before the buffer, " << mapped << " with it");
        REQUIRE(mapped - before >= (4 << 20) / 2048); // 2 KiB slots: swiotlb=force is on
        raw::unbind_driver(card);
        INFO("after the unbind: " << slots());
        CHECK(slots() <= before);
    }
    raw::bind_driver(card);
}

// Defect 7 of issue 24: jobs killed with their scheduler entity (at a close that does not wait for
// them) are freed from system_wq, which PCI remove does not flush; a remove that found no job alive
// could finish and free the device between such a free counting itself out and its wake-up of
// remove (use-after-free). ctest's vm_unbind_killed runs this with two cards. A process submits,
// on accel0, a job waiting for a job of accel1 held in accel1's stalled rings (stall_queues), and
// exits: its close kills the waiting job, whose free then waits for that fence alone. Let go, the
// free counts itself out, the last job of accel0, and holds there (debugfs last_free_hold) until
// accel0 is unplugged and half a second more, while remove, finding no job alive, completes. The
// job's reference must keep the device alive until its free is done: bind_driver() waits for
// accel0, which comes back only once the old device is released.
TEST_CASE("a killed job's free after the unbind found no job alive keeps the device",
          "[unbind][killed]") {
    using namespace std::chrono_literals;
    char target[PATH_MAX];
    REQUIRE(realpath("/sys/class/accel/accel0/device", target) != nullptr);
    const std::string card = target;
    const std::string hold = uapi::debugfs_dir(0) + "/last_free_hold";
    REQUIRE(read_text(hold) == "0");
    const tpurt::Program halt = guest::halt_program();
    {
        tpurt::Device other = tpurt::Device::open(1);
        uapi::StalledQueues stalled(uapi::debugfs_dir(1));
        tpurt::Buffer other_code = other.allocate_copy(halt.insns.data(), halt.size_bytes());
        std::uint32_t syncobj = 0;
        REQUIRE(drmSyncobjCreate(other.fd(), 0, &syncobj) == 0);
        REQUIRE(submit(other.fd(), other_code, static_cast<std::uint32_t>(halt.size_bytes()), 0, 0,
                       syncobj) == 0);
        int fence = -1;
        REQUIRE(drmSyncobjExportSyncFile(other.fd(), syncobj, &fence) == 0);
        REQUIRE(fences::fence_status(fence, 0) == 0);
        write_text(hold, "1");

        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            // Its own file of accel0; the job waits for accel1's; the exit closes the file.
            try {
                tpurt::Device device = tpurt::Device::open(0);
                tpurt::Buffer code = device.allocate_copy(halt.insns.data(), halt.size_bytes());
                std::uint32_t waits_for = 0;
                const bool ok =
                    drmSyncobjCreate(device.fd(), 0, &waits_for) == 0 &&
                    drmSyncobjImportSyncFile(device.fd(), waits_for, fence) == 0 &&
                    submit(device.fd(), code, static_cast<std::uint32_t>(halt.size_bytes()), 0,
                           waits_for, 0) == 0;
                _exit(ok ? 0 : 1);
            } catch (...) {
                _exit(1);
            }
        }
        // The close at its exit waits a second for the job, then kills it.
        REQUIRE(uapi::exited_ok(child, 60s));
        REQUIRE(read_text(hold) == "1");
        close(fence);
        drmSyncobjDestroy(other.fd(), syncobj);
    } // accel1 fetches again: its job ends, and the killed job's free runs
    REQUIRE(uapi::wait_for([&] { return read_text(hold) == "2"; }, 60s));

    KernelLog log;
    const bool returned = unbind_within(card, 60s);
    INFO("the unbind " << (returned ? "returned" : "hangs"));
    REQUIRE(returned);
    // The debugfs files went with the unbind: the kernel log tells when the hold ends, half a
    // second after the unplug. Without the job's reference, the device is freed by then.
    REQUIRE(uapi::wait_for([&] { return log.has(" last_free_hold: let go"); }, 60s));
    // accel0 again: the old device was released when the job's free was done.
    raw::bind_driver(card);
    CHECK(read_text(uapi::debugfs_dir() + "/last_free_hold") == "0");
    check_card_works();
}
