// SPDX-License-Identifier: MIT
// engine_backend.hpp - internal: the Backend of Device::open_in_process(): the card's engine
// library (qemu-device/engine) linked into the process. Buffers are zeroed host pages mapped
// at device addresses in a 3-level page table the engine's MMU walks (its "physical"
// addresses are the process's own addresses); a job runs on the engine when it is submitted,
// on the submitting thread, after the point it waits for, and its completion record (status,
// failing instruction, fault address, cycles, MACs) is kept for the wait, as the driver keeps
// it. Timelines are counters with the syncobj timelines' ordering. An engine on a fabric
// (Device::open_in_process_fabric) has a watchdog that aborts a job running longer than the
// config's job_timeout_ms and resets the engine, as tpu.ko's job timeout does.
#pragma once

#include "backend/backend.hpp"
#include "tpurt/device.hpp"

#include <tpu_engine.h>
#include <tpu_hw.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace tpurt::detail {

class EngineBackend final : public Backend {
  public:
    // Throws Error(InvalidArgument) with the engine's reason if it refuses `config`.
    explicit EngineBackend(const InProcessConfig &config);
    // The engine joined to `fabric` at (x, y); throws Error(InvalidArgument) if it refuses.
    EngineBackend(const InProcessConfig &config, std::shared_ptr<tpu_fabric> fabric,
                  std::uint32_t x, std::uint32_t y);
    ~EngineBackend() override;
    EngineBackend(const EngineBackend &) = delete;
    EngineBackend &operator=(const EngineBackend &) = delete;

    int fd() const override { return -1; }
    const std::string &name() const override { return info_.path; }
    DeviceInfo query_info() const override { return info_; }
    DeviceCounters counters() const override;

    BackendBuffer create_buffer(std::size_t bytes, int numa_node) override;
    void release_buffer(const BackendBuffer &buffer) noexcept override;

    int submit(const SubmitRequest &request, std::uint64_t &job_id) override;
    int wait(std::uint64_t job_id, std::int64_t timeout_ns, bool absolute,
             JobRecord &record) override;

    std::uint32_t create_timeline() override;
    void destroy_timeline(std::uint32_t timeline) noexcept override;
    std::uint64_t timeline_value(std::uint32_t timeline) const override;
    bool wait_timeline(std::uint32_t timeline, std::uint64_t point,
                       std::int64_t deadline_ns) const override;
    void signal_timeline(std::uint32_t timeline, std::uint64_t point) override;
    void import_point(std::uint32_t timeline, std::uint64_t point,
                      const TimelinePoint &from) override;

    bool abort_running() noexcept override;
    std::string set_link(std::uint32_t port, bool up) override;

  private:
    struct alignas(TPU_PAGE_SIZE) PageTable {
        std::uint64_t entries[TPU_PT_ENTRIES] = {};
    };
    struct Timeline {
        std::uint64_t value = 0;       // every point up to this one has signalled
        std::set<std::uint64_t> ahead; // points above value + 1 that have signalled
    };
    struct Import {
        TimelinePoint from, to;
    };
    struct EngineDeleter {
        void operator()(tpu_engine *engine) const { tpu_engine_destroy(engine); }
    };
    using Lock = std::unique_lock<std::mutex>;

    // The leaf entry of `va`, page tables made on the way; mutex_ held.
    std::uint64_t &leaf_entry(std::uint64_t va);
    void map_pages(const BackendBuffer &buffer, std::uint64_t flags);
    bool reached(const TimelinePoint &point) const;
    // Signals `point` and whatever imported points that makes signal; mutex_ held.
    void signal_locked(std::uint32_t timeline, std::uint64_t point);
    // Runs the job on the engine (run_mutex_ held) and keeps its record.
    JobRecord run(const SubmitRequest &request, std::uint64_t program_addr);
    // The watchdog of an engine on a fabric: aborts a job past its deadline.
    void watch();

    struct Watch {
        std::mutex mutex;
        std::condition_variable changed;
        std::optional<std::chrono::steady_clock::time_point> deadline; // a job runs
        bool timed_out = false; // the running job was aborted at its deadline
        bool aborted = false;   // ... or by abort_running()
        bool stopping = false;
    };

    DeviceInfo info_;
    std::shared_ptr<tpu_fabric> fabric_; // outlives the engine, which detaches when destroyed
    std::unique_ptr<tpu_engine, EngineDeleter> engine_;
    std::chrono::milliseconds job_timeout_{0};
    Watch watch_;
    std::thread watchdog_; // engines on a fabric only
    std::mutex run_mutex_; // one job at a time on the engine; held to unmap a buffer
    mutable std::mutex mutex_;
    mutable std::condition_variable signalled_;
    tpu_ctx_entry context_ = {};
    std::vector<std::unique_ptr<PageTable>> tables_; // [0] the root
    std::map<std::uint32_t, BackendBuffer> buffers_;
    std::uint32_t next_handle_ = 1;
    std::uint64_t next_va_ = 0;
    std::map<std::uint64_t, JobRecord> ended_; // jobs not yet waited for
    std::uint64_t next_job_ = 1;
    DeviceCounters counters_;
    std::map<std::uint32_t, Timeline> timelines_;
    std::vector<Import> imports_; // points that signal once another point has
    std::uint32_t next_timeline_ = 1;
};

} // namespace tpurt::detail
