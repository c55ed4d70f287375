// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as a .tpumodel file (docs/tpumodel.md) for tpumodel::parse.
// Whatever the input, the reader must accept it or refuse it with a FormatError, without
// crashing, reading out of bounds or allocating beyond the input's size (ASan/UBSan, the RSS
// limit); a model it accepts must serialise to bytes that parse back to the same bytes.
//
// Input: byte 0, bit 0 set: the rest is a whole file; clear: the rest is a payload, which the
// target puts behind a valid header (magic, version, its CRC-32 and size), so that mutations
// reach the payload's parser instead of dying at the checksum.
//
// Seed corpus: at start-up the target writes small valid payloads (a dense layer and a
// convolution with their tensors, attributes of every kind and a CPU node) as seed-<n> files
// into the corpus directory (the first directory argument) unless they are there already.
#include <tpumodel/file.hpp>

#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace {

using namespace tpumodel;

Model seed_model(bool conv) {
    Model m;
    m.producer = "fuzz_tpumodel seed";
    const std::vector<std::int64_t> in_shape =
        conv ? std::vector<std::int64_t>{1, 4, 4, 2} : std::vector<std::int64_t>{2, 3};
    const std::uint32_t x =
        m.add_tensor({"x", DType::Float, conv ? Layout::Nhwc : Layout::Plain, in_shape, false, {}});
    const std::vector<std::int64_t> w_shape =
        conv ? std::vector<std::int64_t>{3, 3, 2, 2} : std::vector<std::int64_t>{3, 2};
    Tensor weights{"w", DType::Float, conv ? Layout::Hwio : Layout::Plain, w_shape, true, {}};
    weights.data.assign(weights.element_count() * 4, 0x3f);
    const std::uint32_t w = m.add_tensor(weights);
    const std::uint32_t y = m.add_tensor(
        {"y",
         DType::Float,
         conv ? Layout::Nhwc : Layout::Plain,
         conv ? std::vector<std::int64_t>{1, 4, 4, 2} : std::vector<std::int64_t>{2, 2},
         false,
         {}});
    const std::uint32_t z = m.add_tensor({"z", DType::Float, Layout::Plain, {}, false, {}});
    Node n{"layer",
           conv ? "Conv" : "Gemm",
           Placement::Card,
           conv ? "conv2d_layer" : "dense",
           "",
           {},
           {x, w, no_tensor},
           {y}};
    n.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
    n.set("alpha", 1.0f);
    n.set("activation", std::string("Relu"));
    n.set("scales", std::vector<float>{0.5f});
    n.set("group", std::int64_t(1));
    m.nodes.push_back(n);
    m.nodes.push_back({"sum", "ReduceSum", Placement::Cpu, "", "a reason", {}, {y}, {z}});
    m.inputs = {x};
    m.outputs = {z};
    return m;
}

void write_seeds(const std::filesystem::path &dir) {
    for (int i = 0; i < 2; ++i) {
        const std::filesystem::path path = dir / ("seed-" + std::to_string(i));
        if (std::filesystem::exists(path))
            continue;
        const std::vector<std::uint8_t> file = serialise(seed_model(i == 1));
        std::ofstream out(path, std::ios::binary);
        out.put('\0'); // a payload: the header is the target's
        out.write(reinterpret_cast<const char *>(file.data() + 24),
                  std::streamsize(file.size() - 24));
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
    for (int i = 1; i < *argc; i++) {
        std::error_code ec;
        if ((*argv)[i][0] != '-' && std::filesystem::is_directory((*argv)[i], ec)) {
            write_seeds((*argv)[i]);
            break;
        }
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 1)
        return 0;
    std::vector<std::uint8_t> file;
    if (data[0] & 1) {
        file.assign(data + 1, data + size);
    } else {
        const std::size_t payload = size - 1;
        const auto crc = std::uint32_t(crc32_z(0L, data + 1, payload));
        const std::uint8_t magic[8] = {'T', 'P', 'U', 'M', 'O', 'D', 'E', 'L'};
        file.assign(magic, magic + 8);
        for (int i = 0; i < 4; ++i)
            file.push_back(std::uint8_t(format_version >> (8 * i)));
        for (int i = 0; i < 4; ++i)
            file.push_back(std::uint8_t(crc >> (8 * i)));
        for (int i = 0; i < 8; ++i)
            file.push_back(std::uint8_t(std::uint64_t(payload) >> (8 * i)));
        file.insert(file.end(), data + 1, data + size);
    }
    Model m;
    try {
        m = parse(file, "fuzz");
    } catch (const FormatError &) {
        return 0;
    }
    const std::vector<std::uint8_t> again = serialise(m);
    if (serialise(parse(again, "fuzz (again)")) != again) {
        std::fprintf(stderr, "fuzz_tpumodel: a model does not survive its own file\n");
        std::abort();
    }
    return 0;
}
