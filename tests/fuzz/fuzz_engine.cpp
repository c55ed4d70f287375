// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as a job for the card's engine, run through the public C API
// on simulated host memory set up as the driver would (a data region readable and writable, one
// read-only, one write-only, the program read-only). Whatever the input, the engine must return a
// valid status without crashing, hanging or touching memory it was not granted (ASan/UBSan).
//
// Input: byte 0 selects the engine mode (bit 0) and the context (bits 2..1: 1 is the only valid
// one); bytes 1..4 are the program size passed to the engine (little-endian, unchecked); the rest
// is the program.
//
// Seed corpus: random bytes seldom form valid instructions, so at start-up the target writes
// kSeeds valid programs from tests/support's random_program() (with the fixture's regions), as
// seed-<n> files, into the corpus directory (the first directory argument) unless they are there
// already. Mutations of them reach the execution paths behind the decoder.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tpu_hw.h"
#include "tpu_test/card.hpp"
#include "tpu_test/random_program.hpp"

namespace {

constexpr uint64_t kRegion = 64 * 1024;
constexpr uint64_t kReadWriteVa = 0x100000;
constexpr uint64_t kReadOnlyVa = 0x200000;
constexpr uint64_t kWriteOnlyVa = 0x300000;
constexpr uint64_t kProgramVa = 0x400000;
constexpr uint64_t kProgramRegion = 256 * 1024;
constexpr uint32_t kContext = 1;
constexpr unsigned kSeeds = 32;

struct Fixture {
    explicit Fixture(uint32_t mode) : card(mem, config(mode)), space(card.address_space(kContext)) {
        space.map(kReadWriteVa, kRegion, tpu::test::kReadWrite);
        space.map(kReadOnlyVa, kRegion, tpu::test::kRead);
        space.map(kWriteOnlyVa, kRegion, tpu::test::kWrite);
        space.map(kProgramVa, kProgramRegion, tpu::test::kRead);
    }

    static tpu_engine_config config(uint32_t mode) {
        tpu_engine_config cfg = tpu::test::Card::default_config();
        cfg.mxu_rows = 8;
        cfg.mxu_cols = 8;
        cfg.ub_bytes = 64 * 1024;
        cfg.acc_bytes = 64 * 1024;
        cfg.threads = 1;
        cfg.mode = mode;
        return cfg;
    }

    tpu::test::HostMemory mem;
    tpu::test::Card card;
    tpu::test::AddressSpace space;
};

Fixture &fixture(uint32_t mode) {
    static Fixture fast(TPU_ENGINE_FAST);
    static Fixture cycle(TPU_ENGINE_CYCLE_ACCURATE);
    return mode == TPU_ENGINE_FAST ? fast : cycle;
}

// Seed n as an input: a random valid program in context kContext, in mode n % 2.
std::vector<uint8_t> seed_input(unsigned n) {
    tpu::test::ProgramLimits lim; // 16 KiB of UB and ACC are used: the dump fits kRegion
    lim.input_va = kReadOnlyVa;
    lim.output_va = kReadWriteVa;
    lim.dump_va = kWriteOnlyVa;
    const tpu::test::Program p = tpu::test::random_program(n, lim);
    const uint32_t bytes = uint32_t(p.size() * sizeof(tpu_insn));
    std::vector<uint8_t> input(5 + bytes);
    input[0] = uint8_t(kContext << 1 | (n % 2));
    std::memcpy(&input[1], &bytes, sizeof(bytes));
    std::memcpy(&input[5], p.data(), bytes);
    return input;
}

void write_seeds(const std::filesystem::path &dir) {
    for (unsigned n = 0; n < kSeeds; n++) {
        const std::filesystem::path file = dir / ("seed-" + std::to_string(n));
        if (std::filesystem::exists(file))
            continue;
        const std::vector<uint8_t> input = seed_input(n);
        std::ofstream(file, std::ios::binary)
            .write(reinterpret_cast<const char *>(input.data()), std::streamsize(input.size()));
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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 5)
        return 0;
    const uint32_t mode = data[0] & 1 ? TPU_ENGINE_CYCLE_ACCURATE : TPU_ENGINE_FAST;
    const uint32_t ctx = (data[0] >> 1) & 3;
    uint32_t program_size;
    std::memcpy(&program_size, data + 1, sizeof(program_size));
    const uint64_t bytes = std::min<uint64_t>(size - 5, kProgramRegion);

    Fixture &f = fixture(mode);
    if (bytes > 0)
        f.space.write(kProgramVa, data + 5, bytes);
    tpu_job_result r = f.card.run(ctx, kProgramVa, program_size);

    if (r.status >= TPU_ERR_COUNT) {
        std::fprintf(stderr, "fuzz_engine: invalid status %u\n", r.status);
        std::abort();
    }
    if (r.status == TPU_ERR_NONE && (r.error_pc != 0 || r.fault_addr != 0)) {
        std::fprintf(stderr, "fuzz_engine: success with error_pc %u fault_addr %#llx\n", r.error_pc,
                     static_cast<unsigned long long>(r.fault_addr));
        std::abort();
    }
    // Forget this input (its program and what it wrote) so every input runs from the same state.
    static const std::unique_ptr<uint8_t[]> zero(new uint8_t[kProgramRegion]());
    f.space.write(kProgramVa, zero.get(), bytes);
    f.space.write(kReadWriteVa, zero.get(), kRegion);
    f.space.write(kWriteOnlyVa, zero.get(), kRegion);
    return 0;
}
