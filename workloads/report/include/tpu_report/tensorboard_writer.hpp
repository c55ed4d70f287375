// SPDX-License-Identifier: MIT
// tensorboard_writer.hpp - scalars of a run (loss, accuracy, learning rate, throughput, the
// card's utilisation) as a TensorBoard event file: TFRecord framing (length, masked CRC-32C of
// the length, the Event message, masked CRC-32C of the message) around Event protobufs
// (proto/tensorboard_event.proto). TensorBoard reads every file named *tfevents* in a directory.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace tpu_report {

// One TFRecord: the payload framed by its length and masked CRC-32C checksums.
std::string tfrecord(std::string_view payload);
// The records of an Event carrying the file's version ("brain.Event:2"), and of an Event
// carrying one scalar at a step.
std::string file_version_record(double wall_time);
std::string scalar_record(double wall_time, std::int64_t step, std::string_view tag, float value);

class TensorBoardWriter {
  public:
    // Creates `dir` if needed and a new file dir/events.out.tfevents.<unix seconds>.<host> in
    // it, starting with the version record. Throws std::runtime_error naming the file if it
    // cannot be written.
    explicit TensorBoardWriter(const std::string &dir);
    // Appends `tag` = `value` at `step`, stamped with the time now; flushed, so that TensorBoard
    // shows it while the run goes on.
    void scalar(std::string_view tag, std::int64_t step, double value);
    const std::string &path() const { return path_; }

  private:
    void write(const std::string &record);

    std::string path_;
    std::ofstream out_;
};

} // namespace tpu_report
