// SPDX-License-Identifier: MIT
// format_constants.hpp - the .tpumodel header's fixed parts, shared by the writer and reader.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tpumodel::format {

constexpr std::uint8_t magic[8] = {'T', 'P', 'U', 'M', 'O', 'D', 'E', 'L'};
constexpr std::size_t header_size = 8 + 4 + 4 + 8; // magic, version, CRC-32, payload bytes

} // namespace tpumodel::format
