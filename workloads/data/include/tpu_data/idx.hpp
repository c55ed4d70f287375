// SPDX-License-Identifier: MIT
// idx.hpp - the IDX format of the MNIST family: a 4-byte magic (0, 0, element type, number of
// dimensions), one big-endian 32-bit size per dimension, then the elements row-major. Only
// unsigned bytes (type 0x08) are read, which is what image and label files hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu_data {

struct IdxArray {
    std::vector<std::uint32_t> dims; // outermost first
    std::vector<std::uint8_t> data;  // product(dims) bytes

    std::size_t count() const { return dims.empty() ? 0 : dims[0]; }
};

// Parses an IDX file of unsigned bytes (gzipped or not). Throws DataError naming the file for a
// missing file, a bad magic, an element type other than ubyte, a size of 0, or a data length
// that differs from what the header promises (truncated, or trailing bytes).
IdxArray read_idx(const std::string &path);

// Parses IDX bytes already in memory; `path` only names them in errors.
IdxArray parse_idx(const std::vector<std::uint8_t> &bytes, const std::string &path);

} // namespace tpu_data
