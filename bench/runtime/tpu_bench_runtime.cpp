// SPDX-License-Identifier: MIT
// tpu-bench-runtime - libtpurt's overheads measured in the guest, each against a baseline in
// the same run, printed as a table with ratios (nothing asserted; see bench/README.md):
//   empty launch   an empty (HALT) op on a stream + event wait, against the raw round trip:
//                  SUBMIT (NO_WAIT, binary out-syncobj) + DRM_IOCTL_SYNCOBJ_WAIT; and the
//                  stream's own ioctls (SUBMIT with a timeline point + DRM_IOCTL_TPU_WAIT);
//                  the three alternate launch by launch
//   1000 launches  dependent 128^3 fp32 matmuls (x <- I x x) queued on a stream and waited for
//                  once, against the same launches through the blocking API
//   2048^3         a matmul on device tensors through the cached executable (blocking form),
//                  against the same patched programs submitted with raw ioctls (all queued,
//                  then each WAITed): the card's own time plus the driver's minimum; the
//                  card reports modelled cycles per job but no host time, so this is the
//                  honest "engine time" seen from the guest
//   host arrays    the host-array form (staged copies in and out) against the tensor form
// Usage: tpu-bench-runtime [--reps R] [--size N] [--launches L] [--empty E]
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/tpurt.hpp>

#include <drm/tpu_accel.h>
#include <xf86drm.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void check(int ret, const char *what) {
    if (ret != 0)
        throw std::runtime_error(std::string(what) +
                                 " failed: " + std::strerror(ret < 0 ? -ret : ret));
}

struct Row {
    std::string what, baseline;
    double value, base; // seconds (or per-second rates when `rate`)
    const char *unit;
};

std::vector<Row> rows;

void add_row(std::string what, std::string baseline, double value, double base, const char *unit) {
    rows.push_back({std::move(what), std::move(baseline), value, base, unit});
    std::printf("  %-44s %12.1f %-6s  %-40s %12.1f %-6s  ratio %.2f\n", rows.back().what.c_str(),
                value, unit, rows.back().baseline.c_str(), base, unit, value / base);
    std::fflush(stdout);
}

std::shared_ptr<const tpurt::Executable> halt_executable() {
    std::vector<tpurt::Program> programs{tpurt::ProgramBuilder().halt().finish()};
    return std::make_shared<const tpurt::Executable>(
        tpurt::Executable::link("empty", {}, std::move(programs)));
}

// The raw round trip of a HALT job, one at a time (seconds each):
//   Binary    SUBMIT (NO_WAIT, binary out-syncobj), then SYNCOBJ_WAIT: the baseline;
//   Timeline  what a stream makes for the same launch: SUBMIT with a point on a timeline
//             syncobj (the stream's timeline), then DRM_IOCTL_TPU_WAIT on the job (its
//             completion record). The gap between this and the stream is libtpurt's own.
enum class RawSync { Binary, Timeline };

class RawRoundTrip {
  public:
    RawRoundTrip(tpurt::Device &dev, RawSync sync)
        : dev_(dev), sync_(sync), halt_(tpurt::ProgramBuilder().halt().finish()),
          code_(dev.allocate_copy(halt_.insns.data(), halt_.size_bytes())) {
        check(drmSyncobjCreate(dev.fd(), 0, &syncobj_), "drmSyncobjCreate");
    }
    ~RawRoundTrip() { drmSyncobjDestroy(dev_.fd(), syncobj_); }
    RawRoundTrip(const RawRoundTrip &) = delete;
    RawRoundTrip &operator=(const RawRoundTrip &) = delete;

