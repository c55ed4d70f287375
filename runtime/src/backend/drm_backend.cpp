// SPDX-License-Identifier: MIT
// drm_backend.cpp - the driver's ioctls: opening a node, its parameters (GET_PARAM) and PCI
// slot and NUMA node (sysfs), counters, buffer objects (BO_CREATE, BO_INFO, mmap, GEM_CLOSE),
// SUBMIT and WAIT. The syncobj calls are in drm_timelines.cpp.
#include "backend/drm_backend.hpp"

#include "backend/numa_placement.hpp"
#include "tpurt/error.hpp"

#include <drm/tpu_accel.h>
#include <tpu_hw.h>
#include <xf86drm.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/mman.h>
#include <system_error>
#include <unistd.h>

namespace tpurt::detail {

static_assert(lowest_priority == DRM_TPU_PRIORITY_LOW && highest_priority == DRM_TPU_PRIORITY_HIGH);
static_assert(job_timeout_status == DRM_TPU_JOB_TIMEOUT &&
              job_canceled_status == DRM_TPU_JOB_CANCELED);

namespace {

unsigned minor_of(const std::string &path) {
    const std::string name = std::filesystem::path(path).filename().string();
    const std::size_t digits = name.find_first_of("0123456789");
    if (digits == std::string::npos)
        return 0;
    return static_cast<unsigned>(std::strtoul(name.c_str() + digits, nullptr, 10));
}

// The card's place on a fabric from tpu.ko's sysfs ici/ (absent on a card on none).
void read_ici(const std::filesystem::path &dir, IciPlace &ici) {
    auto line = [&](const char *name) {
        std::ifstream in(dir / name);
        std::string text;
        std::getline(in, text);
        return text;
    };
    const std::string topology = line("topology");
    if (topology != "ring" && topology != "torus2d")
        return;
    unsigned x = 0, y = 0, dx = 0, dy = 1;
    const std::string coord = line("coord"), dims = line("dims");
    const bool torus = topology == "torus2d";
    if ((torus ? std::sscanf(coord.c_str(), "%u:%u", &x, &y) != 2
               : std::sscanf(coord.c_str(), "%u", &x) != 1) ||
        (torus ? std::sscanf(dims.c_str(), "%ux%u", &dx, &dy) != 2
               : std::sscanf(dims.c_str(), "%u", &dx) != 1))
        return;
    ici.topology = torus ? TPU_ICI_TOPO_TORUS2D : TPU_ICI_TOPO_RING;
    ici.x = x;
    ici.y = y;
    ici.dim_x = dx;
    ici.dim_y = dy;
    ici.ports = static_cast<std::uint32_t>(std::strtoul(line("ports").c_str(), nullptr, 10));
    ici.link_gbps =
        static_cast<std::uint32_t>(std::strtoul(line("link_gbps").c_str(), nullptr, 10));
    ici.hop_ns = static_cast<std::uint32_t>(std::strtoul(line("hop_ns").c_str(), nullptr, 10));
    ici.credits = static_cast<std::uint32_t>(std::strtoul(line("credits").c_str(), nullptr, 10));
    // tpu.ko before spec 2.4 has no y_* files: its links are all alike.
    const std::string y_gbps = line("y_link_gbps"), y_hop = line("y_hop_ns");
    ici.y_link_gbps = y_gbps.empty()
                          ? ici.link_gbps
                          : static_cast<std::uint32_t>(std::strtoul(y_gbps.c_str(), nullptr, 10));
    ici.y_hop_ns = y_hop.empty()
                       ? ici.hop_ns
                       : static_cast<std::uint32_t>(std::strtoul(y_hop.c_str(), nullptr, 10));
}

void read_sysfs(DeviceInfo &info) {
    const std::filesystem::path device =
        "/sys/class/accel/accel" + std::to_string(info.minor) + "/device";
    std::error_code ec;
    const std::filesystem::path pci = std::filesystem::canonical(device, ec);
    if (ec)
        return;
    info.pci_slot = pci.filename().string();
    std::ifstream numa(pci / "numa_node");
    int node = -1;
    if (numa >> node)
        info.numa_node = node;
    read_ici(pci / "ici", info.ici);
}

} // namespace

std::shared_ptr<DrmBackend> DrmBackend::open(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        std::string hint;
        if (err == EACCES || err == EPERM)
            hint = " — run as root or add your user to the group owning " + path;
        throw Error(ErrorCode::DeviceAccess,
                    "cannot open " + path + ": " + std::strerror(err) + hint, err);
    }
    return std::shared_ptr<DrmBackend>(new DrmBackend(fd, path));
}

DrmBackend::~DrmBackend() {
    ::close(fd_);
}

bool DrmBackend::is_tpu() const {
    drmVersionPtr version = drmGetVersion(fd_);
    if (!version)
        return false;
    const bool tpu = version->name && std::strcmp(version->name, "tpu") == 0;
    drmFreeVersion(version);
    return tpu;
}

int DrmBackend::try_ioctl(unsigned long request, void *arg) const {
    return drmIoctl(fd_, request, arg) == 0 ? 0 : errno;
}

void DrmBackend::ioctl(unsigned long request, void *arg, const std::string &what) const {
    const int err = try_ioctl(request, arg);
    if (err != 0)
        throw Error(ErrorCode::SystemCall, what + " on " + path_ + " failed: " + std::strerror(err),
                    err);
}

