// SPDX-License-Identifier: MIT
// engine_backend.cpp - the in-process card: the engine created from an InProcessConfig, its
// properties, buffers in host memory mapped through the page tables its MMU walks, and jobs
// run on it when submitted (see engine_backend.hpp). The timelines are in
// engine_timelines.cpp.
#include "backend/engine_backend.hpp"

#include "tpurt/error.hpp"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>

namespace tpurt::detail {

namespace {

// The driver's device address space (TPU_VA_START, TPU_VA_SIZE in driver/tpu_drv.h).
constexpr std::uint64_t va_start = 0x100000;
constexpr std::uint64_t va_end = std::uint64_t{1} << TPU_VA_BITS;

// The engine's "physical" memory is the process's: a page-table entry holds the address of a
// page of this process, and the engine reads and writes it in place.
int phys_rw(void *, std::uint64_t addr, void *buf, std::uint64_t len, bool is_write) {
    void *memory = reinterpret_cast<void *>(addr);
    if (is_write)
        std::memcpy(memory, buf, len);
    else
        std::memcpy(buf, memory, len);
    return 0;
}

void *phys_map(void *, std::uint64_t addr, std::uint64_t, bool) {
    return reinterpret_cast<void *>(addr);
}

void phys_unmap(void *, void *, std::uint64_t, bool) {}

std::uint64_t address_of(const void *p) {
    return reinterpret_cast<std::uintptr_t>(p);
}

// The CAPS of the QEMU card of spec TPU_SPEC_VERSION, without TPU_CAP_ICI: an engine in the
// process is on no fabric.
constexpr std::uint32_t in_process_caps = TPU_CAP_INT8 | TPU_CAP_BF16 | TPU_CAP_FP32 | TPU_CAP_VPU |
                                          TPU_CAP_TLB_DONE | TPU_CAP_VPU_TRAIN | TPU_CAP_RUN_INFO |
                                          TPU_CAP_ACT_ERF;

} // namespace

EngineBackend::EngineBackend(const InProcessConfig &config) {
    tpu_engine_config cfg = {};
    cfg.mxu_rows = config.mxu_rows;
    cfg.mxu_cols = config.mxu_cols;
    cfg.ub_bytes = config.ub_bytes;
    cfg.acc_bytes = config.acc_bytes;
    cfg.clock_mhz = config.clock_mhz;
    cfg.threads = config.threads;
    cfg.mode = config.cycle_accurate ? TPU_ENGINE_CYCLE_ACCURATE : TPU_ENGINE_FAST;
    char why[256] = "";
    engine_.reset(tpu_engine_create(&cfg, phys_rw, nullptr, why, sizeof(why)));
    if (!engine_)
        throw Error(ErrorCode::InvalidArgument, std::string("in-process engine: ") + why);
    tpu_engine_set_phys_map(engine_.get(), phys_map, phys_unmap);
    tables_.push_back(std::make_unique<PageTable>());
    context_.pt_root = address_of(tables_[0].get()) | TPU_PTE_VALID;
    tpu_engine_set_ctx_table(engine_.get(), address_of(&context_), 1);
    next_va_ = va_start;

    info_.path = "in-process engine";
    info_.device_id = TPU_PCI_DEVICE_ID;
    info_.spec_version = TPU_SPEC_VERSION;
    info_.caps = in_process_caps;
    info_.clock_mhz = config.clock_mhz;
    info_.limits = {config.mxu_rows, config.mxu_cols, config.ub_bytes, config.acc_bytes};
    info_.va_start = va_start;
    info_.va_size = va_end - va_start;
}

EngineBackend::EngineBackend(const InProcessConfig &config, std::shared_ptr<tpu_fabric> fabric,
                             std::uint32_t x, std::uint32_t y)
    : EngineBackend(config) {
    char why[256] = "";
    if (tpu_engine_attach(engine_.get(), fabric.get(), x, y, why, sizeof(why)) != 0)
        throw Error(ErrorCode::InvalidArgument, std::string("in-process fabric: ") + why);
    fabric_ = std::move(fabric);
    tpu_link_info link = {};
    tpu_engine_link_info(engine_.get(), &link);
    info_.caps |= TPU_CAP_ICI;
    info_.path = "in-process engine at " + std::to_string(x) + ":" + std::to_string(y);
    info_.ici = {link.topology, link.ports,       link.x,         link.y,
                 link.dim_x,    link.dim_y,       link.link_gbps, link.hop_ns,
                 link.credits,  link.y_link_gbps, link.y_hop_ns};
    job_timeout_ = std::chrono::milliseconds(config.job_timeout_ms);
    if (job_timeout_.count() > 0)
        watchdog_ = std::thread([this] { watch(); });
}

EngineBackend::~EngineBackend() {
    if (watchdog_.joinable()) {
        {
            std::lock_guard lock(watch_.mutex);
            watch_.stopping = true;
        }
        watch_.changed.notify_all();
        watchdog_.join();
    }
}

void EngineBackend::watch() {
    std::unique_lock lock(watch_.mutex);
    while (!watch_.stopping) {
        if (!watch_.deadline) {
            watch_.changed.wait(lock);
        } else if (std::chrono::steady_clock::now() >= *watch_.deadline) {
            watch_.deadline.reset();
            watch_.timed_out = true;
            tpu_engine_abort(engine_.get());
        } else {
            watch_.changed.wait_until(lock, *watch_.deadline);
        }
    }
}

bool EngineBackend::abort_running() noexcept {
    {
        std::lock_guard lock(watch_.mutex);
        if (watch_.deadline) { // a job runs: run() resets the engine once it has stopped
            watch_.aborted = true;
            tpu_engine_abort(engine_.get());
            return true;
        }
    }
    std::lock_guard run(run_mutex_);
    tpu_engine_reset(engine_.get());
    return true;
}

std::string EngineBackend::set_link(std::uint32_t port, bool up) {
    if (!fabric_)
        return Backend::set_link(port, up);
    char why[256] = "";
    if (tpu_fabric_set_link(fabric_.get(), info_.ici.x, info_.ici.y, port, up, why, sizeof(why)) !=
        0)
        return why;
    return "";
}

DeviceCounters EngineBackend::counters() const {
    std::lock_guard lock(mutex_);
    return counters_;
}

std::uint64_t &EngineBackend::leaf_entry(std::uint64_t va) {
    PageTable *table = tables_[0].get();
    for (unsigned level = 0; level + 1 < TPU_PT_LEVELS; ++level) {
        std::uint64_t &entry = table->entries[TPU_PT_INDEX(va, level)];
        if (!(entry & TPU_PTE_VALID)) {
            tables_.push_back(std::make_unique<PageTable>());
            entry = address_of(tables_.back().get()) | TPU_PTE_VALID;
        }
        table = reinterpret_cast<PageTable *>(entry & TPU_PTE_ADDR_MASK);
    }
    return table->entries[TPU_PT_INDEX(va, TPU_PT_LEVELS - 1)];
}

void EngineBackend::map_pages(const BackendBuffer &buffer, std::uint64_t flags) {
    for (std::uint64_t offset = 0; offset < buffer.size; offset += TPU_PAGE_SIZE)
        leaf_entry(buffer.device_addr + offset) =
            flags ? address_of(static_cast<char *>(buffer.map) + offset) | flags : 0;
}

BackendBuffer EngineBackend::create_buffer(std::size_t bytes, int) {
    const std::size_t size = (bytes + TPU_PAGE_SIZE - 1) & ~(TPU_PAGE_SIZE - 1);
    void *map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        const int err = errno;
        throw Error(ErrorCode::SystemCall,
                    "mmap of a " + std::to_string(size) + "-byte buffer for " + info_.path +
                        " failed: " + std::strerror(err),
                    err);
    }
    // No job runs while the page tables change.
    std::lock_guard run(run_mutex_);
    std::lock_guard lock(mutex_);
    if (size > va_end - next_va_) {
        munmap(map, size);
        throw Error(ErrorCode::SystemCall,
                    "no room for a " + std::to_string(size) + "-byte buffer in the device " +
                        "address space of " + info_.path,
                    ENOSPC);
    }
    const BackendBuffer buffer{next_handle_++, next_va_, size, map};
    next_va_ += size + TPU_PAGE_SIZE; // an unmapped page after each buffer catches overruns
    map_pages(buffer, TPU_PTE_VALID | TPU_PTE_READ | TPU_PTE_WRITE);
    buffers_[buffer.handle] = buffer;
    return buffer;
}

