// SPDX-License-Identifier: MIT
// measure_roundtrip - the empty-job round trip through the raw ioctls, measured against
// DRM_IOCTL_VERSION in the same guest run (not a test: it prints figures):
//   version      DRM_IOCTL_VERSION, the cheapest ioctl of the device file
//   syncobj      SUBMIT of a HALT job (DRM_TPU_SUBMIT_NO_WAIT, out-syncobj), then a syncobj wait
//   wait         SUBMIT of a HALT job, then DRM_IOCTL_TPU_WAIT on its id
// Usage: measure_roundtrip [iterations] (default 2000); prints p50, p90 and p99 in microseconds.
#include "guest_programs.hpp"

#include <drm/tpu_accel.h>
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/tpurt.hpp>

#include <xf86drm.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void check(int ret, const char *what) {
    if (ret != 0)
        throw std::runtime_error(what);
}

void report(const char *name, std::vector<double> us) {
    std::sort(us.begin(), us.end());
    auto at = [&](double q) { return us[std::size_t(q * double(us.size() - 1))]; };
    std::printf("%-8s n=%zu p50=%.1f us p90=%.1f us p99=%.1f us\n", name, us.size(), at(0.5),
                at(0.9), at(0.99));
}

template <class Op> std::vector<double> time_each(unsigned n, Op op) {
    std::vector<double> us;
    us.reserve(n);
    for (unsigned i = 0; i < n; i++) {
        const auto start = Clock::now();
        op();
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    return us;
}

} // namespace

int main(int argc, char **argv) {
    const unsigned n = argc > 1 ? unsigned(std::strtoul(argv[1], nullptr, 0)) : 2000;
    tpurt::Device device = tpurt::Device::open(0);
    const int fd = device.fd();
    const tpurt::Program halt = guest::halt_program();
    tpurt::Buffer code = device.allocate_copy(halt.insns.data(), halt.size_bytes());
    std::uint32_t syncobj = 0;
    check(drmSyncobjCreate(fd, 0, &syncobj), "SYNCOBJ_CREATE");

    auto version = [&] {
        struct drm_version v = {};
        check(drmIoctl(fd, DRM_IOCTL_VERSION, &v), "VERSION");
    };
    auto via_syncobj = [&] {
        struct drm_tpu_sync out = {syncobj, 0, 0};
        struct drm_tpu_submit s = {};
        s.program_handle = code.handle();
        s.program_size = std::uint32_t(halt.size_bytes());
        s.flags = DRM_TPU_SUBMIT_NO_WAIT;
        s.out_syncs = reinterpret_cast<std::uintptr_t>(&out);
        s.out_sync_count = 1;
        check(drmIoctl(fd, DRM_IOCTL_TPU_SUBMIT, &s), "SUBMIT");
        check(drmSyncobjWait(fd, &syncobj, 1, INT64_MAX, 0, nullptr), "SYNCOBJ_WAIT");
    };
    auto via_wait = [&] {
        struct drm_tpu_submit s = {};
        s.program_handle = code.handle();
        s.program_size = std::uint32_t(halt.size_bytes());
        check(drmIoctl(fd, DRM_IOCTL_TPU_SUBMIT, &s), "SUBMIT");
        struct drm_tpu_wait w = {};
        w.job_id = s.job_id;
        w.timeout_ns = 10'000'000'000;
        check(drmIoctl(fd, DRM_IOCTL_TPU_WAIT, &w), "WAIT");
    };
    // Warm up the paths once, then measure each in turn.
    version();
    via_syncobj();
    via_wait();
    report("version", time_each(n, version));
    report("syncobj", time_each(n, via_syncobj));
    report("wait", time_each(n, via_wait));
    drmSyncobjDestroy(fd, syncobj);
    return 0;
}
