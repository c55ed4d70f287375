// SPDX-License-Identifier: MIT
// progress.cpp - formatting and throttling of the progress line.
#include "tpu_report/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace tpu_report {

namespace {

constexpr int bar_width = 24;
constexpr double redraw_interval = 0.1;

double steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

std::string format_duration(double seconds) {
    const long s = seconds > 0 ? long(std::lround(seconds)) : 0;
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

Progress::Progress(std::string label, std::size_t total, std::ostream &out, bool terminal,
                   Clock clock)
    : label_(std::move(label)), total_(total), out_(out), terminal_(terminal),
      clock_(clock ? std::move(clock) : Clock(steady_seconds)), start_(clock_()) {}

bool Progress::stdout_is_terminal() {
    return isatty(STDOUT_FILENO) == 1;
}

double Progress::elapsed() const {
    return clock_() - start_;
}

std::string Progress::line(std::size_t done, double loss, double accuracy) const {
    const double frac = total_ ? double(done) / double(total_) : 1.0;
    const int filled = int(frac * bar_width);
    const double t = elapsed();
    const double rate = t > 0 ? double(done) / t : 0.0;
    std::string bar(std::size_t(filled), '#');
    bar.append(std::size_t(bar_width - filled), '.');
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s [%s] %3d%% loss %.4f acc %5.1f%% %8.0f samples/s",
                  label_.c_str(), bar.c_str(), int(frac * 100), loss, accuracy * 100, rate);
    std::string s = buf;
    if (done < total_ && rate > 0)
        s += " ETA " + format_duration(double(total_ - done) / rate);
    else
        s += " in " + format_duration(t);
    return s;
}

void Progress::update(std::size_t done, double loss, double accuracy) {
    if (terminal_) {
        const double now = clock_();
        if (last_draw_ >= 0 && now - last_draw_ < redraw_interval)
            return;
        last_draw_ = now;
        out_ << '\r' << line(done, loss, accuracy) << "\033[K" << std::flush;
        return;
    }
    const std::size_t tenth = total_ ? done * 10 / total_ : 10;
    if (tenth < 1 || tenth < next_plain_ || done >= total_)
        return;
    next_plain_ = tenth + 1;
    out_ << line(done, loss, accuracy) << '\n' << std::flush;
}

void Progress::finish(double loss, double accuracy) {
    if (terminal_)
        out_ << '\r' << line(total_, loss, accuracy) << "\033[K\n" << std::flush;
    else
        out_ << line(total_, loss, accuracy) << '\n' << std::flush;
}

} // namespace tpu_report