void EngineBackend::release_buffer(const BackendBuffer &buffer) noexcept {
    {
        std::lock_guard run(run_mutex_);
        std::lock_guard lock(mutex_);
        map_pages(buffer, 0);
        buffers_.erase(buffer.handle);
        tpu_engine_tlb_invalidate(engine_.get(), 0);
    }
    munmap(buffer.map, buffer.size);
}

JobRecord EngineBackend::run(const SubmitRequest &request, std::uint64_t program_addr) {
    std::lock_guard run(run_mutex_);
    {
        std::lock_guard lock(watch_.mutex);
        watch_.deadline = std::chrono::steady_clock::now() + job_timeout_;
        watch_.timed_out = watch_.aborted = false;
    }
    watch_.changed.notify_all();
    tpu_job_result result = {};
    tpu_engine_run(engine_.get(), 0, program_addr, request.program_bytes, &result);
    JobRecord record{result.status, result.error_pc,    result.fault_addr,    result.cycles,
                     result.macs,   result.link_cycles, result.link_tx_bytes, result.link_rx_bytes};
    std::lock_guard lock(watch_.mutex);
    watch_.deadline.reset();
    if (watch_.timed_out || watch_.aborted) {
        // As tpu.ko after a hung job: the card reset, its receive buffers emptied.
        tpu_engine_reset(engine_.get());
        if (watch_.timed_out)
            record.status = job_timeout_status;
    }
    return record;
}

