// SPDX-License-Identifier: MIT
// main.cpp - tpu-demo: opens a TPU card, prints what it is, runs an int8, a bf16 and (when the
// card has it) an fp32 matmul and a dense layer (bias + RELU on the vector unit) on it, checks
// each exactly against the CPU reference and reports times. Exit status: 0 all exact,
// 1 a mismatch, 2 usage or device error.
//
//   tpu-demo [--device N] [M [K N]]     (default 512x512x512; one number means a cube)
#include "dense_check.hpp"
#include "device_report.hpp"
#include "matmul_check.hpp"

#include <tpurt/device.hpp>
#include <tpurt/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Options {
    unsigned device = 0;
    MatmulShape shape{512, 512, 512};
};

bool parse_number(const char *text, std::uint32_t max, std::uint32_t &out) {
    char *end = nullptr;
    const unsigned long value = std::strtoul(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value == 0 || value > max)
        return false;
    out = static_cast<std::uint32_t>(value);
    return true;
}

bool parse_options(int argc, char **argv, Options &options) {
    std::vector<std::uint32_t> dims;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        std::uint32_t value = 0;
        if (arg == "--device" && i + 1 < argc) {
            if (!parse_number(argv[++i], 1u << 20, value) && std::string(argv[i]) != "0")
                return false;
            options.device = value;
        } else if (parse_number(argv[i], 65536, value)) {
            dims.push_back(value);
        } else {
            return false;
        }
    }
    if (dims.size() == 1)
        options.shape = {dims[0], dims[0], dims[0]};
    else if (dims.size() == 3)
        options.shape = {dims[0], dims[1], dims[2]};
    else if (!dims.empty())
        return false;
    return true;
}

} // namespace

int main(int argc, char **argv) {
    Options options;
    if (!parse_options(argc, argv, options)) {
        std::fprintf(stderr, "usage: %s [--device N] [M [K N]]   (sizes 1..65536, default 512)\n",
                     argv[0]);
        return 2;
    }
    try {
        tpurt::Device device = tpurt::Device::open(options.device);
        print_device_report(options.device, device.info());
        bool exact = check_matmul(device, tpurt::DType::Int8, options.shape);
        exact = check_matmul(device, tpurt::DType::Bf16, options.shape) && exact;
        if (device.info().supports(tpurt::DType::Fp32))
            exact = check_matmul(device, tpurt::DType::Fp32, options.shape) && exact;
        if (device.info().has_vector_unit())
            exact = check_dense(device, options.shape) && exact;
        print_counters(device.counters());
        std::printf("\n%s\n", exact ? "all results exact" : "MISMATCH: the card's results differ");
        return exact ? 0 : 1;
    } catch (const tpurt::Error &error) {
        std::fprintf(stderr, "tpu-demo: %s\n", error.what());
        return 2;
    }
}
