// SPDX-License-Identifier: MIT
// uapi_helpers.hpp - raw-ioctl helpers for the uapi test: the device file, buffer objects made
// without the runtime, program submission and waits, each returning the errno it got.
#pragma once

#include <drm/tpu_accel.h>
#include <tpu_hw.h>
#include <tpurt/codegen/program_builder.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace uapi {

// errno of an ioctl on `fd`, 0 on success.
int ioctl_errno(int fd, unsigned long request, void *arg);

// BO_CREATE of `bytes` on `fd`: the errno, 0 on success (the handle in `handle`).
int create_bo(int fd, std::uint64_t bytes, std::uint32_t &handle);
// GEM_CLOSE of `handle` on `fd`: the errno, 0 on success.
int close_bo(int fd, std::uint32_t handle);

// The file descriptor of the first TPU node (found and kept open by the runtime).
int device_fd();
std::uint64_t get_param(std::uint32_t param);
// A device VA the driver never maps: just below VA_START, or the end of the VA range.
std::uint64_t unmapped_va();

// A buffer object created, looked up and mapped with raw ioctls; closed on destruction.
class RawBo {
  public:
    explicit RawBo(std::uint64_t size);
    ~RawBo();
    RawBo(const RawBo &) = delete;
    RawBo &operator=(const RawBo &) = delete;

    std::uint32_t handle = 0;
    std::uint64_t device_addr = 0;
    std::uint64_t size = 0;
    void *map = nullptr;
};

// A program in its own BO, submitted with `bo_handles`; the BO lives as long as the object.
class SubmittedProgram {
  public:
    SubmittedProgram(const tpurt::Program &program, std::vector<std::uint32_t> bos,
                     std::uint32_t out_syncobj = 0);
    std::uint64_t job_id() const { return job_id_; }

  private:
    RawBo code_;
    std::uint64_t job_id_ = 0;
};

// DRM_IOCTL_TPU_WAIT with a generous timeout; returns the errno and fills `result`.
int wait_job(std::uint64_t job_id, struct drm_tpu_wait &result);

// The debugfs directory (/sys/kernel/debug/accel/<PCI address>) of the card of accel<minor>,
// mounting debugfs if needed; throws std::runtime_error if there is no such device.
std::string debugfs_dir(unsigned minor = 0);

// The value of the "name: value" line `name` of the card's debugfs status file in `dir` (decimal
// or 0x hex); throws std::runtime_error if the file has no such line.
std::uint64_t debugfs_status(const std::string &dir, const std::string &name);

// Writes `value` to the debugfs file `file` of the card whose debugfs directory is `dir`; whether
// the write took.
bool write_debugfs(const std::string &dir, const std::string &file, const char *value);
// While it lives, the card (of accel0, or with the debugfs directory `dir`) fetches no job from
// its rings (debugfs stall_queues, a test hook of make -C driver builds): jobs submitted meanwhile
// are written to the rings and stay there unstarted, their fences unsignalled, however fast the
// host. The card fetches again once it is destroyed, or after a reset of the queue (a job that
// times out meanwhile).
class StalledQueues {
  public:
    explicit StalledQueues(std::string dir = debugfs_dir());
    ~StalledQueues();
    StalledQueues(const StalledQueues &) = delete;
    StalledQueues &operator=(const StalledQueues &) = delete;

  private:
    std::string dir_;
};

// The card's test-only hold (debugfs card_hold and card_release, on a card started with QEMU's
// x-test-hold=on: the vm_* entry's -global tpu.x-test-hold=on): armed for instruction `pc`, the
// next job to reach it waits there, fetched from its ring, started on the card and counted as
// running, until released (or the hold is destroyed) or a reset of its queue or of the card
// aborts it, as it would abort a long job. A test checks that the job is held (wait_held())
// instead of assuming that a big job is still running some time later. Throws
// std::runtime_error if the card has no such register (QEMU started without x-test-hold).
class CardHold {
  public:
    explicit CardHold(unsigned pc, std::string dir = debugfs_dir());
    ~CardHold(); // disarms and lets a held job go
    CardHold(const CardHold &) = delete;
    CardHold &operator=(const CardHold &) = delete;

    // The instruction the held job waits before, -1 if none is held.
    int held() const;
    // Waits until a job is held; whether one is (within `limit`).
    bool wait_held(std::chrono::milliseconds limit = std::chrono::seconds(60)) const;
    // Waits until a job other than the one whose ring seqno is `*seqno` is held (the card's
    // RUN_SEQNO, spec 1.5), and stores its seqno there; whether one is (within `limit`). A job
    // a reset aborted may still read as held a moment after its fence signalled: this tells the
    // next held job from it.
    bool wait_next_held(std::uint64_t *seqno,
                        std::chrono::milliseconds limit = std::chrono::seconds(60)) const;
    // Arms the hold for the next job to reach `pc`; a job held now stays held.
    void arm(unsigned pc);
    // Disarms the hold; a job held now stays held.
    void disarm();
    // Lets the held job go on; the hold stays as armed.
    void release();

  private:
    std::string dir_, file_;
};

// Polls `cond` every 10 ms until it holds or `limit` passed; returns its last value.
template <class Cond> bool wait_for(Cond cond, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > deadline)
            return cond();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

// Whether the child `pid` exited with status 0 within `limit` (else it is left running).
inline bool exited_ok(pid_t pid, std::chrono::milliseconds limit) {
    int status = 0;
    const bool done = wait_for([&] { return waitpid(pid, &status, WNOHANG) == pid; }, limit);
    return done && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace uapi
