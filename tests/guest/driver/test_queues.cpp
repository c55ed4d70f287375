// SPDX-License-Identifier: MIT
// test_queues.cpp - guest test of the driver's scheduling over the card's command queues (the VM
// gives the card 4 queues and its test-only hold, x-test-hold, and loads tpu.ko with
// job_timeout_ms=1000 for this binary): SUBMIT priorities run on their own queues (queue q has
// PRIORITY q) and a high-priority job overtakes the low-priority ones queued before it; a job hung
// on one queue costs only that queue a reset (CONTROL.RESET): it ends with DRM_TPU_JOB_TIMEOUT, the
// innocent jobs of its queue run again and succeed, and other files' jobs on other queues complete
// correctly without being run again, cancelled, or the card being reset; a reset requested
// through debugfs resets only the queue of the job the card runs (RUN_QUEUE, spec 1.5). The
// [escalation] case
// runs on a card whose queue resets do not take (QEMU's x-queue-reset-fails, vm_reset_escalation):
// the driver then resets the whole card, the hung job ends DRM_TPU_JOB_TIMEOUT and the innocent
// jobs of every file and queue run again and complete correctly.
#include "guest_programs.hpp"
#include "tenant.hpp"
#include "uapi_helpers.hpp"

#include <catch2/catch.hpp>

#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <xf86drm.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

using fences::FencedJob;
using tenants::status_of;
using tenants::Tenant;

namespace {

using guest::kHangAt;
using guest::kHangMatmuls;

// A "name: value" line of the debugfs status file.
std::uint64_t status_value(const std::string &name) {
    static const std::string dir = uapi::debugfs_dir();
    return uapi::debugfs_status(dir, name);
}

std::uint64_t queue_value(unsigned queue, const std::string &name) {
    return status_value("queue" + std::to_string(queue) + "_" + name);
}

std::uint64_t num_queues(const tpurt::Device &device) {
    struct drm_tpu_get_param p = {};
    p.param = DRM_TPU_PARAM_NUM_QUEUES;
    REQUIRE(drmIoctl(device.fd(), DRM_IOCTL_TPU_GET_PARAM, &p) == 0);
    return p.value;
}

} // namespace

TEST_CASE("the card's queues are reported and each has its PRIORITY", "[queues]") {
    tpurt::Device device = tpurt::Device::open(0);
    REQUIRE(num_queues(device) == 4);
    REQUIRE(status_value("queues") == 4);
    for (unsigned q = 0; q < 4; q++) {
        INFO("queue " << q);
        CHECK(queue_value(q, "priority") == q);
        CHECK(queue_value(q, "status") == TPU_QSTAT_ACTIVE);
    }
}

TEST_CASE("a high-priority job runs on its own queue and overtakes queued low-priority jobs",
          "[queues][priority]") {
    Tenant low(0x61), high(0x62);
    const std::uint64_t low_seqno = queue_value(0, "last_seqno");
    const std::uint64_t high_seqno = queue_value(DRM_TPU_PRIORITY_HIGH, "last_seqno");

    // The card is busy with the first low-priority job (held: the test-only card_hold) until
    // the others and the urgent one are in their rings.
    uapi::CardHold hold(kHangAt);
    std::vector<std::unique_ptr<FencedJob>> lows;
    for (int i = 0; i < 4; i++)
        lows.push_back(low.busy(kHangMatmuls, DRM_TPU_PRIORITY_LOW));
    auto urgent = high.copy(DRM_TPU_PRIORITY_HIGH);
    REQUIRE(hold.wait_held());
    REQUIRE(uapi::wait_for(
        [&] {
            return queue_value(0, "jobs_in_ring") == lows.size() &&
                   queue_value(DRM_TPU_PRIORITY_HIGH, "jobs_in_ring") == 1;
        },
        std::chrono::seconds(10)));
    // The job the card starts once the held one ended is held too, at its second instruction:
    // it must be the urgent one, from the high-priority queue, not the next low-priority job
    // queued before it. (Fence timestamps cannot tell: the interrupt handler may signal a
    // queue's jobs before another's that the card ended first.)
    hold.arm(1);
    hold.release();
    REQUIRE(uapi::wait_for([&] { return hold.held() == 1; }, std::chrono::seconds(10)));
    const std::uint64_t run = status_value("run_queue");
    INFO("RUN_QUEUE 0x" << std::hex << run);
    CHECK(run == (TPU_RUN_RUNNING | DRM_TPU_PRIORITY_HIGH));
    hold.release();

    CHECK(status_of(*urgent) == TPU_ERR_NONE);
    CHECK(high.copied());
    for (const auto &job : lows)
        CHECK(status_of(*job) == TPU_ERR_NONE);

    // Each priority went to its queue.
    CHECK(queue_value(0, "last_seqno") == low_seqno + lows.size());
    CHECK(queue_value(DRM_TPU_PRIORITY_HIGH, "last_seqno") == high_seqno + 1);
    // The first low-priority job ended before the urgent one started.
    CHECK(fences::fence_timestamp(lows.front()->sync_file()) <
          fences::fence_timestamp(urgent->sync_file()));
}

