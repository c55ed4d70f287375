// SPDX-License-Identifier: MIT
// file_bytes.cpp - whole-file reads through zlib's gz* interface, which passes plain files
// through unchanged and reports truncated or corrupt gzip streams.
#include "tpu_data/file_bytes.hpp"

#include "tpu_data/error.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace tpu_data {

std::vector<std::uint8_t> read_file_bytes(const std::string &path) {
    errno = 0;
    gzFile file = gzopen(path.c_str(), "rb");
    if (file == nullptr)
        throw DataError(path, std::string("cannot open: ") +
                                  (errno ? std::strerror(errno) : "out of memory"));
    std::vector<std::uint8_t> bytes;
    std::uint8_t chunk[1 << 16];
    for (;;) {
        int n = gzread(file, chunk, sizeof chunk);
        if (n < 0) {
            int code = 0;
            std::string why = gzerror(file, &code);
            gzclose(file);
            throw DataError(path, "corrupt compressed data: " + why);
        }
        if (n == 0)
            break;
        bytes.insert(bytes.end(), chunk, chunk + n);
    }
    // gzread returns 0 at a clean end and also when the stream was cut short; tell them apart.
    int code = 0;
    std::string why = gzerror(file, &code);
    gzclose(file);
    if (code != Z_OK && code != Z_STREAM_END)
        throw DataError(path, "corrupt or truncated compressed data: " + why);
    return bytes;
}

} // namespace tpu_data
