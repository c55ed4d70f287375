// SPDX-License-Identifier: MIT
// curve_log.cpp - CSV rows of the learning curves.
#include "tpu_report/curve_log.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tpu_report {

namespace {

constexpr const char *header =
    "epoch,train_loss,train_accuracy,test_loss,test_accuracy,seconds,samples_per_second";

} // namespace

CurveLog::CurveLog(const std::string &path, bool append) : path_(path) {
    std::ifstream existing(path);
    const bool has_rows = append && existing.peek() != std::ifstream::traits_type::eof();
    existing.close();
    out_.open(path, append ? std::ios::app : std::ios::trunc);
    if (!out_)
        throw std::runtime_error(path +
                                 ": cannot write the learning curves: " + std::strerror(errno));
    if (!has_rows)
        out_ << header << '\n' << std::flush;
}

void CurveLog::add(const EpochRecord &r) {
    out_ << r.epoch << ',' << r.train_loss << ',' << r.train_accuracy << ',' << r.test_loss << ','
         << r.test_accuracy << ',' << r.seconds << ',' << r.samples_per_second << '\n'
         << std::flush;
    if (!out_)
        throw std::runtime_error(path_ + ": writing the learning curves failed");
}

} // namespace tpu_report