TEST_CASE("jobs of one priority from several files share its queue in order",
          "[queues][priority]") {
    Tenant a(0x71), b(0x72);
    auto first = a.copy(1);
    auto second = b.copy(1);
    CHECK(status_of(*first) == TPU_ERR_NONE);
    CHECK(status_of(*second) == TPU_ERR_NONE);
    CHECK(a.copied());
    CHECK(b.copied());
    CHECK(fences::fence_timestamp(first->sync_file()) <=
          fences::fence_timestamp(second->sync_file()));
}

TEST_CASE("a job hung on one queue costs only that queue a reset", "[queues][reset]") {
    const std::uint64_t resets = status_value("resets");
    const std::uint64_t card_resets = status_value("card_resets");
    std::vector<std::uint64_t> queue_resets;
    for (unsigned q = 0; q < 4; q++)
        queue_resets.push_back(queue_value(q, "resets"));

    Tenant guilty(0x11), neighbour(0x22), other(0x33);
    // A job of another file on another queue before the hang: ends at once.
    auto early = other.copy(DRM_TPU_PRIORITY_HIGH);
    CHECK(status_of(*early) == TPU_ERR_NONE);

    uapi::CardHold hold(kHangAt);
    auto hung = guilty.busy(kHangMatmuls, DRM_TPU_PRIORITY_LOW);
    // Behind the hung job in its queue: a job of its own file and one of another file.
    auto own = guilty.copy(DRM_TPU_PRIORITY_LOW);
    auto innocent = neighbour.copy(DRM_TPU_PRIORITY_LOW);
    // Jobs of a third file on other queues while the job hangs.
    std::vector<std::unique_ptr<FencedJob>> others;
    for (std::uint32_t priority = 1; priority <= DRM_TPU_PRIORITY_MAX; priority++)
        others.push_back(other.copy(priority));

    CHECK(status_of(*hung) == DRM_TPU_JOB_TIMEOUT);
    CHECK(status_of(*own) == TPU_ERR_NONE);
    CHECK(guilty.copied());
    CHECK(status_of(*innocent) == TPU_ERR_NONE);
    CHECK(neighbour.copied());
    for (const auto &job : others)
        CHECK(status_of(*job) == TPU_ERR_NONE);
    CHECK(other.copied());

    // One reset, of queue 0 only: the jobs of the other queues were neither run again nor
    // cancelled.
    CHECK(status_value("resets") == resets + 1);
    CHECK(status_value("card_resets") == card_resets);
    CHECK(queue_value(0, "resets") == queue_resets[0] + 1);
    for (unsigned q = 1; q < 4; q++) {
        INFO("queue " << q);
        CHECK(queue_value(q, "resets") == queue_resets[q]);
    }
    // The queue goes on.
    auto after = guilty.copy(DRM_TPU_PRIORITY_LOW);
    CHECK(status_of(*after) == TPU_ERR_NONE);
    CHECK(queue_value(0, "status") == TPU_QSTAT_ACTIVE);
}

