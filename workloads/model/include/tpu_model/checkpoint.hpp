// SPDX-License-Identifier: MIT
// checkpoint.hpp - the checkpoint file: a model's named fp32 tensors (weights, biases, optimiser
// moments) and the state a run needs to resume (epoch, step, seed, key/value notes), in one
// little-endian binary file with a CRC-32 over everything after the header. The layout is
// documented in workloads/README.md ("Checkpoint format").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tpu_model {

struct NamedTensor {
    std::string name;
    std::vector<std::uint32_t> shape;
    std::vector<float> data; // product(shape) values
};

struct Checkpoint {
    std::string model;                        // e.g. "mlp-784-256-128-10"
    std::uint64_t epoch = 0;                  // epochs completed
    std::uint64_t step = 0;                   // optimiser steps taken
    std::uint64_t seed = 0;                   // the run's seed (data order, initialisation)
    std::map<std::string, std::string> notes; // free-form: optimiser, learning rate, ...
    std::vector<NamedTensor> tensors;

    const NamedTensor *find(const std::string &name) const;
};

// Writes crash-safely (tpu_data::write_file_atomically: `path`.tmp, fsync, rename): a crash or a
// kill leaves the previous checkpoint or the new one. Throws std::runtime_error naming the file.
void save_checkpoint(const Checkpoint &c, const std::string &path);
// Reads and validates a checkpoint. Throws tpu_data::DataError naming the file: not a
// checkpoint, an unknown version, truncated, a checksum mismatch, an implausible size.
Checkpoint load_checkpoint(const std::string &path);

} // namespace tpu_model
