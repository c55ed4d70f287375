// SPDX-License-Identifier: MIT
// checkpoint_crash_test.cpp - checkpoints survive their writer: a process killed with SIGKILL at
// random points while it rewrites a checkpoint over and over always leaves a loadable one (the
// previous or the new), and a write that fails leaves the previous file as it was.
#include <tpu_data/batches.hpp>
#include <tpu_model/checkpoint.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// A checkpoint whose every value is its step: a mix of two versions cannot pass for one.
tpu_model::Checkpoint version(std::uint64_t step) {
    tpu_model::Checkpoint c;
    c.model = "crash-test";
    c.step = step;
    c.tensors = {{"w", {1024, 1024}, std::vector<float>(1024 * 1024, float(step))}};
    return c;
}

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        char templ[] = "/tmp/tpu-ckpt-dir-XXXXXX";
        REQUIRE(mkdtemp(templ) != nullptr);
        path = templ;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

} // namespace

TEST_CASE("a checkpoint writer killed at random points leaves a loadable checkpoint") {
    TempDir dir;
    const std::string path = (dir.path / "checkpoint.tpuckpt").string();
    tpu_model::save_checkpoint(version(0), path);
    tpu_data::SplitMix64 rng(20261205); // pinned: the same kill points every run
    constexpr int kills = 60;
    // How many checkpoints the running writer has completed, shared with it.
    void *shared = mmap(nullptr, sizeof(std::atomic<std::uint64_t>), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(shared != MAP_FAILED);
    auto *written = new (shared) std::atomic<std::uint64_t>(0);
    std::uint64_t last = 0;
    int mid_write = 0;
    for (int i = 0; i < kills; ++i) {
        written->store(0);
        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            // Rewrites the checkpoint with ever newer steps until killed.
            try {
                for (std::uint64_t step = last + 1;; ++step) {
                    tpu_model::save_checkpoint(version(step), path);
                    written->fetch_add(1);
                }
            } catch (...) {
            }
            _exit(1);
        }
        // Killed once it has written one checkpoint, however slow the host (the steps go on),
        // then every other time at a random point, and otherwise as soon as its next write has
        // created the temporary file (inside a write, whatever the host spends around it).
        while (written->load() == 0 && waitpid(child, nullptr, WNOHANG) == 0)
            usleep(1000);
        if (i % 2 == 0)
            usleep(useconds_t(rng.below(40000)));
        else
            while (!std::filesystem::exists(path + ".tmp") && waitpid(child, nullptr, WNOHANG) == 0)
                usleep(100);
        REQUIRE(kill(child, SIGKILL) == 0);
        int status = 0;
        REQUIRE(waitpid(child, &status, 0) == child);
        INFO("kill " << i << ": the writer must have been killed, not have stopped by itself");
        REQUIRE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
        mid_write += std::filesystem::exists(path + ".tmp") ? 1 : 0;

        const tpu_model::Checkpoint back = tpu_model::load_checkpoint(path);
        REQUIRE(back.tensors.size() == 1);
        const std::vector<float> &w = back.tensors[0].data;
        CHECK(std::all_of(w.begin(), w.end(), [&](float v) { return v == float(back.step); }));
        CHECK(back.step >= last);
        last = back.step;
    }
    munmap(shared, sizeof(std::atomic<std::uint64_t>));
    // The kills fell inside writes (a temporary was left behind) and between them (steps went on).
    CHECK(mid_write >= 5);
    CHECK(last >= std::uint64_t(kills));
}

TEST_CASE("a checkpoint write that fails keeps the previous checkpoint") {
    TempDir dir;
    const std::string path = (dir.path / "checkpoint.tpuckpt").string();
    tpu_model::save_checkpoint(version(7), path);
    // The temporary's name taken by a directory: creating it fails.
    std::filesystem::create_directory(path + ".tmp");
    CHECK_THROWS_WITH(tpu_model::save_checkpoint(version(8), path),
                      Catch::Contains(path + ".tmp: cannot create"));
    CHECK(tpu_model::load_checkpoint(path).step == 7);
    std::filesystem::remove(path + ".tmp");
    CHECK_THROWS_WITH(tpu_model::save_checkpoint(version(9), (dir.path / "no/such").string()),
                      Catch::Contains("no/such.tmp: cannot create"));
    tpu_model::save_checkpoint(version(10), path);
    CHECK(tpu_model::load_checkpoint(path).step == 10);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}
