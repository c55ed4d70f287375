// SPDX-License-Identifier: MIT
// idx.cpp - IDX parsing and validation.
#include "tpu_data/idx.hpp"

#include "tpu_data/error.hpp"
#include "tpu_data/file_bytes.hpp"

namespace tpu_data {

namespace {

constexpr std::uint8_t idx_ubyte = 0x08;
constexpr std::size_t max_dims = 8;

std::uint32_t be32(const std::uint8_t *p) {
    return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}

} // namespace

IdxArray parse_idx(const std::vector<std::uint8_t> &bytes, const std::string &path) {
    if (bytes.size() < 4)
        throw DataError(path, "not an IDX file: " + std::to_string(bytes.size()) +
                                  " bytes, shorter than the 4-byte magic");
    if (bytes[0] != 0 || bytes[1] != 0)
        throw DataError(path, "not an IDX file: the magic does not start with two zero bytes");
    if (bytes[2] != idx_ubyte)
        throw DataError(path, "IDX element type " + std::to_string(bytes[2]) +
                                  " is not unsigned byte (8)");
    const std::size_t ndims = bytes[3];
    if (ndims == 0 || ndims > max_dims)
        throw DataError(path, "IDX header gives " + std::to_string(ndims) +
                                  " dimensions (1 to 8 expected)");
    const std::size_t header = 4 + 4 * ndims;
    if (bytes.size() < header)
        throw DataError(path, "truncated: the IDX header needs " + std::to_string(header) +
                                  " bytes, the file has " + std::to_string(bytes.size()));
    IdxArray array;
    std::size_t elements = 1;
    for (std::size_t i = 0; i < ndims; ++i) {
        std::uint32_t d = be32(&bytes[4 + 4 * i]);
        if (d == 0)
            throw DataError(path, "IDX dimension " + std::to_string(i) + " has size 0");
        if (elements > (std::size_t(1) << 40) / d)
            throw DataError(path, "IDX dimensions describe more than 1 TiB of data");
        elements *= d;
        array.dims.push_back(d);
    }
    const std::size_t have = bytes.size() - header;
    if (have < elements)
        throw DataError(path, "truncated: the header promises " + std::to_string(elements) +
                                  " bytes of data, the file has " + std::to_string(have));
    if (have > elements)
        throw DataError(path, std::to_string(have - elements) +
                                  " unexpected bytes after the data the header describes");
    array.data.assign(bytes.begin() + std::ptrdiff_t(header), bytes.end());
    return array;
}

IdxArray read_idx(const std::string &path) {
    return parse_idx(read_file_bytes(path), path);
}

} // namespace tpu_data
