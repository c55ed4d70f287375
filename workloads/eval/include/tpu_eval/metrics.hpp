// SPDX-License-Identifier: MIT
// metrics.hpp - evaluation of a classifier: the confusion matrix, accuracy, and per-class
// precision, recall and F1 (with their macro averages), printed as a table or saved as CSV.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tpu_eval {

struct ClassMetrics {
    double precision = 0, recall = 0, f1 = 0;
    std::size_t support = 0; // samples whose true class this is
};

class ConfusionMatrix {
  public:
    explicit ConfusionMatrix(std::vector<std::string> class_names);

    void add(std::uint8_t truth, std::uint8_t predicted);
    // Adds a batch: predictions are the argmax of each row of `logits` (batch x classes).
    void add_logits(const float *logits, const std::uint8_t *truth, std::size_t batch);

    std::size_t count(std::size_t truth, std::size_t predicted) const;
    std::size_t total() const { return total_; }
    double accuracy() const;
    // Precision = TP / predicted as c, recall = TP / truly c, F1 their harmonic mean; 0 where a
    // denominator is 0.
    ClassMetrics metrics(std::size_t c) const;
    ClassMetrics macro_average() const;

    // The matrix (rows: truth, columns: prediction) and the per-class table, aligned.
    void print(std::ostream &out) const;
    // CSV: "class,precision,recall,f1,support" rows, then the matrix as "truth\predicted,<names>".
    void write_csv(const std::string &path) const;

    const std::vector<std::string> &class_names() const { return names_; }

  private:
    std::vector<std::string> names_;
    std::vector<std::size_t> cells_; // truth-major
    std::size_t total_ = 0;
};

} // namespace tpu_eval
