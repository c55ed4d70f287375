// SPDX-License-Identifier: MIT
// file_write.hpp - replaces a whole file crash-safely: the bytes go to `path`.tmp, are synced to
// disk, and only then is the temporary renamed over `path` (and the directory synced), so a
// reader, a killed writer or a power cut sees the old file or the new one, never a mix.
#pragma once

#include <cstddef>
#include <string>

namespace tpu_data {

// Writes `size` bytes to `path` as above. Throws std::runtime_error naming the file and the
// failed step; the previous `path` is then untouched and the temporary is removed.
void write_file_atomically(const std::string &path, const void *data, std::size_t size);

} // namespace tpu_data
