// SPDX-License-Identifier: MIT
// The card's bf16 numerics against Intel AMX tdpbf16ps as recorded on hardware
// (tests/golden/amx-bf16): every output of every case, bit for bit (NaN as NaN), with every
// kernel set this host runs (the scalar model among them) and with the cycle-accurate array;
// the cases the engine's start-up check embeds against the file; the parser on damaged input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "mxu/kernels/check/check.hpp"
#include "mxu/mxu.hpp"
#include "mxu/systolic_array.hpp"
#include "mxu/weight_tile.hpp"
#include "thread_pool.hpp"
#include "tpu_test/amx_golden.hpp"

using namespace tpu::engine;
using namespace tpu::test;

namespace {

constexpr uint32_t kRows = AmxGoldenCase::kRows;
constexpr uint32_t kCols = AmxGoldenCase::kCols;

const std::vector<AmxGoldenCase> &golden_file() {
    static const std::vector<AmxGoldenCase> cases = load_amx_golden(amx_golden_path());
    return cases;
}

// One case as a MATMUL with ACCUMULATE: run(tile, args) computes acc += A x W, over 32 rows
// that are the case's 16 twice (a kernel set may hand blocks of fewer rows to another kernel,
// as the AMX set does to AVX-512): every output of both copies must match.
template <class Run> uint64_t mismatches(const AmxGoldenCase &c, Run run, std::string *first) {
    WeightTile tile(c.k, kCols);
    tile.load(MxuType::Bf16, c.k, kCols, reinterpret_cast<const uint8_t *>(c.w.data()),
              2 * uint64_t(kCols));
    std::vector<uint32_t> acc = c.c_in;
    acc.insert(acc.end(), c.c_in.begin(), c.c_in.end());
    MatmulArgs args;
    args.src = reinterpret_cast<const uint8_t *>(c.a.data());
    args.src_stride = 2 * uint64_t(c.k);
    args.row_group = kRows; // rows 16-31 read rows 0-15 again
    args.group_stride = 0;
    args.acc = reinterpret_cast<uint8_t *>(acc.data());
    args.acc_stride = 4 * kCols;
    args.rows = 2 * kRows;
    args.accumulate = true;
    run(tile, args);
    uint64_t bad = 0;
    for (uint32_t i = 0; i < 2 * kRows * kCols; i++) {
        const uint32_t want = c.c_out[i % (kRows * kCols)];
        if (golden_match(acc[i], want))
            continue;
        if (bad++ == 0)
            *first = "case at line " + std::to_string(c.line) + " (K " + std::to_string(c.k) +
                     "), output " + std::to_string(i) + ": got " + std::to_string(acc[i]) +
                     ", AMX " + std::to_string(want);
    }
    return bad;
}

} // namespace

TEST_CASE("golden vectors: the file holds 160 well-formed cases", "[golden]") {
    const std::vector<AmxGoldenCase> &cases = golden_file();
    CHECK(cases.size() == 160);
    uint64_t outputs = 0;
    for (const AmxGoldenCase &c : cases)
        outputs += c.c_out.size();
    CHECK(outputs == 40960);
}

TEST_CASE("golden vectors: the start-up check's cases are the file's", "[golden]") {
    const std::vector<AmxGoldenCase> &cases = golden_file();
    REQUIRE(!tpu::engine::golden::cases().empty());
    for (const tpu::engine::golden::Case &e : tpu::engine::golden::cases()) {
        CAPTURE(e.index, e.k);
        REQUIRE(e.index < cases.size());
        const AmxGoldenCase &c = cases[e.index];
        REQUIRE(c.k == e.k);
        CHECK(std::equal(c.c_in.begin(), c.c_in.end(), e.c_in));
        CHECK(std::equal(c.a.begin(), c.a.end(), e.a));
        CHECK(std::equal(c.w.begin(), c.w.end(), e.w));
        CHECK(std::equal(c.c_out.begin(), c.c_out.end(), e.c_out));
    }
}

TEST_CASE("golden vectors: every kernel set reproduces AMX tdpbf16ps", "[golden]") {
    ThreadPool pool(1);
    const std::atomic<bool> abort{false};
    for (const RowKernels *kernels : cpu_row_kernels()) {
        FastMxu mxu(pool, *kernels);
        uint64_t bad = 0;
        std::string first;
        for (const AmxGoldenCase &c : golden_file())
            bad += mismatches(
                c, [&](const WeightTile &t, const MatmulArgs &a) { mxu.run(t, a, abort); }, &first);
        CAPTURE(kernels->name, first);
        CHECK(bad == 0);
    }
}

TEST_CASE("golden vectors: the cycle-accurate array reproduces AMX tdpbf16ps", "[golden]") {
    SystolicArray array(128, kCols);
    uint64_t bad = 0;
    std::string first;
    for (const AmxGoldenCase &c : golden_file())
        bad += mismatches(
            c,
            [&](const WeightTile &t, const MatmulArgs &a) {
                array.load_weights(t);
                array.run(a);
            },
            &first);
    CAPTURE(first);
    CHECK(bad == 0);
}

TEST_CASE("golden vector parser rejects damaged files with the line at fault", "[golden]") {
    // A well-formed case of K = 1: 256 + 16 + 16 + 256 words.
    std::string one = "# comment\ncase 1\n";
    for (int i = 0; i < 256; i++)
        one += "3f800000 ";
    for (int i = 0; i < 32; i++)
        one += "3f80\n";
    for (int i = 0; i < 256; i++)
        one += "00000000 ";
    one += "\n";
    REQUIRE(parse_amx_golden(one, "ok").size() == 1);
    CHECK(parse_amx_golden(one, "ok")[0].c_in[0] == 0x3f800000u);

    auto message = [](const std::string &text) {
        try {
            parse_amx_golden(text, "bad.txt");
        } catch (const GoldenError &e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(message("") == "bad.txt: no golden cases");
    CHECK(message("# only a comment\n") == "bad.txt: no golden cases");
    CHECK(message("cases 1\n") == "bad.txt:1: expected 'case K', found 'cases'");
    CHECK(message("case 0\n") == "bad.txt:1: bad K '0' (1 .. 4096)");
    CHECK(message("case x\n") == "bad.txt:1: bad K 'x' (1 .. 4096)");
    // Truncated: the last word missing.
    CHECK(message(one.substr(0, one.rfind("00000000"))) ==
          "bad.txt:35: file ends inside a case, expected C_out");
    // A bf16 word where an fp32 word belongs, and a non-hex digit.
    std::string narrow = one;
    narrow.replace(narrow.find("3f800000"), 8, "3f80");
    CHECK(message(narrow) == "bad.txt:3: '3f80' is not a 8-digit hex word (C_in)");
    std::string letter = one;
    letter.replace(letter.find("3f80\n"), 4, "3g80");
    CHECK(message(letter) == "bad.txt:3: '3g80' is not a 4-digit hex word (A)");
    // A file that is not there.
    CHECK_THROWS_AS(load_amx_golden("/nonexistent/tdpbf16ps.txt"), GoldenError);
}
