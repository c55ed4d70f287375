// SPDX-License-Identifier: MIT
// uapi_helpers.cpp - raw-ioctl helpers for the uapi test (see uapi_helpers.hpp).
#include "uapi_helpers.hpp"

#include <tpurt/device.hpp>

#include <xf86drm.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace uapi {

int ioctl_errno(int fd, unsigned long request, void *arg) {
    return drmIoctl(fd, request, arg) == 0 ? 0 : errno;
}

int create_bo(int fd, std::uint64_t bytes, std::uint32_t &handle) {
    struct drm_tpu_bo_create create = {};
    create.size = bytes;
    const int err = ioctl_errno(fd, DRM_IOCTL_TPU_BO_CREATE, &create);
    handle = create.handle;
    return err;
}

int close_bo(int fd, std::uint32_t handle) {
    struct drm_gem_close close = {};
    close.handle = handle;
    return ioctl_errno(fd, DRM_IOCTL_GEM_CLOSE, &close);
}

int device_fd() {
    static const tpurt::Device device = tpurt::Device::open(0);
    return device.fd();
}

std::uint64_t get_param(std::uint32_t param) {
    struct drm_tpu_get_param arg = {};
    arg.param = param;
    if (const int err = ioctl_errno(device_fd(), DRM_IOCTL_TPU_GET_PARAM, &arg))
        throw std::runtime_error("GET_PARAM " + std::to_string(param) + ": " + std::strerror(err));
    return arg.value;
}

std::uint64_t unmapped_va() {
    const std::uint64_t start = get_param(DRM_TPU_PARAM_VA_START);
    return start >= TPU_PAGE_SIZE ? start - TPU_PAGE_SIZE
                                  : start + get_param(DRM_TPU_PARAM_VA_SIZE);
}

RawBo::RawBo(std::uint64_t bytes) {
    struct drm_tpu_bo_create create = {};
    create.size = bytes;
    if (const int err = ioctl_errno(device_fd(), DRM_IOCTL_TPU_BO_CREATE, &create))
        throw std::runtime_error(std::string("BO_CREATE: ") + std::strerror(err));
    handle = create.handle;
    device_addr = create.device_addr;
    size = create.size;
    struct drm_tpu_bo_info info = {};
    info.handle = handle;
    void *mapped = MAP_FAILED;
    if (ioctl_errno(device_fd(), DRM_IOCTL_TPU_BO_INFO, &info) == 0)
        mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, device_fd(),
                      static_cast<off_t>(info.mmap_offset));
    if (mapped == MAP_FAILED) {
        const int err = errno;
        struct drm_gem_close close = {};
        close.handle = handle;
        ioctl_errno(device_fd(), DRM_IOCTL_GEM_CLOSE, &close);
        throw std::runtime_error(std::string("BO_INFO/mmap: ") + std::strerror(err));
    }
    map = mapped;
}

RawBo::~RawBo() {
    munmap(map, size);
    struct drm_gem_close close = {};
    close.handle = handle;
    ioctl_errno(device_fd(), DRM_IOCTL_GEM_CLOSE, &close);
}

SubmittedProgram::SubmittedProgram(const tpurt::Program &program, std::vector<std::uint32_t> bos,
                                   std::uint32_t out_syncobj)
    : code_(program.size_bytes()) {
    std::memcpy(code_.map, program.insns.data(), program.size_bytes());
    struct drm_tpu_submit submit = {};
    submit.program_handle = code_.handle;
    submit.program_size = static_cast<std::uint32_t>(program.size_bytes());
    submit.bo_count = static_cast<std::uint32_t>(bos.size());
    submit.bo_handles = reinterpret_cast<std::uintptr_t>(bos.data());
    submit.out_syncobj = out_syncobj;
    if (const int err = ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit))
        throw std::runtime_error(std::string("SUBMIT: ") + std::strerror(err));
    job_id_ = submit.job_id;
}

int wait_job(std::uint64_t job_id, struct drm_tpu_wait &result) {
    result = {};
    result.job_id = job_id;
    result.timeout_ns = 10'000'000'000;
    return ioctl_errno(device_fd(), DRM_IOCTL_TPU_WAIT, &result);
}

std::string debugfs_dir(unsigned minor) {
    struct stat st;
    if (stat("/sys/kernel/debug/accel", &st) != 0)
        mount("debugfs", "/sys/kernel/debug", "debugfs", 0, nullptr);
    const std::string link = "/sys/class/accel/accel" + std::to_string(minor) + "/device";
    char target[256] = "";
    const ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
    if (n <= 0)
        throw std::runtime_error(link + ": no card");
    const std::string device(target, std::size_t(n));
    return "/sys/kernel/debug/accel/" + device.substr(device.find_last_of('/') + 1);
}

std::uint64_t debugfs_status(const std::string &dir, const std::string &name) {
    std::ifstream in(dir + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(name + ": ", 0) == 0)
            return std::stoull(line.substr(name.size() + 2), nullptr, 0);
    throw std::runtime_error("no '" + name + "' in " + dir + "/status");
}

bool write_debugfs(const std::string &dir, const std::string &file, const char *value) {
    std::ofstream out(dir + "/" + file);
    out << value;
    out.flush();
    return static_cast<bool>(out);
}

StalledQueues::StalledQueues(std::string dir) : dir_(std::move(dir)) {
    if (!write_debugfs(dir_, "stall_queues", "1"))
        throw std::runtime_error("cannot write 1 to " + dir_ + "/stall_queues");
}

StalledQueues::~StalledQueues() {
    write_debugfs(dir_, "stall_queues", "0");
}

CardHold::CardHold(unsigned pc, std::string dir)
    : dir_(std::move(dir)), file_(dir_ + "/card_hold") {
    if (access(file_.c_str(), F_OK) != 0)
        throw std::runtime_error("no " + file_ +
                                 ": the card has no test-only TEST_HOLD register "
                                 "(boot QEMU with -global tpu.x-test-hold=on)");
    arm(pc);
}

CardHold::~CardHold() {
    write_debugfs(dir_, "card_hold", "-1");
    write_debugfs(dir_, "card_release", "1");
}

int CardHold::held() const {
    std::ifstream in(file_);
    int pc = -1;
    if (!(in >> pc))
        throw std::runtime_error("cannot read " + file_);
    return pc;
}

bool CardHold::wait_held(std::chrono::milliseconds limit) const {
    return wait_for([this] { return held() >= 0; }, limit);
}

bool CardHold::wait_next_held(std::uint64_t *seqno, std::chrono::milliseconds limit) const {
    const auto run_seqno = [this] { return debugfs_status(dir_, "run_seqno"); };
    // RUN_SEQNO first: once it names another job, the previous one is held no more (the card
    // fetches the next job only after the previous one stopped), so a hold is the new job's.
    return wait_for(
        [&] {
            const std::uint64_t running = run_seqno();
            if (running == 0 || running == *seqno || held() < 0)
                return false;
            *seqno = running;
            return true;
        },
        limit);
}

void CardHold::arm(unsigned pc) {
    if (!write_debugfs(dir_, "card_hold", std::to_string(pc).c_str()))
        throw std::runtime_error("cannot write " + std::to_string(pc) + " to " + file_);
}

void CardHold::disarm() {
    if (!write_debugfs(dir_, "card_hold", "-1"))
        throw std::runtime_error("cannot write -1 to " + file_);
}

void CardHold::release() {
    if (!write_debugfs(dir_, "card_release", "1"))
        throw std::runtime_error("cannot write 1 to " + dir_ + "/card_release");
}

} // namespace uapi
