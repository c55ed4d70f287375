// SPDX-License-Identifier: MIT
// tpu-bench-gemm: GEMM throughput of the card's engine against oneDNN on the host, in one run.
// For each size (square M = K = N) and dtype (bf16, int8, fp32) it times the engine's fast mode
// through the C API (the tiled GEMM job, and its MXU part: the job minus a DMA-only twin), the
// jobs the runtime compiles for the same matmul, and oneDNN's matmul on the same operands with
// the same thread count, and checks that they agree (the runtime's C bit for bit with the tiled
// job's; oneDNN's int8 exactly, bf16 and fp32 to a relative tolerance, since oneDNN sums in
// another order).
// Then it times the cycle-accurate mode on small sizes in PE updates per second, and the card's
// host <-> unified-buffer DMA through its MMU against memcpy on this host. Prints the
// host (CPU model, matrix ISA flags, the engine's kernel set) and tables, with oneDNN's
// implementation per row; never fails on time.
//
//   tpu-bench-gemm [--threads N] [--reps R] [--mxu DIM] [--sizes 256,...] [--cycle-sizes 128,...]
//                  [--dtypes bf16,int8,fp32] [--dma-kib 4,64,...]
//
// --mxu sets the systolic array to DIM x DIM (default 128, the card's default).
// oneDNN's OpenMP threads run with OMP_WAIT_POLICY=passive unless the environment sets it: by
// default they spin after each matmul and take the core the engine's worker needs in the next,
// alternating round (int8 at 2048^3 with two threads measured 0.50 of oneDNN with "active" and
// 0.81 with "passive" on an Intel Xeon, oneDNN's own rate unchanged).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "engine_dma.hpp"
#include "engine_gemm.hpp"
#include "host_info.hpp"
#include "onednn_gemm.hpp"

namespace {

using namespace tpu::bench;

struct Options {
    int threads = 1;
    int reps = 5;
    uint32_t mxu = 128;
    std::vector<uint32_t> sizes{256, 512, 1024, 2048, 4096};
    std::vector<uint32_t> cycle_sizes{128, 256, 512};
    std::vector<uint8_t> dtypes{TPU_DT_BF16, TPU_DT_INT8, TPU_DT_FP32};
    std::vector<uint32_t> dma_kib{4, 64, 1024, 16384, 65536};
};
constexpr double kForever = 1e30;

void usage() {
    std::fprintf(stderr, "usage: tpu-bench-gemm [--threads N] [--reps R] [--mxu DIM] "
                         "[--sizes A,B,...] [--cycle-sizes A,B,...] [--dtypes bf16,int8,fp32] "
                         "[--dma-kib A,B,...]\n");
    std::exit(2);
}

std::vector<uint32_t> parse_list(const char *s, unsigned long max = 4096) {
    std::vector<uint32_t> out;
    for (const char *p = s; *p;) {
        char *end;
        unsigned long v = std::strtoul(p, &end, 10);
        if (end == p || v == 0 || v > max)
            usage();
        out.push_back(uint32_t(v));
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            usage();
    }
    return out;
}

std::vector<uint8_t> parse_dtypes(const char *s) {
    std::vector<uint8_t> out;
    for (const char *p = s; *p;) {
        const char *end = std::strchr(p, ',');
        const std::string name(p, end ? end : p + std::strlen(p));
        if (name == "bf16")
            out.push_back(TPU_DT_BF16);
        else if (name == "int8")
            out.push_back(TPU_DT_INT8);
        else if (name == "fp32")
            out.push_back(TPU_DT_FP32);
        else
            usage();
        p = end ? end + 1 : p + name.size();
    }
    return out;
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        if (i + 1 >= argc)
            usage();
        const char *value = argv[++i];
        if (arg == "--threads")
            o.threads = std::max(1, std::atoi(value));
        else if (arg == "--mxu")
            o.mxu = uint32_t(std::clamp(std::atoi(value), 1, 4096));
        else if (arg == "--reps")
            o.reps = std::max(1, std::atoi(value));
        else if (arg == "--sizes")
            o.sizes = parse_list(value);
        else if (arg == "--cycle-sizes")
            o.cycle_sizes = parse_list(value);
        else if (arg == "--dtypes")
            o.dtypes = parse_dtypes(value);
        else if (arg == "--dma-kib")
            o.dma_kib = parse_list(value, 1u << 20);
        else
            usage();
    }
    return o;
}

