// SPDX-License-Identifier: MIT
// The AMX tdpbf16ps golden vectors (tests/golden/amx-bf16, recorded on an Intel Xeon with AMX):
// a parser that validates the file's format and throws GoldenError with the file, line and
// what is wrong, and the comparison rule (bits equal, or both NaN: NaN payloads are AMX's).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpu::test {

// C_out (16 x 16 fp32) = C_in + A (16 x K bf16) x W (K x 16 bf16) on tdpbf16ps, all row-major.
struct AmxGoldenCase {
    static constexpr uint32_t kRows = 16;
    static constexpr uint32_t kCols = 16;
    uint32_t k = 0;
    std::vector<uint32_t> c_in;  // kRows * kCols fp32 bit patterns
    std::vector<uint16_t> a;     // kRows * k bf16
    std::vector<uint16_t> w;     // k * kCols bf16, W[k][n] at k * kCols + n
    std::vector<uint32_t> c_out; // kRows * kCols fp32 bit patterns
    uint32_t line = 0;           // of the case's header, for messages
};

struct GoldenError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline constexpr uint32_t kAmxGoldenMaxK = 4096;

// Parses a golden file: '#' comment lines, then per case "case K" (1 <= K <= kAmxGoldenMaxK)
// followed by exactly 256 + 16 K + 16 K + 256 hex words (8 digits for fp32, 4 for bf16).
std::vector<AmxGoldenCase> parse_amx_golden(const std::string &text, const std::string &name);

// Reads and parses the file at path (GoldenError if it cannot be read or has no case).
std::vector<AmxGoldenCase> load_amx_golden(const std::string &path);

// The repository's tdpbf16ps.txt.
std::string amx_golden_path();

// Whether a result matches the recorded output: the same bits, or both NaN.
inline bool golden_match(uint32_t got, uint32_t want) {
    auto nan = [](uint32_t x) { return (x & 0x7fffffffu) > 0x7f800000u; };
    return got == want || (nan(got) && nan(want));
}

} // namespace tpu::test