    double once() {
        const auto t = Clock::now();
        const drm_tpu_sync out{syncobj_, 0, ++point_};
        struct drm_tpu_submit submit = {};
        submit.program_handle = code_.handle();
        submit.program_size = static_cast<std::uint32_t>(halt_.size_bytes());
        if (sync_ == RawSync::Binary) {
            submit.flags = DRM_TPU_SUBMIT_NO_WAIT;
            submit.out_syncobj = syncobj_;
        } else {
            submit.out_syncs = reinterpret_cast<std::uintptr_t>(&out);
            submit.out_sync_count = 1;
        }
        check(drmIoctl(dev_.fd(), DRM_IOCTL_TPU_SUBMIT, &submit) ? errno : 0, "SUBMIT");
        if (sync_ == RawSync::Binary) {
            check(drmSyncobjWait(dev_.fd(), &syncobj_, 1, INT64_MAX, 0, nullptr), "SYNCOBJ_WAIT");
        } else {
            struct drm_tpu_wait wait = {};
            wait.job_id = submit.job_id;
            wait.timeout_ns = INT64_MAX;
            check(drmIoctl(dev_.fd(), DRM_IOCTL_TPU_WAIT, &wait) ? errno : 0, "TPU_WAIT");
        }
        return seconds_since(t);
    }

  private:
    tpurt::Device &dev_;
    const RawSync sync_;
    const tpurt::Program halt_;
    tpurt::Buffer code_;
    std::uint32_t syncobj_ = 0;
    std::uint64_t point_ = 0;
};

// The three round trips alternate launch by launch (in a rotating order), so that a change in
// the host's load (the guest runs under TCG on a shared host) hits all three alike; the p50 of
// each over n * reps launches.
void bench_empty(tpurt::Device &dev, unsigned n, unsigned reps) {
    const auto exe = halt_executable();
    tpurt::Stream stream(dev);
    const auto streamed_once = [&] {
        const auto t = Clock::now();
        stream.enqueue({.executable = exe, .bases = {}, .buffers = {}});
        stream.record().wait();
        return seconds_since(t);
    };
    RawRoundTrip binary(dev, RawSync::Binary), timeline(dev, RawSync::Timeline);
    for (unsigned i = 0; i < 20; ++i) // warm the pools
        streamed_once();
    std::vector<double> raw, timed, streamed;
    for (unsigned i = 0; i < n * reps; ++i) {
        for (unsigned k = 0; k < 3; ++k) {
            switch ((i + k) % 3) {
            case 0:
                raw.push_back(binary.once());
                break;
            case 1:
                timed.push_back(timeline.once());
                break;
            default:
                streamed.push_back(streamed_once());
                break;
            }
        }
    }
    add_row("empty launch on a stream + event wait (p50)", "raw SUBMIT + SYNCOBJ_WAIT (p50)",
            median(streamed) * 1e6, median(raw) * 1e6, "us");
    add_row("  its ioctls: SUBMIT (timeline) + TPU_WAIT (p50)", "raw SUBMIT + SYNCOBJ_WAIT (p50)",
            median(timed) * 1e6, median(raw) * 1e6, "us");
}

void bench_launches(tpurt::Device &dev, unsigned launches, unsigned reps) {
    constexpr std::size_t n = 128;
    std::vector<float> identity(n * n, 0.0f), x0(n * n);
    for (std::size_t i = 0; i < n; ++i)
        identity[i * n + i] = 1.0f;
    for (std::size_t i = 0; i < x0.size(); ++i)
        x0[i] = static_cast<float>(i % 97) - 48.0f;
    const tpurt::Tensor a = tpurt::Tensor::from_host<float>(dev, identity, {n, n});
    tpurt::Tensor x[2] = {tpurt::Tensor::from_host<float>(dev, x0, {n, n}),
                          tpurt::Tensor::empty(dev, tpurt::DType::Fp32, {n, n})};
    tpurt::matmul(dev, a, x[0], x[1]); // compile once
    std::vector<double> streamed, blocking;
    tpurt::Stream stream(dev);
    for (unsigned r = 0; r < reps; ++r) {
        auto t = Clock::now();
        for (unsigned i = 0; i < launches; ++i)
            tpurt::matmul(stream, a, x[i % 2], x[(i + 1) % 2]);
        stream.synchronize();
        streamed.push_back(launches / seconds_since(t));
        t = Clock::now();
        for (unsigned i = 0; i < launches; ++i)
            tpurt::matmul(dev, a, x[i % 2], x[(i + 1) % 2]);
        blocking.push_back(launches / seconds_since(t));
    }
    if (x[launches % 2].to_vector<float>() != x0)
        throw std::runtime_error("the chain of identity matmuls changed x");
    add_row(std::to_string(launches) + " dependent 128^3 fp32 launches, stream",
            "the same, blocking API", median(streamed), median(blocking), "/s");
}

