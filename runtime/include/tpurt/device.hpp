// SPDX-License-Identifier: MIT
// device.hpp - tpurt::Device: finding and opening a TPU card (/dev/accel/accelN driven by
// tpu.ko), its properties and counters, buffer allocation and job submission.
#pragma once

#include "tpurt/card/buffer.hpp"
#include "tpurt/card/job.hpp"
#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tpurt {

class Device;
class Executable;

namespace detail {
class Backend;
struct DeviceState;
class PooledBuffer;
DeviceState &state_of(const Device &device);
} // namespace detail

// The runtime's own bookkeeping for one device (shared by every copy of the Device).
struct RuntimeStats {
    std::size_t executables_cached = 0;        // compiled ops kept for reuse
    std::uint64_t compilations = 0;            // ops compiled so far (a cache miss each)
    std::uint64_t program_buffers_created = 0; // buffer objects made for jobs' programs
    std::uint64_t staging_buffers_created = 0; // ... and for staging host arrays
    std::size_t staging_bytes_cached = 0;      // idle staging buffers kept for reuse
};

// The card Device::open_in_process() runs: the QEMU card's defaults (its mxu-rows, mxu-cols,
// ub-size, acc-size, clock-mhz, threads and engine-mode properties).
struct InProcessConfig {
    std::uint32_t mxu_rows = 128;
    std::uint32_t mxu_cols = 128;
    std::uint32_t ub_bytes = 8u << 20;
    std::uint32_t acc_bytes = 4u << 20;
    std::uint32_t clock_mhz = 700;
    std::uint32_t threads = 0; // the engine's worker threads, 0: one per host CPU
    bool cycle_accurate = false;
    // A job of a card on a fabric (open_in_process_fabric) that runs longer is aborted and the
    // card reset, its status DRM_TPU_JOB_TIMEOUT, as tpu.ko's job_timeout_ms does (a RECV whose
    // message never comes); 0: never.
    std::uint32_t job_timeout_ms = 10000;
};

// In-process cards joined by one fabric (spec 2.0, docs/hardware.md section 10): the
// `tpu-ici` object's properties.
struct FabricConfig {
    bool torus = false;      // a 2-D torus of dim_x x dim_y cards, else a ring of dim_x
    std::uint32_t dim_x = 2; // 2..64
    std::uint32_t dim_y = 1; // a torus: 2..64
    std::uint32_t link_gbps = 400;
    std::uint32_t hop_ns = 1000;
    std::uint32_t credits = 256;
    // A torus's y links (spec 2.4), e.g. slower links between servers; 0: as the x links.
    std::uint32_t y_link_gbps = 0;
    std::uint32_t y_hop_ns = 0;
};

class Device {
  public:
    // Every TPU card the process can open, in /dev/accel order (their index is open()'s).
    static std::vector<DeviceInfo> list();
    // Opens the index-th TPU card. Throws Error(NoDevice) if there is none, with what to do.
    static Device open(unsigned index = 0);
    // Opens a specific node, e.g. "/dev/accel/accel1"; throws if it is not a TPU.
    static Device open_path(const std::string &path);
    // The card's engine library run inside this process instead of a card behind the driver
    // (host tests and tools; see the runtime README): jobs run when submitted, on the
    // submitting thread, with the driver's statuses and statistics. Defined in the
    // tpurt_engine library (not installed), which a program calling it links as well. Throws
    // Error(InvalidArgument) if the engine refuses `config`.
    static Device open_in_process(const InProcessConfig &config = {});
    // dim_x x dim_y in-process cards (as open_in_process(config)) on one fabric: card i at
    // x = i % dim_x, y = i / dim_x, every link up. Their jobs wait on each other's links, so
    // each card's jobs are submitted from a thread of their own. The fabric lives while any of
    // them does. Throws Error(InvalidArgument) if the engine refuses `fabric` or `config`.
    static std::vector<Device> open_in_process_fabric(const FabricConfig &fabric,
                                                      const InProcessConfig &config = {});
    // Takes the link on `port` of this in-process card down (a job using it ends
    // TPU_ERR_LINK_DOWN) or up again: the tpu-ici object's link-down / link-up. Throws
    // Error(InvalidArgument) for a card on no in-process fabric or a port it does not have.
    void set_link(std::uint32_t port, bool up);
    // Stops the card's running job (TPU_ERR_ABORTED) and empties its receive buffers, as a
    // reset of the card would: true in process; false behind tpu.ko, which offers no such call
    // (its job timeout resets a hung job).
    bool abort_running_job();

    const DeviceInfo &info() const;
    int fd() const; // for raw ioctls next to the runtime; -1 in process
    // Reads the card's cumulative performance counters.
    DeviceCounters counters() const;

    // A buffer of at least `bytes`, with host pages placed on the card's NUMA node.
    Buffer allocate(std::size_t bytes);
    // A buffer of `bytes` (> 0) holding a copy of the bytes at `data`.
    Buffer allocate_copy(const void *data, std::size_t bytes);

    // Copies `program` into a recycled program buffer and queues it. `buffers` are every
    // buffer it reads or writes: the job runs after earlier jobs writing them, and they stay
    // alive until it ends.
    Job submit(const Program &program, std::span<const Buffer *const> buffers);
    Job submit(const Program &program, std::initializer_list<const Buffer *> buffers) {
        return submit(program, std::span<const Buffer *const>(buffers.begin(), buffers.size()));
    }

    // Queues program `index` of `executable` with argument i at device address bases[i]
    // (patched into its copy in a recycled program buffer); `buffers` as for submit().
    Job launch(const Executable &executable, std::size_t index,
               std::span<const std::uint64_t> bases, std::span<const Buffer *const> buffers);

    RuntimeStats runtime_stats() const;

  private:
    friend detail::DeviceState &detail::state_of(const Device &device);
    Device(std::shared_ptr<detail::Backend> backend, DeviceInfo info);
    Job submit_program(std::shared_ptr<detail::PooledBuffer> program, std::size_t bytes,
                       std::span<const Buffer *const> buffers);

    std::shared_ptr<detail::DeviceState> state_;
};

} // namespace tpurt
