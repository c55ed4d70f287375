// SPDX-License-Identifier: MIT
// tpu-ioctl-fuzz - a seeded ioctl fuzzer of tpu.ko, run in the guest (tests/vm: vm_ioctl_fuzz,
// make stress). Several processes, each with its own stream from the seed, issue random and
// mutated ioctls on /dev/accel/accel0: the driver's (fields, flags, handles, sizes, counts,
// pointers: NULL, unmapped, read-only, kernel addresses), random ioctl numbers and sizes, the
// DRM core's GEM and syncobj ioctls, and random programs with random device addresses submitted
// and waited for; now and then a file is closed with its jobs and reopened. Afterwards a matmul
// through the runtime must be exact; the VM harness fails the run on any kernel warning or oops.
// The same seed replays the same streams (prints it first): the choices do not depend on
// timing, only on what the ioctls return (a limit reached while jobs are in flight can differ).
// Exit status: 0 clean, 1 a process died or the matmul was wrong, 2 bad usage.
#include <drm/tpu_accel.h>
#include <tpu_hw.h>
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kScratch = 64 * 1024; // where the kernel may write: never our own data
constexpr std::size_t kMaxFiles = 3;

struct Bo {
    std::uint32_t handle;
    std::uint64_t addr, size;
};

// Pointers handed to the kernel: valid scratch, NULL, unmapped, read-only, kernel addresses.
struct Pointers {
    std::uint8_t *scratch = nullptr;  // kScratch bytes, read-write, then a PROT_NONE page
    std::uint8_t *readonly = nullptr; // one page, PROT_READ
    std::uint8_t *unmapped = nullptr; // one page, PROT_NONE
};

class Fuzzer {
  public:
    Fuzzer(std::uint64_t seed, const char *path) : rng_(seed), path_(path) {
        auto map = [](std::size_t bytes, int prot) {
            void *p = mmap(nullptr, bytes, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) {
                std::perror("mmap");
                _exit(3);
            }
            return static_cast<std::uint8_t *>(p);
        };
        // A PROT_NONE page after the scratch: the kernel faults instead of writing past it.
        ptr_.scratch = map(kScratch + TPU_PAGE_SIZE, PROT_READ | PROT_WRITE);
        mprotect(ptr_.scratch + kScratch, TPU_PAGE_SIZE, PROT_NONE);
        ptr_.readonly = map(TPU_PAGE_SIZE, PROT_READ);
        ptr_.unmapped = map(TPU_PAGE_SIZE, PROT_NONE);
    }

    // Runs `count` operations; returns the number of ioctls issued.
    std::uint64_t run(std::uint64_t count) {
        for (std::uint64_t i = 0; i < count; i++)
            step();
        for (int fd : fds_)
            close(fd);
        return ioctls_;
    }

    const std::map<int, std::uint64_t> &errnos() const { return errnos_; }

  private:
    std::mt19937_64 rng_;
    const char *path_;
    Pointers ptr_;
    std::vector<int> fds_;
    std::map<int, std::vector<Bo>> bos_;             // per fd
    std::map<int, std::vector<std::uint64_t>> jobs_; // per fd
    std::map<int, std::vector<std::uint32_t>> syncobjs_;
    std::map<int, std::uint64_t> errnos_;
    std::uint64_t ioctls_ = 0;

    std::uint64_t rand() { return rng_(); }
    std::uint64_t below(std::uint64_t n) { return n ? rng_() % n : 0; }
    bool chance(unsigned percent) { return below(100) < percent; }

    int fd() {
        if (fds_.empty() || (fds_.size() < kMaxFiles && chance(1))) {
            int f = open(path_, O_RDWR | O_CLOEXEC);
            if (f < 0) {
                errnos_[-errno]++;
                return -1;
            }
            fds_.push_back(f);
        }
        return fds_[below(fds_.size())];
    }

    void close_one() {
        if (fds_.empty())
            return;
        const std::size_t i = below(fds_.size());
        const int f = fds_[i];
        bos_.erase(f);
        jobs_.erase(f);
        syncobjs_.erase(f);
        close(f);
        fds_.erase(fds_.begin() + static_cast<long>(i));
    }

