// SPDX-License-Identifier: MIT
// The links' cycle model (docs/hardware.md section 10, "Modelled time"), in the card's clock:
//   serialisation  ceil(bytes * 8 * clock_mhz / (gbps * 1000))      a link direction is busy
//   transfer       ceil((hops * hop_ns + bytes * 8 / gbps) * clock_mhz / 1000)
//                  = ceil((hops * hop_ns * gbps + bytes * 8) * clock_mhz / (1000 * gbps))
// the time from a SEND's start until the whole message has arrived: hops x latency + bytes /
// bandwidth, rounded up once, computed exactly in integers.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tpu::engine::cycles {

inline constexpr uint64_t link_serialise(uint64_t bytes, uint32_t clock_mhz, uint32_t gbps) {
    const unsigned __int128 num = (unsigned __int128)bytes * 8 * clock_mhz;
    const unsigned __int128 den = (unsigned __int128)gbps * 1000;
    return std::max<uint64_t>(1, uint64_t((num + den - 1) / den));
}

inline constexpr uint64_t link_transfer(uint64_t hops, uint64_t bytes, uint32_t clock_mhz,
                                        uint32_t gbps, uint32_t hop_ns) {
    const unsigned __int128 num =
        ((unsigned __int128)hops * hop_ns * gbps + (unsigned __int128)bytes * 8) * clock_mhz;
    const unsigned __int128 den = (unsigned __int128)gbps * 1000;
    return std::max<uint64_t>(1, uint64_t((num + den - 1) / den));
}

} // namespace tpu::engine::cycles
