// SPDX-License-Identifier: MIT
// tensorboard_writer.cpp - TensorBoard event files: Event messages by protobuf, framed as
// TFRecords with CRC-32C checksums by Boost.CRC.
#include "tpu_report/tensorboard_writer.hpp"

#include "tensorboard_event.pb.h"

#include <boost/crc.hpp>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace tpu_report {

namespace {

// CRC-32C (Castagnoli), masked as TFRecord does so that a checksum of checksums stays strong.
std::uint32_t masked_crc32c(const void *data, std::size_t size) {
    boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
    crc.process_bytes(data, size);
    const std::uint32_t c = crc.checksum();
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

void put_le(std::string &out, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i)
        out.push_back(static_cast<char>(value >> (8 * i)));
}

std::string serialized(const tensorboard::Event &event) {
    std::string bytes;
    if (!event.SerializeToString(&bytes))
        throw std::runtime_error("tensorboard: cannot serialise an event");
    return bytes;
}

double unix_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

std::string tfrecord(std::string_view payload) {
    std::string record;
    put_le(record, payload.size(), 8);
    put_le(record, masked_crc32c(record.data(), 8), 4);
    record.append(payload);
    put_le(record, masked_crc32c(payload.data(), payload.size()), 4);
    return record;
}

std::string file_version_record(double wall_time) {
    tensorboard::Event event;
    event.set_wall_time(wall_time);
    event.set_file_version("brain.Event:2");
    return tfrecord(serialized(event));
}

std::string scalar_record(double wall_time, std::int64_t step, std::string_view tag, float value) {
    tensorboard::Event event;
    event.set_wall_time(wall_time);
    event.set_step(step);
    tensorboard::SummaryValue *v = event.mutable_summary()->add_value();
    v->set_tag(std::string(tag));
    v->set_simple_value(value);
    return tfrecord(serialized(event));
}

TensorBoardWriter::TensorBoardWriter(const std::string &dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw std::runtime_error(dir +
                                 ": cannot create the TensorBoard directory: " + ec.message());
    char host[256] = "localhost";
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0')
        std::strcpy(host, "localhost");
    const auto now = static_cast<long long>(unix_seconds());
    path_ = dir + "/events.out.tfevents." + std::to_string(now) + "." + host;
    out_.open(path_, std::ios::binary | std::ios::app);
    if (!out_)
        throw std::runtime_error(
            path_ + ": cannot create the TensorBoard event file: " + std::strerror(errno));
    write(file_version_record(unix_seconds()));
}

void TensorBoardWriter::scalar(std::string_view tag, std::int64_t step, double value) {
    write(scalar_record(unix_seconds(), step, tag, static_cast<float>(value)));
}

void TensorBoardWriter::write(const std::string &record) {
    out_.write(record.data(), static_cast<std::streamsize>(record.size()));
    out_.flush();
    if (!out_)
        throw std::runtime_error(path_ + ": cannot write the TensorBoard event file");
}

} // namespace tpu_report