    int do_ioctl(int f, unsigned long request, void *arg) {
        ioctls_++;
        const int ret = ioctl(f, request, arg);
        const int err = ret < 0 ? errno : 0;
        errnos_[err]++;
        return err;
    }

    // A pointer for the kernel to read or write `bytes` at: mostly valid scratch.
    std::uint64_t pointer(std::size_t bytes) {
        switch (below(12)) {
        case 0:
            return 0;
        case 1:
            return reinterpret_cast<std::uintptr_t>(ptr_.unmapped);
        case 2:
            return reinterpret_cast<std::uintptr_t>(ptr_.readonly);
        case 3:
            return 0xffff888000000000ull + below(1ull << 30); // the kernel's direct map
        case 4:
            return 0xffffffff81000000ull; // kernel text
        case 5:
            return reinterpret_cast<std::uintptr_t>(ptr_.scratch) + kScratch - 8; // runs off
        case 6:
            return rand();
        default:
            return reinterpret_cast<std::uintptr_t>(ptr_.scratch) +
                   below(kScratch - std::min(bytes, kScratch));
        }
    }

    std::uint32_t count() {
        switch (below(6)) {
        case 0:
            return 0;
        case 1:
            return 0xffffffffu;
        case 2:
            return 1u << below(32);
        default:
            return static_cast<std::uint32_t>(1 + below(8));
        }
    }

    // A handle: one of the file's BOs or syncobjs, or random.
    std::uint32_t handle(int f) {
        const auto &bos = bos_[f];
        if (!bos.empty() && chance(70))
            return bos[below(bos.size())].handle;
        if (!syncobjs_[f].empty() && chance(30))
            return syncobjs_[f][below(syncobjs_[f].size())];
        return chance(50) ? static_cast<std::uint32_t>(below(64))
                          : static_cast<std::uint32_t>(rand());
    }

    // A device address: inside or around one of the file's BOs, or anywhere.
    std::uint64_t device_addr(int f) {
        const auto &bos = bos_[f];
        if (!bos.empty() && chance(80)) {
            const Bo &bo = bos[below(bos.size())];
            return bo.addr + below(bo.size + TPU_PAGE_SIZE);
        }
        return chance(50) ? below(1ull << TPU_VA_BITS) : rand();
    }

    // Fills `bytes` of scratch with handles of the file, or random words.
    void handles_in_scratch(int f, std::size_t n) {
        auto *words = reinterpret_cast<std::uint32_t *>(ptr_.scratch);
        for (std::size_t i = 0; i < std::min<std::size_t>(n, kScratch / 4); i++)
            words[i] = chance(90) ? handle(f) : static_cast<std::uint32_t>(rand());
    }

    void flip_bits(void *p, std::size_t bytes) {
        auto *b = static_cast<std::uint8_t *>(p);
        for (unsigned i = 0, n = static_cast<unsigned>(below(3)); i < n; i++)
            b[below(bytes)] ^= static_cast<std::uint8_t>(1u << below(8));
    }

    void bo_create(int f) {
        drm_tpu_bo_create args{};
        args.size = chance(90) ? 1 + below(64 * 1024) : rand();
        if (chance(5))
            args.flags = static_cast<std::uint32_t>(rand());
        flip_bits(&args, chance(10) ? sizeof(args) : 0);
        if (do_ioctl(f, DRM_IOCTL_TPU_BO_CREATE, &args) == 0)
            bos_[f].push_back({args.handle, args.device_addr, args.size});
        if (bos_[f].size() > 32)
            gem_close(f, bos_[f].front().handle);
    }

    void gem_close(int f, std::uint32_t h) {
        drm_gem_close args{};
        args.handle = h;
        if (do_ioctl(f, DRM_IOCTL_GEM_CLOSE, &args) == 0) {
            auto &bos = bos_[f];
            for (auto it = bos.begin(); it != bos.end(); ++it)
                if (it->handle == h) {
                    bos.erase(it);
                    break;
                }
        }
    }

