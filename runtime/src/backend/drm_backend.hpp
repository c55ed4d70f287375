// SPDX-License-Identifier: MIT
// drm_backend.hpp - internal: the Backend over an open /dev/accel/accelN of tpu.ko, the one
// place the runtime issues the driver's ioctls (GET_PARAM, BO_CREATE / BO_INFO / mmap /
// GEM_CLOSE, SUBMIT, WAIT and the syncobj calls) and turns their failures into tpurt::Error.
#pragma once

#include "backend/backend.hpp"

#include <memory>
#include <string>

namespace tpurt::detail {

class DrmBackend final : public Backend {
  public:
    // Opens `path` read-write; throws Error(DeviceAccess) with the reason if that fails.
    static std::shared_ptr<DrmBackend> open(const std::string &path);
    ~DrmBackend() override;
    DrmBackend(const DrmBackend &) = delete;
    DrmBackend &operator=(const DrmBackend &) = delete;

    // Whether the file is driven by tpu.ko.
    bool is_tpu() const;

    int fd() const override { return fd_; }
    const std::string &name() const override { return path_; }
    DeviceInfo query_info() const override;
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

  private:
    DrmBackend(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    // Issues an ioctl (restarted on EINTR); returns 0 or the errno it failed with.
    int try_ioctl(unsigned long request, void *arg) const;
    // Issues an ioctl; throws Error(SystemCall) naming `what` and the errno on failure.
    void ioctl(unsigned long request, void *arg, const std::string &what) const;
    std::uint64_t get_param(std::uint32_t param, const char *name) const;

    int fd_;
    std::string path_;
};

} // namespace tpurt::detail
