// SPDX-License-Identifier: MIT
// What the benchmark ran on: the host CPU's model, family and matrix instruction set flags (from
// /proc/cpuinfo) and the kernel set the engine chose for it, printed above the tables so
// results from different hosts can be told apart.
#pragma once

#include <string>

namespace tpu::bench {

// "model name" of the first CPU, or "unknown CPU".
std::string cpu_model();

// The first CPU's "cpu family", "model" and "stepping" numbers, as "family 26, model 2,
// stepping 1" (the model name alone does not tell CPU generations apart: a virtual machine
// may show "AMD EPYC" for any of them), or "family unknown".
std::string cpu_family_model();

// The flags among those the engine and oneDNN choose kernels by (FMA, AVX-512 F/BW/VL, VNNI,
// BF16, FP16, AMX tile/bf16/int8/fp16), space-separated, in /proc/cpuinfo's order.
std::string matrix_isa_flags();

// The engine's fast-mode kernel set for this host, and whether AMX could be used.
std::string engine_kernel_set();

} // namespace tpu::bench