    void bo_info(int f) {
        drm_tpu_bo_info args{};
        args.handle = handle(f);
        if (chance(5))
            args.pad = 1;
        do_ioctl(f, DRM_IOCTL_TPU_BO_INFO,
                 chance(5) ? reinterpret_cast<void *>(pointer(32)) : static_cast<void *>(&args));
    }

    void get_param(int f) {
        drm_tpu_get_param args{};
        args.param =
            chance(80) ? static_cast<std::uint32_t>(below(40)) : static_cast<std::uint32_t>(rand());
        if (chance(5))
            args.pad = static_cast<std::uint32_t>(rand());
        do_ioctl(f, DRM_IOCTL_TPU_GET_PARAM, &args);
    }

    void counters(int f) {
        drm_tpu_get_counters args{};
        args.size = chance(70) ? static_cast<std::uint32_t>(8 * below(20))
                               : static_cast<std::uint32_t>(rand());
        args.counters = pointer(args.size);
        if (chance(5))
            args.pad = 1;
        do_ioctl(f, DRM_IOCTL_TPU_COUNTERS, &args);
    }

    // A random program in a new BO of the file: valid opcodes mostly, random operands and
    // device addresses of the file's BOs.
    bool program_bo(int f, Bo &out, std::uint32_t &insns) {
        insns = static_cast<std::uint32_t>(1 + below(24));
        drm_tpu_bo_create create{};
        create.size = std::uint64_t{insns} * TPU_INSN_SIZE;
        if (do_ioctl(f, DRM_IOCTL_TPU_BO_CREATE, &create))
            return false;
        out = {create.handle, create.device_addr, create.size};
        drm_tpu_bo_info info{};
        info.handle = create.handle;
        void *map = MAP_FAILED;
        if (do_ioctl(f, DRM_IOCTL_TPU_BO_INFO, &info) == 0)
            map = mmap(nullptr, create.size, PROT_READ | PROT_WRITE, MAP_SHARED, f,
                       static_cast<off_t>(info.mmap_offset));
        if (map == MAP_FAILED) {
            gem_close(f, create.handle);
            return false;
        }
        auto *prog = static_cast<tpu_insn *>(map);
        for (std::uint32_t i = 0; i < insns; i++) {
            for (auto &w : prog[i].raw)
                w = chance(50) ? rand() : below(256);
            prog[i].hdr.opcode = static_cast<std::uint8_t>(chance(95) ? below(13) : rand());
            prog[i].hdr.dtype = static_cast<std::uint8_t>(chance(90) ? below(4) : rand());
            prog[i].hdr.flags = static_cast<std::uint16_t>(chance(70) ? below(4) : rand());
            for (unsigned k = 1; k < 4; k++)
                if (chance(40))
                    prog[i].raw[k] = device_addr(f);
        }
        if (chance(80))
            prog[insns - 1].raw[0] = TPU_OP_HALT;
        munmap(map, create.size);
        bos_[f].push_back(out);
        return true;
    }