std::uint64_t DrmBackend::get_param(std::uint32_t param, const char *name) const {
    struct drm_tpu_get_param arg = {};
    arg.param = param;
    ioctl(DRM_IOCTL_TPU_GET_PARAM, &arg, std::string("GET_PARAM ") + name);
    return arg.value;
}

DeviceInfo DrmBackend::query_info() const {
    const auto param32 = [this](std::uint32_t param, const char *name) {
        return static_cast<std::uint32_t>(get_param(param, name));
    };
    DeviceInfo info;
    info.path = path_;
    info.minor = minor_of(path_);
    info.device_id = param32(DRM_TPU_PARAM_DEVICE_ID, "DEVICE_ID");
    info.spec_version = param32(DRM_TPU_PARAM_SPEC_VERSION, "SPEC_VERSION");
    info.caps = param32(DRM_TPU_PARAM_CAPS, "CAPS");
    info.clock_mhz = param32(DRM_TPU_PARAM_CLOCK_MHZ, "CLOCK_MHZ");
    info.limits.mxu_rows = param32(DRM_TPU_PARAM_MXU_ROWS, "MXU_ROWS");
    info.limits.mxu_cols = param32(DRM_TPU_PARAM_MXU_COLS, "MXU_COLS");
    info.limits.ub_bytes = param32(DRM_TPU_PARAM_UB_SIZE, "UB_SIZE");
    info.limits.acc_bytes = param32(DRM_TPU_PARAM_ACC_SIZE, "ACC_SIZE");
    info.va_start = get_param(DRM_TPU_PARAM_VA_START, "VA_START");
    info.va_size = get_param(DRM_TPU_PARAM_VA_SIZE, "VA_SIZE");
    read_sysfs(info);
    return info;
}

DeviceCounters DrmBackend::counters() const {
    DeviceCounters counters;
    counters.cycles = get_param(DRM_TPU_PARAM_CNT_CYCLES, "CNT_CYCLES");
    counters.macs = get_param(DRM_TPU_PARAM_CNT_MACS, "CNT_MACS");
    counters.jobs_done = get_param(DRM_TPU_PARAM_CNT_JOBS_DONE, "CNT_JOBS_DONE");
    counters.jobs_failed = get_param(DRM_TPU_PARAM_CNT_JOBS_FAILED, "CNT_JOBS_FAILED");
    return counters;
}

BackendBuffer DrmBackend::create_buffer(std::size_t bytes, int numa_node) {
    const PreferredNodeScope placement(numa_node);
    struct drm_tpu_bo_create create = {};
    create.size = bytes;
    ioctl(DRM_IOCTL_TPU_BO_CREATE, &create,
          "DRM_IOCTL_TPU_BO_CREATE of " + std::to_string(bytes) + " bytes");
    BackendBuffer buffer{create.handle, create.device_addr, create.size, nullptr};
    try {
        struct drm_tpu_bo_info info = {};
        info.handle = buffer.handle;
        ioctl(DRM_IOCTL_TPU_BO_INFO, &info, "DRM_IOCTL_TPU_BO_INFO");
        void *map = mmap(nullptr, buffer.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                         static_cast<off_t>(info.mmap_offset));
        if (map == MAP_FAILED) {
            const int err = errno;
            throw Error(ErrorCode::SystemCall,
                        "mmap of a " + std::to_string(buffer.size) + "-byte buffer on " + path_ +
                            " failed: " + std::strerror(err),
                        err);
        }
        buffer.map = map;
    } catch (...) {
        release_buffer(buffer);
        throw;
    }
    return buffer;
}

void DrmBackend::release_buffer(const BackendBuffer &buffer) noexcept {
    if (buffer.map)
        munmap(buffer.map, buffer.size);
    struct drm_gem_close close = {};
    close.handle = buffer.handle;
    try_ioctl(DRM_IOCTL_GEM_CLOSE, &close);
}

int DrmBackend::submit(const SubmitRequest &request, std::uint64_t &job_id) {
    drm_tpu_sync in{}, out{};
    struct drm_tpu_submit submit = {};
    submit.program_handle = request.program;
    submit.program_size = request.program_bytes;
    submit.bo_count = static_cast<std::uint32_t>(request.buffers.size());
    submit.bo_handles = reinterpret_cast<std::uintptr_t>(request.buffers.data());
    if (request.wait) {
        in = {request.wait->timeline, 0, request.wait->point};
        submit.in_syncs = reinterpret_cast<std::uintptr_t>(&in);
        submit.in_sync_count = 1;
    }
    if (request.signal) {
        out = {request.signal->timeline, 0, request.signal->point};
        submit.out_syncs = reinterpret_cast<std::uintptr_t>(&out);
        submit.out_sync_count = 1;
    }
    submit.priority = request.priority;
    const int err = try_ioctl(DRM_IOCTL_TPU_SUBMIT, &submit);
    if (err == 0)
        job_id = submit.job_id;
    return err;
}

int DrmBackend::wait(std::uint64_t job_id, std::int64_t timeout_ns, bool absolute,
                     JobRecord &record) {
    struct drm_tpu_wait wait = {};
    wait.job_id = job_id;
    wait.timeout_ns = timeout_ns;
    wait.flags = absolute ? DRM_TPU_WAIT_ABSOLUTE : 0;
    const int err = try_ioctl(DRM_IOCTL_TPU_WAIT, &wait);
    if (err == 0)
        record = {wait.status, wait.error_pc,    wait.fault_addr,    wait.cycles,
                  wait.macs,   wait.link_cycles, wait.link_tx_bytes, wait.link_rx_bytes};
    return err;
}

} // namespace tpurt::detail
