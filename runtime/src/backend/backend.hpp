// SPDX-License-Identifier: MIT
// backend.hpp - internal: everything libtpurt asks of a card, one interface per concept (in
// the spirit of IREE's HAL): its properties and counters, buffer objects at device addresses,
// a job queue (submit a program with its buffers and fences, wait for a job's completion
// record) and timeline fences. Two implementations: the driver's ioctls (drm_backend.*, the
// only file set that issues them) and the card's engine library run in the process
// (engine_backend.*). Device, Buffer, Job and Stream hold a shared Backend.
#pragma once

#include "tpurt/device_info.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tpurt::detail {

// The submission priorities of a job queue (DRM_TPU_PRIORITY_LOW .. _HIGH).
inline constexpr std::uint32_t lowest_priority = 0;
inline constexpr std::uint32_t highest_priority = 3;

// The statuses the driver gives a job the card did not end itself: it hung and was ended by a
// reset (DRM_TPU_JOB_TIMEOUT), or a reset ended it first (DRM_TPU_JOB_CANCELED).
inline constexpr std::uint32_t job_timeout_status = 0x100;
inline constexpr std::uint32_t job_canceled_status = 0x101;

// A buffer object: `size` bytes (whole pages) mapped at `map` in the process and at
// `device_addr` in the card's address space; `handle` names it in submissions (never 0).
struct BackendBuffer {
    std::uint32_t handle = 0;
    std::uint64_t device_addr = 0;
    std::size_t size = 0;
    void *map = nullptr;
};

// What the card reports about a job once it has ended (status TPU_ERR_* or DRM_TPU_JOB_*).
struct JobRecord {
    std::uint32_t status = 0;
    std::uint32_t error_pc = 0;
    std::uint64_t fault_addr = 0;
    std::uint64_t cycles = 0;
    std::uint64_t macs = 0;
    std::uint64_t link_cycles = 0; // spec 2.4 cards (DRM_TPU_CAP_COMPL_LINK) and the engine
    std::uint64_t link_tx_bytes = 0;
    std::uint64_t link_rx_bytes = 0;
};

// A point on a timeline fence.
struct TimelinePoint {
    std::uint32_t timeline = 0;
    std::uint64_t point = 0;
};

// One job: the program (`program_bytes` at the start of buffer `program`), every buffer it
// uses (it runs after earlier jobs writing them), an optional point to wait for before it
// starts and one to signal when it ends.
struct SubmitRequest {
    std::uint32_t program = 0;
    std::uint32_t program_bytes = 0;
    std::span<const std::uint32_t> buffers;
    const TimelinePoint *wait = nullptr;
    const TimelinePoint *signal = nullptr;
    std::uint32_t priority = lowest_priority;
};

// The card's identity, limits and counters.
class CardQuery {
  public:
    virtual ~CardQuery() = default;
    // Names the card in messages: its device node, or what stands for it.
    virtual const std::string &name() const = 0;
    virtual DeviceInfo query_info() const = 0;
    virtual DeviceCounters counters() const = 0;
};

// Buffer objects: created zeroed, mapped into the process and the card's address space.
class BufferAllocator {
  public:
    virtual ~BufferAllocator() = default;
    // At least `bytes` (> 0), host pages on `numa_node` where that means anything (-1: any).
    // Throws Error on failure.
    virtual BackendBuffer create_buffer(std::size_t bytes, int numa_node) = 0;
    // Unmaps and releases it; a job still using it keeps it alive until it ends.
    virtual void release_buffer(const BackendBuffer &buffer) noexcept = 0;
};

// The card's job queue.
class JobQueue {
  public:
    virtual ~JobQueue() = default;
    // Queues the job: 0 and its id in `job_id`, or the errno it was refused with (EDQUOT,
    // ENOSPC, EBUSY: the queue is full for now, try again).
    virtual int submit(const SubmitRequest &request, std::uint64_t &job_id) = 0;
    // Waits until the job ended and fills `record`: 0, ETIMEDOUT (still running after
    // `timeout_ns`, or at `timeout_ns` on CLOCK_MONOTONIC if `absolute`), or another errno
    // (ENOENT: no such job, or it was already waited for).
    virtual int wait(std::uint64_t job_id, std::int64_t timeout_ns, bool absolute,
                     JobRecord &record) = 0;
    // Ends the running job with TPU_ERR_ABORTED and empties the card's receive buffers: true,
    // or false where the backend cannot (tpu.ko has no such call).
    virtual bool abort_running() noexcept { return false; }
    // Takes a link of the card down or up: "", or a message why not (no in-process fabric).
    virtual std::string set_link(std::uint32_t port, bool up) {
        (void)port;
        (void)up;
        return "the card is not on an in-process fabric (tpu-ici's link-down is QEMU's)";
    }
};

// Timeline fences: a point signals after every earlier point of its timeline.
class Timelines {
  public:
    virtual ~Timelines() = default;
    virtual std::uint32_t create_timeline() = 0;
    virtual void destroy_timeline(std::uint32_t timeline) noexcept = 0;
    // The latest point that has signalled.
    virtual std::uint64_t timeline_value(std::uint32_t timeline) const = 0;
    // Waits until `point` has signalled (true) or CLOCK_MONOTONIC reaches `deadline_ns`
    // (false); a point not yet submitted is waited for too.
    virtual bool wait_timeline(std::uint32_t timeline, std::uint64_t point,
                               std::int64_t deadline_ns) const = 0;
    virtual void signal_timeline(std::uint32_t timeline, std::uint64_t point) = 0;
    // Point `point` of `timeline` signals once `from` has (and the earlier points have).
    virtual void import_point(std::uint32_t timeline, std::uint64_t point,
                              const TimelinePoint &from) = 0;
};

class Backend : public CardQuery, public BufferAllocator, public JobQueue, public Timelines {
  public:
    // The device file's descriptor for raw ioctls next to the runtime; -1 without one.
    virtual int fd() const = 0;
};

} // namespace tpurt::detail