    void submit(int f, bool random_program) {
        drm_tpu_submit args{};
        std::uint32_t insns = 1;
        Bo prog{};
        if (random_program && program_bo(f, prog, insns)) {
            args.program_handle = prog.handle;
            args.program_size = insns * TPU_INSN_SIZE;
        } else {
            args.program_handle = handle(f);
            args.program_size =
                static_cast<std::uint32_t>(chance(50) ? TPU_INSN_SIZE * below(8) : rand());
            args.program_offset = static_cast<std::uint32_t>(chance(70) ? 0 : rand());
        }
        args.bo_count = chance(50) ? static_cast<std::uint32_t>(below(4)) : count();
        handles_in_scratch(f, std::min<std::uint32_t>(args.bo_count, 1024));
        args.bo_handles = chance(90) ? reinterpret_cast<std::uintptr_t>(ptr_.scratch)
                                     : pointer(4ull * args.bo_count);
        if (chance(30)) {
            args.flags |= DRM_TPU_SUBMIT_BO_FLAGS;
            args.bo_flags = pointer(4ull * args.bo_count);
        }
        if (chance(20))
            args.flags |= DRM_TPU_SUBMIT_NO_WAIT;
        if (chance(3))
            args.flags = static_cast<std::uint32_t>(rand());
        if (chance(3))
            args.reserved[below(2)] = rand();
        if (chance(15)) {
            args.in_sync_count = chance(70) ? static_cast<std::uint32_t>(below(3)) : count();
            args.in_syncs = pointer(16ull * args.in_sync_count);
        }
        if (chance(15)) {
            args.out_sync_count = chance(70) ? static_cast<std::uint32_t>(below(3)) : count();
            args.out_syncs = pointer(16ull * args.out_sync_count);
        }
        if (chance(10))
            args.out_syncobj = handle(f);
        if (do_ioctl(f, DRM_IOCTL_TPU_SUBMIT, &args) == 0 && args.job_id)
            jobs_[f].push_back(args.job_id);
        if (random_program && prog.handle && chance(50))
            gem_close(f, prog.handle); // the job holds it
    }

    void wait(int f) {
        drm_tpu_wait args{};
        auto &jobs = jobs_[f];
        const bool known = !jobs.empty() && chance(80);
        const std::size_t i = below(jobs.size());
        args.job_id = known ? jobs[i] : (chance(50) ? below(16) : rand());
        args.timeout_ns = chance(90) ? static_cast<std::int64_t>(below(2'000'000))
                                     : static_cast<std::int64_t>(rand());
        if (chance(5))
            args.flags = static_cast<std::uint32_t>(rand());
        if (chance(3))
            args.reserved = 1;
        // A huge or absolute timeout could wait for long: keep waits bounded.
        if (args.timeout_ns > 200'000'000)
            args.timeout_ns = 200'000'000;
        if (args.flags & DRM_TPU_WAIT_ABSOLUTE)
            args.timeout_ns = 0;
        // Forgotten whatever the WAIT said (it may time out): the stream does not depend on timing.
        do_ioctl(f, DRM_IOCTL_TPU_WAIT, &args);
        if (known)
            jobs.erase(jobs.begin() + static_cast<long>(i));
    }

    void syncobj(int f) {
        if (chance(50) || syncobjs_[f].empty()) {
            drm_syncobj_create args{};
            args.flags = chance(90) ? static_cast<std::uint32_t>(below(2))
                                    : static_cast<std::uint32_t>(rand());
            if (do_ioctl(f, DRM_IOCTL_SYNCOBJ_CREATE, &args) == 0)
                syncobjs_[f].push_back(args.handle);
        } else {
            auto &objs = syncobjs_[f];
            const std::size_t i = below(objs.size());
            drm_syncobj_destroy args{};
            args.handle = objs[i];
            if (do_ioctl(f, DRM_IOCTL_SYNCOBJ_DESTROY, &args) == 0)
                objs.erase(objs.begin() + static_cast<long>(i));
        }
    }

    // Random ioctl numbers and sizes on the driver's range and other types.
    void random_ioctl(int f) {
        const unsigned dir = static_cast<unsigned>(below(4));
        const unsigned type = chance(80) ? DRM_IOCTL_BASE : static_cast<unsigned>(below(256));
        const unsigned nr = chance(80) ? DRM_COMMAND_BASE + static_cast<unsigned>(below(16))
                                       : static_cast<unsigned>(below(256));
        const unsigned size = static_cast<unsigned>(chance(80) ? below(128) : below(1u << 14));
        // Only the driver's own ioctls and -ENOTTY paths: core DRM ioctls as root are left to
        // the kernel's own fuzzing (syzkaller), except the GEM/syncobj ones issued above.
        if (type == DRM_IOCTL_BASE && (nr < DRM_COMMAND_BASE || nr >= DRM_COMMAND_END))
            return;
        for (std::size_t i = 0; i < 256; i++)
            ptr_.scratch[i] = static_cast<std::uint8_t>(chance(50) ? 0 : rand());
        const std::uint64_t arg =
            chance(80) ? reinterpret_cast<std::uintptr_t>(ptr_.scratch) : pointer(size);
        do_ioctl(f, _IOC(dir, type, nr, size), reinterpret_cast<void *>(arg));
    }