int EngineBackend::submit(const SubmitRequest &request, std::uint64_t &job_id) {
    Lock lock(mutex_);
    const auto program = buffers_.find(request.program);
    if (program == buffers_.end())
        return ENOENT;
    if (request.program_bytes == 0 || request.program_bytes > TPU_PROGRAM_MAX_BYTES ||
        request.program_bytes % TPU_INSN_SIZE != 0 ||
        request.program_bytes > program->second.size || request.priority > highest_priority)
        return EINVAL;
    for (const std::uint32_t handle : request.buffers)
        if (!buffers_.contains(handle))
            return ENOENT;
    for (const TimelinePoint *point : {request.wait, request.signal})
        if (point && !timelines_.contains(point->timeline))
            return ENOENT;
    const std::uint64_t program_addr = program->second.device_addr;
    // A point that never signals (a stream waiting for itself) ends the job as a card reset
    // would after the driver's job timeout.
    const bool ready = !request.wait || signalled_.wait_for(lock, Job::default_timeout,
                                                            [&] { return reached(*request.wait); });
    lock.unlock();
    JobRecord record;
    if (ready)
        record = run(request, program_addr);
    else
        record.status = job_timeout_status;
    lock.lock();
    counters_.cycles += record.cycles;
    counters_.macs += record.macs;
    ++(record.status == TPU_ERR_NONE ? counters_.jobs_done : counters_.jobs_failed);
    job_id = next_job_++;
    ended_[job_id] = record;
    if (request.signal)
        signal_locked(request.signal->timeline, request.signal->point);
    return 0;
}

int EngineBackend::wait(std::uint64_t job_id, std::int64_t, bool, JobRecord &record) {
    std::lock_guard lock(mutex_);
    const auto it = ended_.find(job_id);
    if (it == ended_.end())
        return ENOENT;
    record = it->second;
    ended_.erase(it);
    return 0;
}

} // namespace tpurt::detail
