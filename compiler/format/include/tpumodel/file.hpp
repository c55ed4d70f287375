// SPDX-License-Identifier: MIT
// file.hpp - .tpumodel files (docs/tpumodel.md): a model serialised behind a header of magic,
// format version, CRC-32 and payload size, and read back with every rule checked.
#pragma once

#include "tpumodel/model.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tpumodel {

constexpr std::uint32_t format_version = 1;

// The file's bytes for `m` (validated first: a model that breaks the rules is never written).
std::vector<std::uint8_t> serialise(const Model &m);
// The model in `bytes`; throws FormatError naming `origin` for anything wrong: not a .tpumodel,
// another version, a checksum mismatch, truncation, ids out of range, a broken graph.
Model parse(std::span<const std::uint8_t> bytes, const std::string &origin);

void save(const Model &m, const std::string &path); // crash-safe (written whole, then renamed)
Model load(const std::string &path);

} // namespace tpumodel
