// SPDX-License-Identifier: MIT
// curve_log.hpp - the learning curves of a training run as CSV, one row per epoch, flushed as
// it is written so a plot can be drawn while the run goes on (tools/plot-curves.sh).
//   epoch,train_loss,train_accuracy,test_loss,test_accuracy,seconds,samples_per_second
#pragma once

#include <cstddef>
#include <fstream>
#include <string>

namespace tpu_report {

struct EpochRecord {
    std::size_t epoch = 0;
    double train_loss = 0, train_accuracy = 0; // accuracies as fractions 0..1
    double test_loss = 0, test_accuracy = 0;
    double seconds = 0, samples_per_second = 0;
};

class CurveLog {
  public:
    // Creates (truncates) `path` and writes the header; `append` keeps existing rows (a resumed
    // run). Throws std::runtime_error naming the file if it cannot be written.
    explicit CurveLog(const std::string &path, bool append = false);
    void add(const EpochRecord &r);

  private:
    std::string path_;
    std::ofstream out_;
};

} // namespace tpu_report