// Raw: every program of `exe` patched for the tensors, submitted at once, then each WAITed.
double raw_executable(tpurt::Device &dev, const tpurt::Executable &exe,
                      std::span<const std::uint64_t> bases,
                      const std::vector<const tpurt::Buffer *> &buffers, std::uint64_t *cycles) {
    std::vector<tpurt::Buffer> code;
    std::vector<std::uint32_t> handles;
    for (const tpurt::Buffer *b : buffers)
        handles.push_back(b->handle());
    for (std::size_t p = 0; p < exe.program_count(); ++p) {
        const tpurt::Program program = exe.patched(p, bases);
        code.push_back(dev.allocate_copy(program.insns.data(), program.size_bytes()));
    }
    const auto t = Clock::now();
    std::deque<std::uint64_t> ids;
    *cycles = 0;
    const auto wait_one = [&] {
        struct drm_tpu_wait wait = {};
        wait.job_id = ids.front();
        wait.timeout_ns = 600'000'000'000;
        check(drmIoctl(dev.fd(), DRM_IOCTL_TPU_WAIT, &wait) ? errno : 0, "WAIT");
        if (wait.status != 0)
            throw std::runtime_error("a raw job failed");
        *cycles += wait.cycles;
        ids.pop_front();
    };
    for (std::size_t p = 0; p < exe.program_count(); ++p) {
        if (ids.size() == 32)
            wait_one();
        struct drm_tpu_submit submit = {};
        submit.program_handle = code[p].handle();
        submit.program_size = static_cast<std::uint32_t>(exe.program_bytes(p));
        submit.bo_count = static_cast<std::uint32_t>(handles.size());
        submit.bo_handles = reinterpret_cast<std::uintptr_t>(handles.data());
        check(drmIoctl(dev.fd(), DRM_IOCTL_TPU_SUBMIT, &submit) ? errno : 0, "SUBMIT");
        ids.push_back(submit.job_id);
    }
    while (!ids.empty())
        wait_one();
    return seconds_since(t);
}

void bench_big(tpurt::Device &dev, std::size_t n, tpurt::DType type, unsigned reps) {
    const tpurt::DType out_type = tpurt::accumulator_type(type);
    const tpurt::Tensor a = tpurt::Tensor::empty(dev, type, {n, n});
    const tpurt::Tensor b = tpurt::Tensor::empty(dev, type, {n, n});
    tpurt::Tensor c = tpurt::Tensor::empty(dev, out_type, {n, n});
    const tpurt::OpLaunch launch = tpurt::prepare_matmul(dev, a, b, c);
    const std::vector<const tpurt::Buffer *> buffers = launch.buffer_pointers();
    std::vector<double> runtime, raw;
    std::uint64_t cycles = 0;
    launch.run(dev); // warm
    for (unsigned r = 0; r < reps; ++r) {
        auto t = Clock::now();
        tpurt::matmul(dev, a, b, c);
        runtime.push_back(seconds_since(t));
        raw.push_back(raw_executable(dev, *launch.executable, launch.bases, buffers, &cycles));
    }
    const std::string name = std::string(tpurt::dtype_name(type)) + " " + std::to_string(n) + "^3";
    add_row(name + " on tensors, cached executable", "raw ioctls, the same jobs",
            median(runtime) * 1e3, median(raw) * 1e3, "ms");
    std::printf("  %-44s %12.1f ms modelled (%llu cycles at %u MHz), %zu jobs\n", "",
                double(cycles) * 1e-3 / dev.info().clock_mhz,
                static_cast<unsigned long long>(cycles), dev.info().clock_mhz,
                launch.executable->program_count());
}

