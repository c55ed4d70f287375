// SPDX-License-Identifier: MIT
// metrics.cpp - confusion matrix bookkeeping, the derived metrics and their output.
#include "tpu_eval/metrics.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace tpu_eval {

namespace {

double ratio(std::size_t num, std::size_t den) {
    return den ? double(num) / double(den) : 0.0;
}

} // namespace

ConfusionMatrix::ConfusionMatrix(std::vector<std::string> class_names)
    : names_(std::move(class_names)), cells_(names_.size() * names_.size(), 0) {
    if (names_.empty())
        throw std::invalid_argument("ConfusionMatrix: needs at least one class");
}

void ConfusionMatrix::add(std::uint8_t truth, std::uint8_t predicted) {
    if (truth >= names_.size() || predicted >= names_.size())
        throw std::out_of_range("ConfusionMatrix: class " +
                                std::to_string(std::max(truth, predicted)) + " of " +
                                std::to_string(names_.size()));
    ++cells_[truth * names_.size() + predicted];
    ++total_;
}

void ConfusionMatrix::add_logits(const float *logits, const std::uint8_t *truth,
                                 std::size_t batch) {
    const std::size_t k = names_.size();
    for (std::size_t i = 0; i < batch; ++i) {
        const float *row = logits + i * k;
        add(truth[i], std::uint8_t(std::max_element(row, row + k) - row));
    }
}

std::size_t ConfusionMatrix::count(std::size_t truth, std::size_t predicted) const {
    return cells_.at(truth * names_.size() + predicted);
}

double ConfusionMatrix::accuracy() const {
    std::size_t correct = 0;
    for (std::size_t c = 0; c < names_.size(); ++c)
        correct += count(c, c);
    return ratio(correct, total_);
}

ClassMetrics ConfusionMatrix::metrics(std::size_t c) const {
    std::size_t predicted = 0, actual = 0;
    for (std::size_t o = 0; o < names_.size(); ++o) {
        predicted += count(o, c);
        actual += count(c, o);
    }
    ClassMetrics m;
    m.precision = ratio(count(c, c), predicted);
    m.recall = ratio(count(c, c), actual);
    m.f1 = m.precision + m.recall > 0 ? 2 * m.precision * m.recall / (m.precision + m.recall) : 0.0;
    m.support = actual;
    return m;
}

ClassMetrics ConfusionMatrix::macro_average() const {
    ClassMetrics avg;
    for (std::size_t c = 0; c < names_.size(); ++c) {
        ClassMetrics m = metrics(c);
        avg.precision += m.precision;
        avg.recall += m.recall;
        avg.f1 += m.f1;
        avg.support += m.support;
    }
    const double n = double(names_.size());
    avg.precision /= n;
    avg.recall /= n;
    avg.f1 /= n;
    return avg;
}

void ConfusionMatrix::print(std::ostream &out) const {
    std::size_t width = 5;
    for (const std::string &n : names_)
        width = std::max(width, n.size());
    char buf[128];
    out << "confusion matrix (rows: true class, columns: predicted)\n";
    std::snprintf(buf, sizeof buf, "%*s", int(width), "");
    out << buf;
    for (std::size_t c = 0; c < names_.size(); ++c) {
        std::snprintf(buf, sizeof buf, " %6zu", c);
        out << buf;
    }
    out << '\n';
    for (std::size_t t = 0; t < names_.size(); ++t) {
        std::snprintf(buf, sizeof buf, "%*s", int(width), names_[t].c_str());
        out << buf;
        for (std::size_t p = 0; p < names_.size(); ++p) {
            std::snprintf(buf, sizeof buf, " %6zu", count(t, p));
            out << buf;
        }
        out << '\n';
    }
    std::snprintf(buf, sizeof buf, "%*s  %9s %9s %9s %8s\n", int(width), "class", "precision",
                  "recall", "F1", "support");
    out << buf;
    auto row = [&](const std::string &name, const ClassMetrics &m) {
        std::snprintf(buf, sizeof buf, "%*s  %9.4f %9.4f %9.4f %8zu\n", int(width), name.c_str(),
                      m.precision, m.recall, m.f1, m.support);
        out << buf;
    };
    for (std::size_t c = 0; c < names_.size(); ++c)
        row(names_[c], metrics(c));
    row("macro", macro_average());
    std::snprintf(buf, sizeof buf, "accuracy %.4f (%zu samples)\n", accuracy(), total_);
    out << buf;
}

void ConfusionMatrix::write_csv(const std::string &path) const {
    std::ofstream out(path, std::ios::trunc);
    if (!out)
        throw std::runtime_error(path + ": cannot write the evaluation: " + std::strerror(errno));
    out << "class,precision,recall,f1,support\n";
    for (std::size_t c = 0; c < names_.size(); ++c) {
        ClassMetrics m = metrics(c);
        out << '"' << names_[c] << "\"," << m.precision << ',' << m.recall << ',' << m.f1 << ','
            << m.support << '\n';
    }
    out << "\ntruth\\predicted";
    for (const std::string &n : names_)
        out << ",\"" << n << '"';
    out << '\n';
    for (std::size_t t = 0; t < names_.size(); ++t) {
        out << '"' << names_[t] << '"';
        for (std::size_t p = 0; p < names_.size(); ++p)
            out << ',' << count(t, p);
        out << '\n';
    }
    if (!out.flush())
        throw std::runtime_error(path + ": writing the evaluation failed");
}

} // namespace tpu_eval