// Random operands in the dtype's encoding: int8 in [-128, 127], floats in [-1, 1] (bf16 by
// truncation).
std::vector<uint8_t> random_matrix(std::mt19937_64 &rng, uint8_t dtype, uint64_t count) {
    std::vector<uint8_t> out(count * elem_bytes(dtype));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (uint64_t i = 0; i < count; i++) {
        if (dtype == TPU_DT_INT8) {
            out[i] = uint8_t(rng());
            continue;
        }
        uint32_t bits = std::bit_cast<uint32_t>(uniform(rng));
        if (dtype == TPU_DT_BF16) {
            uint16_t half = uint16_t(bits >> 16);
            std::memcpy(&out[2 * i], &half, 2);
        } else {
            std::memcpy(&out[4 * i], &bits, 4);
        }
    }
    return out;
}

// "exact" when identical, else the largest difference relative to the largest magnitude.
std::string compare(uint8_t dtype, const std::vector<uint8_t> &x, const std::vector<uint8_t> &y) {
    if (x == y)
        return "exact";
    if (dtype == TPU_DT_INT8 || x.size() != y.size())
        return "MISMATCH";
    double diff = 0, scale = 0;
    for (uint64_t i = 0; i + 4 <= x.size(); i += 4) {
        float a, b;
        std::memcpy(&a, &x[i], 4);
        std::memcpy(&b, &y[i], 4);
        diff = std::max(diff, double(std::fabs(a - b)));
        scale = std::max(scale, double(std::fabs(b)));
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "rel %.1e", scale > 0 ? diff / scale : diff);
    return buf;
}

double ops(uint32_t size) {
    return 2.0 * size * double(size) * size;
}

Gemm square(uint8_t dtype, uint32_t size) {
    return Gemm{dtype, size, size, size, 0x10000000, 0x200000000, 0x400000000};
}

void fast_mode_table(const Options &o, std::mt19937_64 &rng) {
    std::printf("Host: %s (%s)\nMatrix ISA flags: %s\nEngine kernel set: %s\n\n",
                cpu_model().c_str(), cpu_family_model().c_str(), matrix_isa_flags().c_str(),
                engine_kernel_set().c_str());
    std::printf("Fast mode (%ux%u array) vs oneDNN, %d thread(s), best of %d alternating rounds; "
                "GFLOP/s (GOP/s for int8) = 2*M*N*K / time\n",
                o.mxu, o.mxu, o.threads, o.reps);
    std::printf("engine job: the whole GEMM job (DMA in, LOAD_W/MATMUL tiles, DMA out); "
                "engine mxu: the job minus its DMA-only twin;\nruntime: the jobs libtpurt "
                "compiles for the matmul on this card; ratio: engine mxu / oneDNN\n\n");
    std::printf("%6s %5s %12s %12s %12s %12s %7s %10s  %s\n", "size", "dtype", "engine job",
                "engine mxu", "runtime", "oneDNN", "ratio", "check", "oneDNN impl");
    for (uint32_t size : o.sizes) {
        for (uint8_t dtype : o.dtypes) {
            const Gemm g = square(dtype, size);
            const auto a = random_matrix(rng, dtype, uint64_t(size) * size);
            const auto b = random_matrix(rng, dtype, uint64_t(size) * size);
            EngineGemm engine(g, o.mxu, uint32_t(o.threads), TPU_ENGINE_FAST, a.data(), b.data());
            OnednnGemm dnnl(g, o.threads, a.data(), b.data());
            // One untimed round, then rounds that alternate the three so that both sides see
            // the same machine load; the best of each.
            engine.run_runtime();
            const std::vector<uint8_t> runtime_c = engine.c();
            engine.run_gemm();
            dnnl.run();
            std::string check = compare(dtype, engine.c(), dnnl.c());
            if (runtime_c != engine.c())
                check = "RUNTIME DIFFERS";
            engine.run_dma_only();
            double job_s = kForever, dma_s = kForever, runtime_s = kForever, dnnl_s = kForever;
            for (int i = 0; i < o.reps; i++) {
                job_s = std::min(job_s, engine.run_gemm());
                dma_s = std::min(dma_s, engine.run_dma_only());
                runtime_s = std::min(runtime_s, engine.run_runtime());
                dnnl_s = std::min(dnnl_s, dnnl.run());
            }
            const double job = ops(size) / job_s / 1e9;
            const double mxu = job_s > dma_s ? ops(size) / (job_s - dma_s) / 1e9 : 0;
            const double runtime = ops(size) / runtime_s / 1e9;
            const double onednn = ops(size) / dnnl_s / 1e9;
            std::printf("%6u %5s %12.1f %12.1f %12.1f %12.1f %7.2f %10s  %s\n", size,
                        dtype_name(dtype), job, mxu, runtime, onednn, mxu / onednn, check.c_str(),
                        dnnl.impl().c_str());
            std::fflush(stdout);
        }
    }
}

