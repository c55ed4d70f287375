// SPDX-License-Identifier: MIT
// fence_helpers.hpp - jobs submitted with raw ioctls on a tpurt::Device's file, each with its
// fence in a syncobj exported as a sync_file, so a test reads the status the kernel's fence
// carries (what syncobj and dma_resv waiters see) next to what DRM_IOCTL_TPU_WAIT reports.
#pragma once

#include <drm/tpu_accel.h>
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/tpurt.hpp>

#include <cstdint>
#include <vector>

namespace fences {

// A job with its fence exported as a sync_file. The destructor closes the sync_file and the
// syncobj but does not wait: the file may be closed with the job still in the ring.
class FencedJob {
  public:
    // `priority`: drm_tpu_submit.priority, DRM_TPU_PRIORITY_LOW (0) .. DRM_TPU_PRIORITY_MAX.
    FencedJob(tpurt::Device &device, const tpurt::Program &program,
              const std::vector<const tpurt::Buffer *> &buffers, std::uint32_t priority = 0);
    ~FencedJob();
    FencedJob(const FencedJob &) = delete;
    FencedJob &operator=(const FencedJob &) = delete;

    std::uint64_t id() const { return id_; }
    int sync_file() const { return sync_file_; }
    // DRM_IOCTL_TPU_WAIT (10 s): the errno, `result` filled on success.
    int wait(struct drm_tpu_wait &result) const;

  private:
    int fd_;
    tpurt::Buffer code_;
    std::uint32_t syncobj_ = 0;
    int sync_file_ = -1;
    std::uint64_t id_ = 0;
};

// Waits up to `seconds` for the fence of a sync_file; returns its status: 1 signalled without
// error, 0 still pending, or the negative errno the fence carries.
int fence_status(int sync_file, double seconds = 60.0);

// CLOCK_MONOTONIC time in ns at which the fence of a signalled sync_file signalled.
std::int64_t fence_timestamp(int sync_file);

// The fence error that goes with a DRM_IOCTL_TPU_WAIT status: 1 (no error) for
// TPU_ERR_NONE, -ETIMEDOUT, -ECANCELED, -EIO for an error the card reported.
int expected_fence_status(std::uint32_t wait_status);

} // namespace fences
