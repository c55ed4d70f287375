// SPDX-License-Identifier: MIT
// progress.hpp - the progress line of a long run (an epoch of training, an evaluation): a bar
// with the fraction done, loss, accuracy, samples per second and the time left. On a terminal
// it redraws one line in place (at most ten times a second); otherwise it writes a plain line at
// every tenth of the work, so logs stay readable.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

namespace tpu_report {

class Progress {
  public:
    using Clock = std::function<double()>; // seconds, monotonic

    // `label` prefixes every line (e.g. "epoch 3/10"); `total` is the number of samples.
    // `terminal` chooses in-place redraws; `clock` defaults to std::chrono::steady_clock.
    Progress(std::string label, std::size_t total, std::ostream &out, bool terminal,
             Clock clock = {});

    // Records that `done` samples are through, with the running loss and accuracy (0..1).
    void update(std::size_t done, double loss, double accuracy);
    // Writes the final line for the whole run, ending it with a newline.
    void finish(double loss, double accuracy);

    double elapsed() const;

    // Whether standard output is a terminal (for the `terminal` argument).
    static bool stdout_is_terminal();

  private:
    std::string line(std::size_t done, double loss, double accuracy) const;

    std::string label_;
    std::size_t total_;
    std::ostream &out_;
    bool terminal_;
    Clock clock_;
    double start_;
    double last_draw_ = -1.0;
    std::size_t next_plain_ = 0; // plain mode: the next tenth to report
};

// "m:ss" or "h:mm:ss".
std::string format_duration(double seconds);

} // namespace tpu_report