TEST_CASE("a file whose jobs keep hanging on a queue is banned, other queues go on",
          "[queues][ban]") {
    Tenant guilty(0x44), other(0x55);
    uapi::CardHold hold(kHangAt);
    std::vector<std::unique_ptr<FencedJob>> hangs;
    for (std::uint32_t i = 0; i < 3; i++)
        hangs.push_back(guilty.busy(kHangMatmuls, 2));
    auto queued = guilty.copy(2);
    auto innocent = other.copy(DRM_TPU_PRIORITY_HIGH);

    // Each hung job in turn is held; while it is, the hold is armed again for the next one (the
    // timeout comes a second after the job started). The last one needs no watching: the hold
    // armed while its predecessor was held holds it (watching it too would have to catch it
    // within its one second on a loaded host).
    std::uint64_t held_seqno = 0;
    for (std::size_t i = 0; i < hangs.size(); i++) {
        INFO("hung job " << i);
        if (i + 1 < hangs.size()) {
            REQUIRE(hold.wait_next_held(&held_seqno));
            hold.arm(kHangAt);
        }
        CHECK(status_of(*hangs[i]) == DRM_TPU_JOB_TIMEOUT);
    }
    CHECK(status_of(*queued) == DRM_TPU_JOB_CANCELED);
    CHECK_FALSE(guilty.copied());
    try {
        guilty.copy(DRM_TPU_PRIORITY_LOW);
        FAIL("SUBMIT of a banned file succeeded");
    } catch (const std::exception &error) {
        CHECK(std::string(error.what()).find(std::strerror(ECANCELED)) != std::string::npos);
    }
    CHECK(status_of(*innocent) == TPU_ERR_NONE);
    CHECK(other.copied());
}

TEST_CASE("a reset requested through debugfs costs only the queue of the job the card runs",
          "[queues][request]") {
    const std::uint64_t resets = status_value("resets");
    const std::uint64_t card_resets = status_value("card_resets");
    std::vector<std::uint64_t> queue_resets;
    for (unsigned q = 0; q < 4; q++)
        queue_resets.push_back(queue_value(q, "resets"));

    // Three jobs on each queue (priority p goes to queue p): the card runs one of them, held
    // (the test-only card_hold), when the reset comes, the others wait in their rings.
    Tenant t(0x91);
    uapi::CardHold hold(kHangAt);
    std::vector<std::pair<unsigned, std::unique_ptr<FencedJob>>> jobs;
    for (int round = 0; round < 3; round++)
        for (std::uint32_t priority = 0; priority <= DRM_TPU_PRIORITY_MAX; priority++)
            jobs.emplace_back(priority, t.busy(kHangMatmuls, priority));
    REQUIRE(hold.wait_held());
    const std::uint64_t run = status_value("run_queue");
    INFO("RUN_QUEUE 0x" << std::hex << run);
    REQUIRE((run & TPU_RUN_RUNNING) != 0);
    std::ofstream(uapi::debugfs_dir() + "/reset") << "1\n";

    unsigned canceled = 0, canceled_queue = 4;
    for (const auto &[queue, job] : jobs) {
        const std::uint32_t status = status_of(*job);
        CHECK((status == TPU_ERR_NONE || status == DRM_TPU_JOB_CANCELED));
        if (status == DRM_TPU_JOB_CANCELED) {
            canceled++;
            canceled_queue = queue;
        }
    }
    // The job the card was running, alone; the others ran (again).
    CHECK(canceled == 1);
    REQUIRE(canceled_queue < 4);
    CHECK(canceled_queue == (run & TPU_RUN_QUEUE_MASK));
    CHECK(status_value("resets") == resets + 1);
    CHECK(status_value("card_resets") == card_resets);
    for (unsigned q = 0; q < 4; q++) {
        INFO("queue " << q << ", the canceled job's " << canceled_queue);
        CHECK(queue_value(q, "resets") == queue_resets[q] + (q == canceled_queue));
        CHECK(queue_value(q, "status") == TPU_QSTAT_ACTIVE);
    }
    auto after = t.copy(canceled_queue);
    CHECK(status_of(*after) == TPU_ERR_NONE);
    CHECK(t.copied());
}