void bench_host_arrays(tpurt::Device &dev, std::size_t n, unsigned reps) {
    std::vector<tpurt::Bf16> a(n * n, tpurt::Bf16(1.0f)), b(n * n, tpurt::Bf16(0.5f));
    std::vector<float> c(n * n);
    const tpurt::Tensor ta = tpurt::Tensor::from_host<tpurt::Bf16>(dev, a, {n, n});
    const tpurt::Tensor tb = tpurt::Tensor::from_host<tpurt::Bf16>(dev, b, {n, n});
    tpurt::Tensor tc = tpurt::Tensor::empty(dev, tpurt::DType::Fp32, {n, n});
    const auto m = static_cast<std::uint32_t>(n);
    tpurt::matmul(dev, a, b, c, m, m, m); // warm the staging pool
    std::vector<double> host, tensors, copies;
    for (unsigned r = 0; r < reps; ++r) {
        auto t = Clock::now();
        tpurt::matmul(dev, a, b, c, m, m, m);
        host.push_back(seconds_since(t));
        t = Clock::now();
        tpurt::matmul(dev, ta, tb, tc);
        tensors.push_back(seconds_since(t));
        t = Clock::now();
        tpurt::Tensor(ta).copy_from_host(a.data(), a.size() * 2);
        tpurt::Tensor(tb).copy_from_host(b.data(), b.size() * 2);
        tc.copy_to_host(c.data(), c.size() * 4);
        copies.push_back(seconds_since(t));
    }
    add_row("bf16 " + std::to_string(n) + "^3 on host arrays", "the same on device tensors",
            median(host) * 1e3, median(tensors) * 1e3, "ms");
    std::printf("  %-44s %12.1f ms for the copies alone (A, B in, C out: %.1f MB)\n", "",
                median(copies) * 1e3, double(n * n * 8) / 1e6);
}

unsigned arg_value(int argc, char **argv, const char *name, unsigned fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
            return static_cast<unsigned>(std::strtoul(argv[i + 1], nullptr, 10));
    return fallback;
}

} // namespace

int main(int argc, char **argv) {
    try {
        const unsigned reps = arg_value(argc, argv, "--reps", 3);
        const unsigned size = arg_value(argc, argv, "--size", 2048);
        const unsigned launches = arg_value(argc, argv, "--launches", 1000);
        const unsigned empty = arg_value(argc, argv, "--empty", 300);
        tpurt::Device dev = tpurt::Device::open(0);
        std::printf("tpu-bench-runtime on %s (%ux%u array, %u MHz), medians of %u rounds\n",
                    dev.info().path.c_str(), dev.info().limits.mxu_rows, dev.info().limits.mxu_cols,
                    dev.info().clock_mhz, reps);
        bench_empty(dev, empty, reps);
        bench_launches(dev, launches, reps);
        for (tpurt::DType type : {tpurt::DType::Bf16, tpurt::DType::Int8, tpurt::DType::Fp32})
            bench_big(dev, size, type, reps);
        bench_host_arrays(dev, size, reps);
        std::printf(
            "\n| measurement | value | baseline | value | ratio |\n|---|---|---|---|---|\n");
        for (const Row &row : rows)
            std::printf("| %s | %.1f %s | %s | %.1f %s | %.2f |\n", row.what.c_str(), row.value,
                        row.unit, row.baseline.c_str(), row.base, row.unit, row.value / row.base);
        return 0;
    } catch (const std::exception &error) {
        std::fprintf(stderr, "tpu-bench-runtime: %s\n", error.what());
        return 1;
    }
}
