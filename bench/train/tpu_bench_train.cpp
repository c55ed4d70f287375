// SPDX-License-Identifier: MIT
// tpu-bench-train - the demo's CNN (cnn-28x28x1-c32-c64-d128-10: conv 32, pool, conv 64, pool,
// dense 128, dense 10; Adam; tpu-train's graph trainer, the step captured) trained on the
// in-process card (the host's real engine, Device::open_in_process) on a fixed batch of random
// images: prints the wall time and the modelled card time (the card's cycle counter at its clock)
// per step, and samples/s of each, as one line of key=value pairs that bench_train.py reads
// (bench/README.md), and a digest of the run's results (every step's loss bits and the final fp32
// weights and optimiser state), equal between two builds exactly when those results are bit for bit
// the same.
//
//   tpu-bench-train [--steps N] [--warmup N] [--batch N] [--threads N] [--precision bf16|fp32]
//                   [--eager]
#include <card_params.hpp>
#include <tpu_nn/card_trainer.hpp>
#include <tpu_nn/spec.hpp>
#include <tpurt/tpurt.hpp>

#include <CLI/CLI.hpp>

#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {

// FNV-1a over the bits of every loss and of the flat weights, first and second moments.
std::uint64_t digest(const std::vector<double> &losses, const tpu_train::CardParam &flat) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    const auto add = [&](std::uint64_t bits) {
        for (int i = 0; i < 8; ++i) {
            h ^= (bits >> (8 * i)) & 0xff;
            h *= 0x100000001b3ull;
        }
    };
    for (double l : losses)
        add(std::bit_cast<std::uint64_t>(l));
    for (const tpurt::Tensor *t : {&flat.w, &flat.m, &flat.v})
        for (float f : t->to_vector<float>())
            add(std::bit_cast<std::uint32_t>(f));
    return h;
}

} // namespace

int main(int argc, char **argv) {
    std::size_t steps = 20, warmup = 2, batch = 64;
    unsigned threads = 0;
    std::string precision = "bf16";
    bool eager = false;
    CLI::App app{"tpu-bench-train: the demo's CNN trained on the in-process card, wall and "
                 "modelled card time per step"};
    app.add_option("--steps", steps, "timed training steps")->check(CLI::Range(1, 100000));
    app.add_option("--warmup", warmup, "untimed steps first (the first one captures the step)")
        ->check(CLI::Range(0, 1000));
    app.add_option("--batch", batch, "images a step")->check(CLI::Range(1, 4096));
    app.add_option("--threads", threads, "the engine's worker threads (0: one per host CPU)")
        ->check(CLI::Range(0, 1024));
    app.add_option("--precision", precision, "bf16 (the demo's) or fp32")
        ->check(CLI::IsMember({"bf16", "fp32"}));
    app.add_flag("--eager", eager, "queue every op on its own instead of the captured step");
    CLI11_PARSE(app, argc, argv);

    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec("cnn-28x28x1-c32-c64-d128-10"), 1);
    const std::size_t features = tpu_nn::elements(net.graph().node(0).shape);
    const std::size_t classes = net.graph().node(net.graph().output()).shape[0];
    std::mt19937 rng(1);
    std::normal_distribution<float> pixel(0.0f, 1.0f);
    std::vector<float> x(batch * features);
    for (float &v : x)
        v = pixel(rng);
    std::vector<std::uint8_t> labels(batch);
    for (std::uint8_t &l : labels)
        l = static_cast<std::uint8_t>(rng() % classes);

    try {
        tpurt::Device device = tpurt::Device::open_in_process({.threads = threads});
        tpu_train::OptimizerConfig opt;
        opt.kind = tpu_train::OptimizerKind::Adam;
        opt.lr = 0.001f;
        opt.captured = !eager;
        tpu_nn::CardTrainer card(device, net, opt, tpu_train::parse_precision(precision));
        for (std::size_t i = 0; i < warmup; ++i)
            card.step(x.data(), labels.data(), batch);
        const tpurt::DeviceCounters before = device.counters();
        const auto start = std::chrono::steady_clock::now();
        std::vector<double> losses;
        for (std::size_t i = 0; i < steps; ++i)
            losses.push_back(card.step(x.data(), labels.data(), batch).loss);
        const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
        const tpurt::DeviceCounters after = device.counters();
        tpurt::JobStats work;
        work.cycles = after.cycles - before.cycles;
        work.macs = after.macs - before.macs;
        const double card_s =
            std::chrono::duration<double>(work.modelled_time(device.info())).count();
        const double n = double(steps);
        std::printf("card precision=%s threads=%u steps=%zu batch=%zu wall_ms=%.3f "
                    "wall_samples_s=%.1f modelled_ms=%.3f modelled_samples_s=%.1f "
                    "gmac=%.4f jobs=%.2f mxu_use=%.4f digest=%016llx\n",
                    precision.c_str(), threads, steps, batch, 1000.0 * wall.count() / n,
                    n * double(batch) / wall.count(), 1000.0 * card_s / n,
                    n * double(batch) / card_s, double(work.macs) / n / 1e9,
                    double(after.jobs_done - before.jobs_done) / n, work.utilisation(device.info()),
                    static_cast<unsigned long long>(digest(losses, card.params().flat())));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "tpu-bench-train: %s\n", e.what());
        return 1;
    }
    return 0;
}