TEST_CASE("a queue that does not come back from its reset escalates to a card reset",
          "[queues][escalation]") {
    const std::uint64_t resets = status_value("resets");
    const std::uint64_t card_resets = status_value("card_resets");
    const std::uint64_t queue0_resets = queue_value(0, "resets");

    Tenant guilty(0x81), neighbour(0x82), other(0x83);
    // CLOCK_MONOTONIC, the clock of the fences' timestamps.
    const std::int64_t submitted = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now().time_since_epoch())
                                       .count();
    uapi::CardHold hold(kHangAt);
    auto hung = guilty.busy(kHangMatmuls, DRM_TPU_PRIORITY_LOW);
    // Behind the hung job in its queue: a job of its own file and one of another file.
    auto own = guilty.copy(DRM_TPU_PRIORITY_LOW);
    auto innocent = neighbour.copy(DRM_TPU_PRIORITY_LOW);
    // A third file's jobs on the other queues: the card is busy with the hung job, so they wait
    // in their rings until the card reset, which writes them into the rings again.
    std::vector<std::unique_ptr<FencedJob>> others;
    for (std::uint32_t priority = 1; priority <= DRM_TPU_PRIORITY_MAX; priority++)
        others.push_back(other.copy(priority));

    CHECK(status_of(*hung) == DRM_TPU_JOB_TIMEOUT);
    CHECK(fences::fence_status(hung->sync_file()) == -ETIMEDOUT);
    CHECK(status_of(*own) == TPU_ERR_NONE);
    CHECK(guilty.copied());
    CHECK(status_of(*innocent) == TPU_ERR_NONE);
    CHECK(neighbour.copied());
    for (const auto &job : others) {
        CHECK(status_of(*job) == TPU_ERR_NONE);
        // They waited for the reset: the card held the hung job for the 1 s timeout first.
        CHECK(fences::fence_timestamp(job->sync_file()) >= submitted + 1'000'000'000);
    }
    CHECK(other.copied());

    // The queue reset failed (not counted), the card reset did.
    CHECK(status_value("card_resets") == card_resets + 1);
    CHECK(status_value("resets") == resets + 1);
    CHECK(queue_value(0, "resets") == queue0_resets);

    // The card is usable: every queue is active and runs jobs, a matmul is exact.
    for (unsigned q = 0; q < 4; q++) {
        INFO("queue " << q);
        CHECK(queue_value(q, "status") == TPU_QSTAT_ACTIVE);
    }
    Tenant after(0x84);
    for (std::uint32_t priority = 0; priority <= DRM_TPU_PRIORITY_MAX; priority++) {
        auto job = after.copy(priority);
        CHECK(status_of(*job) == TPU_ERR_NONE);
        CHECK(after.copied());
    }
    const std::uint32_t m = 37, k = 129, n = 65;
    const auto a = tpurt::random_int8(std::size_t{m} * k, 7);
    const auto b = tpurt::random_int8(std::size_t{k} * n, 8);
    std::vector<std::int32_t> got(std::size_t{m} * n), want(got.size());
    tpurt::matmul(after.device, a, b, got, m, k, n);
    tpurt::reference_matmul(a, b, want, m, k, n);
    CHECK(got == want);
}

TEST_CASE("a priority out of range is refused with EINVAL", "[queues][uapi]") {
    Tenant t(0x66);
    try {
        t.copy(DRM_TPU_PRIORITY_MAX + 1);
        FAIL("SUBMIT with priority DRM_TPU_PRIORITY_MAX + 1 succeeded");
    } catch (const std::exception &error) {
        CHECK(std::string(error.what()).find(std::strerror(EINVAL)) != std::string::npos);
    }
}
