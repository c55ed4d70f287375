// SPDX-License-Identifier: MIT
// fault_injector.cpp - tpu-inject-faults: runs a command and, while it runs, injects seeded faults
// into a card (accel0, or --card N): resets (debugfs reset: the queue of the running job is reset,
// that job ends DRM_TPU_JOB_CANCELED; on an idle card the whole card is reset) and hangs (debugfs
// stall_queues: the card starts no further job, so the next one times out and the driver resets its
// queue, DRM_TPU_JOB_TIMEOUT), each after a seeded random pause and, with --max-gap-jobs, a seeded
// random number of jobs the card completes (so that work, not time, separates faults). A reset hits
// a job held by the card's test-only hold when QEMU has it (-global tpu.x-test-hold=on), else it
// waits for the card to be busy (at most --busy-wait-ms). Exits with the command's status and
// prints how many faults of each kind it injected. Root only; stall_queues needs the driver's test
// hooks (make -C driver builds).
//   tpu-inject-faults --seed 7 --faults 24 -- tpu-train --model cnn ...
#include "uapi_helpers.hpp"

#include <tpu_hw.h>

#include <CLI/CLI.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// The command: whether it still runs, reaped once it ended.
struct Child {
    pid_t pid;
    bool ended = false;
    int status = 0;
    bool running() {
        if (!ended && waitpid(pid, &status, WNOHANG) == pid)
            ended = true;
        return !ended;
    }
    void wait() {
        while (!ended && waitpid(pid, &status, 0) != pid && errno == EINTR)
            ;
        ended = true;
    }
};

// Resets the card while it runs a job of the command, so that this job ends
// DRM_TPU_JOB_CANCELED. With the card's test-only hold (x-test-hold) the next job is held at its
// first instruction and reset there, so that every reset ends a job; without it, the reset waits
// for the card to be busy (at most `busy_wait_ms`) and may find it idle (the whole card is reset,
// no job ends). Whether the reset was made.
bool reset_running_job(const std::string &dir, Child &child, unsigned busy_wait_ms) {
    if (access((dir + "/card_hold").c_str(), F_OK) == 0) {
        uapi::CardHold hold(0, dir);
        const bool held = uapi::wait_for([&] { return hold.held() >= 0 || !child.running(); },
                                         std::chrono::minutes(10)) &&
                          hold.held() >= 0;
        hold.disarm(); // the job the reset replays must not be held again
        return held && uapi::write_debugfs(dir, "reset", "1");
    }
    uapi::wait_for([&] { return (uapi::debugfs_status(dir, "status") & TPU_STATUS_BUSY) != 0; },
                   std::chrono::milliseconds(busy_wait_ms));
    return uapi::write_debugfs(dir, "reset", "1");
}

} // namespace

int main(int argc, char **argv) {
    std::uint64_t seed = 1;
    unsigned faults = 20, min_gap_ms = 100, max_gap_ms = 600, busy_wait_ms = 2000;
    unsigned min_gap_jobs = 0, max_gap_jobs = 0;
    std::string kinds = "both";
    std::vector<std::string> command;
    CLI::App app("tpu-inject-faults: run a command while injecting card resets and hung jobs");
    app.add_option("--seed", seed, "seed of the pauses and the kinds of fault")
        ->capture_default_str();
    app.add_option("--faults", faults, "faults to inject (fewer if the command ends first)")
        ->capture_default_str();
    app.add_option("--kinds", kinds, "reset, hang or both")
        ->check(CLI::IsMember({"reset", "hang", "both"}))
        ->capture_default_str();
    app.add_option("--min-gap-ms", min_gap_ms, "shortest pause before a fault")
        ->capture_default_str();
    app.add_option("--max-gap-ms", max_gap_ms, "longest pause before a fault")
        ->capture_default_str();
    app.add_option("--min-gap-jobs", min_gap_jobs,
                   "fewest jobs the card completes between two faults (after the pause)")
        ->capture_default_str();
    app.add_option("--max-gap-jobs", max_gap_jobs,
                   "most jobs the card completes between two faults")
        ->capture_default_str();
    unsigned card = 0;
    app.add_option("--card", card, "the card (accel<N>)")->capture_default_str();
    app.add_option("--busy-wait-ms", busy_wait_ms,
                   "without the card's test hold: how long a reset waits for the card to run a job "
                   "before it resets anyway")
        ->capture_default_str();
    app.add_option("command", command, "the command to run")->required();
    CLI11_PARSE(app, argc, argv);
    if (max_gap_ms < min_gap_ms || max_gap_jobs < min_gap_jobs) {
        std::fprintf(stderr, "tpu-inject-faults: a --max-gap-* is below its --min-gap-*\n");
        return 2;
    }

    const std::string dir = uapi::debugfs_dir(card);
    Child child{fork()};
    if (child.pid < 0) {
        std::perror("tpu-inject-faults: fork");
        return 2;
    }
    if (child.pid == 0) {
        std::vector<char *> args;
        for (std::string &a : command)
            args.push_back(a.data());
        args.push_back(nullptr);
        execvp(args[0], args.data());
        std::perror(("tpu-inject-faults: " + command[0]).c_str());
        _exit(127);
    }

    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<unsigned> gap(min_gap_ms, max_gap_ms);
    std::uniform_int_distribution<unsigned> gap_jobs(min_gap_jobs, max_gap_jobs);
    unsigned resets = 0, hangs = 0;
    while (resets + hangs < faults && child.running()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(gap(rng)));
        if (max_gap_jobs > 0) {
            // Work between faults, not time: a slow host gets as far between two faults as a
            // fast one (a trainer replaying from its last recovery point makes progress).
            const std::uint64_t until = uapi::debugfs_status(dir, "jobs_done") + gap_jobs(rng);
            uapi::wait_for(
                [&] { return uapi::debugfs_status(dir, "jobs_done") >= until || !child.running(); },
                std::chrono::hours(24));
            if (!child.running())
                break;
        }
        const bool hang = kinds == "hang" || (kinds == "both" && rng() % 2 == 1);
        if (!hang) {
            if (reset_running_job(dir, child, busy_wait_ms))
                ++resets;
            continue;
        }
        // The next job the card would start times out; the queue's reset lets it fetch again.
        const std::uint64_t before = uapi::debugfs_status(dir, "resets");
        if (!uapi::write_debugfs(dir, "stall_queues", "1")) {
            std::fprintf(stderr,
                         "tpu-inject-faults: cannot stall the card (%s/stall_queues: a "
                         "driver without test hooks?)\n",
                         dir.c_str());
            break;
        }
        uapi::wait_for(
            [&] { return uapi::debugfs_status(dir, "resets") > before || !child.running(); },
            std::chrono::seconds(30));
        uapi::write_debugfs(dir, "stall_queues", "0");
        ++hangs;
    }
    child.wait();
    const int status = child.status;
    std::printf("tpu-inject-faults: injected %u faults (%u resets, %u hangs), seed %llu\n",
                resets + hangs, resets, hangs, static_cast<unsigned long long>(seed));
    if (WIFSIGNALED(status)) {
        std::fprintf(stderr, "tpu-inject-faults: %s killed by signal %d\n", command[0].c_str(),
                     WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}
