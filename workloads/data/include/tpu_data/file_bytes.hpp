// SPDX-License-Identifier: MIT
// file_bytes.hpp - reads a whole file into memory, gunzipping it when it is gzip-compressed
// (the data sets ship as .gz), with errors that name the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tpu_data {

// The file's bytes, decompressed if it starts with the gzip magic. Throws DataError when the
// file cannot be opened or its compressed stream is corrupt or cut short.
std::vector<std::uint8_t> read_file_bytes(const std::string &path);

} // namespace tpu_data
