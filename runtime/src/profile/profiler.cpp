// SPDX-License-Identifier: MIT
// profiler.cpp - the process-wide profiler: records ops while active, starts by itself when
// TPURT_PROFILE names a file, and at exit writes the trace there and prints the per-op table
// to stderr (see profile.hpp).
#include "profile/profiler_record.hpp"

#include "tpurt/error.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

namespace tpurt {

namespace {

class Profiler {
  public:
    Profiler() : origin_(std::chrono::steady_clock::now()) {
        if (const char *path = std::getenv("TPURT_PROFILE"); path && *path) {
            exit_path_ = path;
            active_ = true;
        }
    }
    // At exit (static destruction): the trace to TPURT_PROFILE and the table to stderr.
    ~Profiler() {
        if (exit_path_.empty())
            return;
        const Profile profile = snapshot();
        try {
            write(profile, exit_path_);
            std::fprintf(stderr, "tpurt profile: %zu op calls, trace in %s\n%s", profile.ops.size(),
                         exit_path_.c_str(), profile.table().c_str());
        } catch (const Error &error) {
            std::fprintf(stderr, "tpurt profile: %s\n", error.what());
        }
    }

    static void write(const Profile &profile, const std::string &path) {
        std::ofstream out(path, std::ios::trunc);
        out << profile.to_trace_json() << '\n';
        out.close();
        if (!out) {
            const int err = errno;
            throw Error(ErrorCode::SystemCall,
                        "cannot write the profile to " + path + ": " + std::strerror(err), err);
        }
    }

    std::chrono::steady_clock::time_point origin_;
    std::atomic<bool> active_{false};
    std::string exit_path_;
    std::mutex mutex_;
    Profile profile_;

    Profile snapshot() {
        std::lock_guard lock(mutex_);
        return profile_;
    }
};

// Constructed during static initialisation (so TPURT_PROFILE is seen before main), destroyed
// at exit.
Profiler instance;

} // namespace

namespace detail {

double profile_us(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - instance.origin_).count();
}

void record_op(OpRecord op) {
    std::lock_guard lock(instance.mutex_);
    instance.profile_.ops.push_back(std::move(op));
}

void record_host(HostSpan span) {
    std::lock_guard lock(instance.mutex_);
    instance.profile_.host.push_back(std::move(span));
}

} // namespace detail

namespace profiler {

void start() {
    instance.active_ = true;
}

void stop() {
    instance.active_ = false;
}

bool active() {
    return instance.active_;
}

void clear() {
    std::lock_guard lock(instance.mutex_);
    instance.profile_ = Profile{};
}

Profile snapshot() {
    return instance.snapshot();
}

void write_trace(const std::string &path) {
    Profiler::write(snapshot(), path);
}

} // namespace profiler

} // namespace tpurt