void cycle_mode_table(const Options &o, std::mt19937_64 &rng) {
    std::printf("\nCycle-accurate mode, %d thread(s), one run: PE updates = MXU busy cycles x "
                "array rows x columns\n\n",
                o.threads);
    std::printf("%6s %5s %10s %14s %14s %12s\n", "size", "dtype", "job s", "PE updates/s", "MAC/s",
                "vs fast");
    for (uint32_t size : o.cycle_sizes) {
        for (uint8_t dtype : o.dtypes) {
            const Gemm g = square(dtype, size);
            const auto a = random_matrix(rng, dtype, uint64_t(size) * size);
            const auto b = random_matrix(rng, dtype, uint64_t(size) * size);
            EngineGemm cycle(g, o.mxu, uint32_t(o.threads), TPU_ENGINE_CYCLE_ACCURATE, a.data(),
                             b.data());
            const double seconds = cycle.run_gemm();
            EngineGemm fast(g, o.mxu, uint32_t(o.threads), TPU_ENGINE_FAST, a.data(), b.data());
            fast.run_gemm();
            const tpu_job_result &r = cycle.result();
            const tpu_engine_config &cfg = cycle.config();
            const double pe = double(r.mxu_busy_cycles) * cfg.mxu_rows * cfg.mxu_cols;
            std::printf("%6u %5s %10.3f %14.3e %14.3e %12s\n", size, dtype_name(dtype), seconds,
                        pe / seconds, double(r.macs) / seconds,
                        cycle.c() == fast.c() ? "identical" : "DIFFERENT");
            std::fflush(stdout);
        }
    }
}

void dma_table(const Options &o) {
    std::printf("\nDMA through the device MMU (4 KiB pages, physically scattered), %d thread(s), "
                "best of %d alternating rounds;\nGB/s = bytes / time; ratio: card DMA / memcpy of "
                "the same bytes in the same chunks on this host\n\n",
                o.threads, o.reps);
    std::printf("%10s %12s %12s %12s %9s %9s %8s\n", "bytes", "host->UB", "UB->host", "memcpy",
                "ratio in", "ratio out", "check");
    for (uint32_t kib : o.dma_kib) {
        EngineDma dma(uint64_t(kib) << 10, uint32_t(o.threads));
        const char *check = dma.round_trip_exact() ? "exact" : "DIFFERS";
        double in_s = kForever, out_s = kForever, copy_s = kForever;
        dma.run_in();
        dma.run_out();
        dma.run_memcpy();
        for (int i = 0; i < o.reps; i++) {
            in_s = std::min(in_s, dma.run_in());
            out_s = std::min(out_s, dma.run_out());
            copy_s = std::min(copy_s, dma.run_memcpy());
        }
        const double gb = double(dma.bytes()) / 1e9;
        std::printf("%7u KiB %12.2f %12.2f %12.2f %9.2f %9.2f %8s\n", kib, gb / in_s, gb / out_s,
                    gb / copy_s, copy_s / in_s, copy_s / out_s, check);
        std::fflush(stdout);
    }
}

} // namespace

int main(int argc, char **argv) {
    // libgomp reads its wait policy when it loads: set it, then start again.
    if (!std::getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "passive", 1);
        execv("/proc/self/exe", argv);
        std::perror("tpu-bench-gemm: cannot restart itself with OMP_WAIT_POLICY=passive");
        return 1;
    }
    const Options o = parse(argc, argv);
    std::mt19937_64 rng(2024);
    try {
        fast_mode_table(o, rng);
        if (!o.cycle_sizes.empty())
            cycle_mode_table(o, rng);
        if (!o.dma_kib.empty())
            dma_table(o);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "tpu-bench-gemm: %s\n", e.what());
        return 1;
    }
    return 0;
}