    void step() {
        const int f = fd();
        if (f < 0)
            return;
        switch (below(100)) {
        case 0 ... 14:
            bo_create(f);
            break;
        case 15 ... 19:
            gem_close(f, handle(f));
            break;
        case 20 ... 27:
            bo_info(f);
            break;
        case 28 ... 35:
            get_param(f);
            break;
        case 36 ... 41:
            counters(f);
            break;
        case 42 ... 51:
            submit(f, false);
            break;
        case 52 ... 59:
            submit(f, true);
            break;
        case 60 ... 71:
            wait(f);
            break;
        case 72 ... 77:
            syncobj(f);
            break;
        case 78:
            close_one();
            break;
        default:
            random_ioctl(f);
            break;
        }
    }
};

bool matmul_exact(const char *path) {
    tpurt::Device device = tpurt::Device::open_path(path);
    const std::uint32_t m = 33, k = 70, n = 45;
    const auto a = tpurt::random_int8(std::size_t{m} * k, 1);
    const auto b = tpurt::random_int8(std::size_t{k} * n, 2);
    std::vector<std::int32_t> got(std::size_t{m} * n), want(got.size());
    tpurt::matmul(device, a, b, got, m, k, n);
    tpurt::reference_matmul(a, b, want, m, k, n);
    return got == want;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"tpu-ioctl-fuzz: random and mutated ioctls on tpu.ko from several processes"};
    std::uint64_t seed =
        static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    std::uint64_t total = 100000;
    unsigned procs = 4;
    std::string path = "/dev/accel/accel0";
    app.add_option("--seed", seed, "seed of the streams (default: the clock)");
    app.add_option("-n,--ops", total, "operations in all, split over the processes");
    app.add_option("-p,--procs", procs, "processes")->check(CLI::Range(1u, 64u));
    app.add_option("--device", path, "device node");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) ? 2 : 0;
    }
    std::printf("tpu-ioctl-fuzz: seed %llu, %llu operations in %u processes on %s\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(total),
                procs, path.c_str());
    std::fflush(stdout);

    const auto start = std::chrono::steady_clock::now();
    std::vector<pid_t> children;
    for (unsigned p = 0; p < procs; p++) {
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("fork");
            return 1;
        }
        if (pid == 0) {
            Fuzzer fuzzer(seed * 1000003u + p, path.c_str());
            const std::uint64_t ioctls = fuzzer.run(total / procs + (p < total % procs));
            std::string errs;
            for (const auto &[err, n] : fuzzer.errnos())
                errs +=
                    " " +
                    std::string(err ? strerrorname_np(err) ? strerrorname_np(err) : "?" : "ok") +
                    "=" + std::to_string(n);
            std::printf("  process %u: %llu ioctls:%s\n", p,
                        static_cast<unsigned long long>(ioctls), errs.c_str());
            std::fflush(stdout);
            _exit(0);
        }
        children.push_back(pid);
    }
    int rc = 0;
    for (unsigned p = 0; p < procs; p++) {
        int status = 0;
        waitpid(children[p], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::printf("tpu-ioctl-fuzz: process %u died (status 0x%x), seed %llu\n", p, status,
                        static_cast<unsigned long long>(seed));
            rc = 1;
        }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("tpu-ioctl-fuzz: done in %.1f s\n", secs);
    try {
        const bool exact = matmul_exact(path.c_str());
        std::printf("tpu-ioctl-fuzz: matmul after fuzzing %s\n", exact ? "exact" : "WRONG");
        if (!exact)
            rc = 1;
    } catch (const std::exception &e) {
        std::printf("tpu-ioctl-fuzz: matmul after fuzzing failed: %s\n", e.what());
        rc = 1;
    }
    return rc;
}
