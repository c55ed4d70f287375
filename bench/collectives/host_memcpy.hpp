// SPDX-License-Identifier: MIT
// host_memcpy.hpp - the baseline of the emulator's own cost: memcpy's bandwidth on the machine
// the benchmark runs on (in a guest: the guest's memcpy under QEMU), and its CPU's name.
#pragma once

#include <cstdint>
#include <string>

namespace tpu::bench {

// Bytes a second memcpy moves between two buffers of `bytes` (touched first), best of `reps`.
double memcpy_bytes_per_second(std::uint64_t bytes, unsigned reps);

// "model name" of the first CPU in /proc/cpuinfo, or "unknown CPU".
std::string cpu_name();

} // namespace tpu::bench
