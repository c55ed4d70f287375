// SPDX-License-Identifier: MIT
// test_profile.cpp - guest test: profiling on the real card. Every op call (matmuls on host
// arrays and tensors, a dense layer, a convolution) gives one op record with its jobs' cycles
// and MACs, whose sums equal the change of the card's own counters over the run; the trace
// written by profiler::write_trace() parses as JSON with one complete event per op call and
// host submit / wait spans; the table names every op; nothing is recorded once stopped.
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <nlohmann/json.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tpurt::DType;

using guest_test::device;

// One call of each kind of op; returns the names of the ops called, in order.
std::vector<std::string> run_ops() {
    tpurt::Device &dev = device();
    std::vector<std::string> names;
    std::vector<std::int32_t> c(40 * 24);
    for (int i = 0; i < 3; ++i)
        tpurt::matmul(dev, tpurt::random_int8(40 * 300, i), tpurt::random_int8(300 * 24, i + 5), c,
                      40, 300, 24);
    names.insert(names.end(), 3, "matmul int8 40x300x24");

    const tpurt::Tensor a =
        tpurt::Tensor::from_host<tpurt::Bf16>(dev, tpurt::random_bf16(130 * 140, 1), {130, 140});
    const tpurt::Tensor b =
        tpurt::Tensor::from_host<tpurt::Bf16>(dev, tpurt::random_bf16(140 * 140, 2), {140, 140});
    tpurt::Tensor out = tpurt::Tensor::empty(dev, DType::Fp32, {130, 140});
    tpurt::matmul(dev, a, b, out);
    names.emplace_back("matmul bf16 130x140x140");

    const tpurt::DenseLayer layer{.m = 16,
                                  .k = 64,
                                  .n = 32,
                                  .in_type = DType::Fp32,
                                  .out_type = DType::Fp32,
                                  .activation = tpurt::Activation::Relu};
    const auto x = tpurt::random_fp32(16 * 64, 3), w = tpurt::random_fp32(64 * 32, 4);
    std::vector<float> bias(32, 0.5f), y(16 * 32);
    tpurt::dense(dev, std::as_bytes(std::span(x)), std::as_bytes(std::span(w)), bias,
                 std::as_writable_bytes(std::span(y)), layer);
    names.emplace_back("dense fp32->fp32 relu 16x64x32");

    const tpurt::Conv2dShape shape{.batch = 1,
                                   .height = 12,
                                   .width = 12,
                                   .channels = 4,
                                   .kernel_h = 3,
                                   .kernel_w = 3,
                                   .filters = 8,
                                   .pad_h = 1,
                                   .pad_w = 1};
    std::vector<float> image(shape.output_elements());
    tpurt::conv2d(dev, std::span<const tpurt::Bf16>(tpurt::random_bf16(shape.input_elements(), 8)),
                  std::span<const tpurt::Bf16>(tpurt::random_bf16(shape.weight_elements(), 9)),
                  image, shape);
    names.emplace_back("conv2d bf16 1x12x12x4 k3x3 f8");
    return names;
}

} // namespace

TEST_CASE("a profiled run records every op and adds up to the card's counters", "[profile]") {
    tpurt::Device &dev = device();
    run_ops(); // compile and warm the pools outside the profile
    tpurt::profiler::clear();
    tpurt::profiler::start();
    const tpurt::DeviceCounters before = dev.counters();
    const std::vector<std::string> names = run_ops();
    const tpurt::DeviceCounters after = dev.counters();
    tpurt::profiler::stop();
    run_ops(); // not recorded

    const tpurt::Profile profile = tpurt::profiler::snapshot();
    REQUIRE(profile.ops.size() == names.size());
    std::uint64_t cycles = 0, macs = 0, jobs = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const tpurt::OpRecord &op = profile.ops[i];
        INFO(op.name);
        CHECK(op.name == names[i]);
        CHECK(op.cycles > 0);
        CHECK(op.bytes > 0);
        CHECK(op.card_us > 0);
        CHECK(op.wall_us >= op.card_us);
        CHECK(op.utilisation > 0);
        CHECK(op.utilisation <= 1);
        cycles += op.cycles;
        macs += op.macs;
        jobs += op.jobs;
    }
    CHECK(cycles == after.cycles - before.cycles);
    CHECK(macs == after.macs - before.macs);
    CHECK(jobs == after.jobs_done - before.jobs_done);
    // A submit and a wait per job.
    CHECK(profile.host.size() == 2 * jobs);

    const std::string path = "/tmp/tpurt-test-profile.json";
    tpurt::profiler::write_trace(path);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json trace = nlohmann::json::parse(text.str());
    std::map<std::string, int> events;
    for (const auto &e : trace["traceEvents"])
        if (e["ph"] == "X" && e["cat"] == "op")
            ++events[e["name"].get<std::string>()];
    std::map<std::string, int> expected;
    for (const std::string &name : names)
        ++expected[name];
    CHECK(events == expected);

    const std::string table = profile.table();
    INFO(table);
    for (const std::string &name : names)
        CHECK(table.find(name) != std::string::npos);
    CHECK(table.find("card cycles " + std::to_string(cycles) + ", MACs " + std::to_string(macs)) !=
          std::string::npos);
}

TEST_CASE("writing a trace where it cannot go says so", "[profile][errors]") {
    try {
        tpurt::profiler::write_trace("/nonexistent-dir/trace.json");
        FAIL("the trace was written");
    } catch (const tpurt::Error &error) {
        CHECK(error.code() == tpurt::ErrorCode::SystemCall);
        CHECK(std::string(error.what()).find("/nonexistent-dir/trace.json") != std::string::npos);
    }
}
