// SPDX-License-Identifier: MIT
// profile_test.cpp - profiles without a device: the trace JSON has the structure Chrome's
// trace-event format and Perfetto expect (checked by parsing it with nlohmann::json here: one
// complete event per op on its card's track with the counts in args, host spans on the host
// track, track names), reads back into the same records, and the table sums calls, card time
// and MACs per op and in total; broken traces are refused with what is wrong.
#include <tpurt/error.hpp>
#include <tpurt/profile.hpp>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

using tpurt::OpRecord;
using tpurt::Profile;

namespace {

Profile sample() {
    Profile p;
    p.ops.push_back({"matmul bf16 64x64x64", 0, 10.5, 300, 250, 175, 262144, 24576, 1, 0.09});
    p.ops.push_back(
        {"conv2d fp32 1x8x8x4 k3x3 f8", 0, 400, 900, 1500, 1050, 18432, 4096, 2, 0.001});
    p.ops.push_back({"matmul bf16 64x64x64", 1, 500.25, 310, 250, 175, 262144, 24576, 1, 0.09});
    p.host.push_back({"submit", "matmul bf16 64x64x64", 0, 10.5, 40});
    p.host.push_back({"wait", "matmul bf16 64x64x64", 0, 51, 250});
    return p;
}

// The columns after `name` on the table line that starts with it.
std::vector<std::string> columns(const std::string &table, const std::string &name) {
    std::istringstream lines(table);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(name + " ", 0) != 0)
            continue;
        std::istringstream words(line.substr(name.size()));
        std::vector<std::string> out;
        for (std::string w; words >> w;)
            out.push_back(w);
        return out;
    }
    FAIL("no table line for " + name);
    return {};
}

} // namespace

TEST_CASE("a profile is Chrome trace-event JSON with one event per op", "[profile]") {
    const Profile p = sample();
    const nlohmann::json trace = nlohmann::json::parse(p.to_trace_json());
    REQUIRE(trace["traceEvents"].is_array());
    int ops = 0, host = 0, names = 0;
    for (const auto &e : trace["traceEvents"]) {
        REQUIRE(e.contains("ph"));
        REQUIRE(e.contains("pid"));
        if (e["ph"] == "M") {
            ++names;
            CHECK(e["args"]["name"].is_string());
            continue;
        }
        REQUIRE(e["ph"] == "X");
        CHECK(e["ts"].is_number());
        CHECK(e["dur"].is_number());
        if (e["cat"] == "op") {
            const OpRecord &op = p.ops[ops++];
            CHECK(e["name"] == op.name);
            CHECK(e["pid"] == 100 + static_cast<int>(op.device));
            CHECK(e["ts"] == op.start_us);
            CHECK(e["dur"] == op.card_us);
            CHECK(e["args"]["cycles"] == op.cycles);
            CHECK(e["args"]["macs"] == op.macs);
            CHECK(e["args"]["bytes"] == op.bytes);
            CHECK(e["args"]["mxu_utilisation"] == op.utilisation);
        } else {
            CHECK(e["cat"] == "host");
            CHECK(e["pid"] == 1);
            ++host;
        }
    }
    CHECK(ops == 3);
    CHECK(host == 2);
    CHECK(names == 2 + 2 * 2); // the host and two cards: a process and a thread name each
}

TEST_CASE("a trace reads back into the same profile", "[profile]") {
    const Profile p = sample();
    const Profile back = Profile::from_trace_json(p.to_trace_json());
    CHECK(back.ops == p.ops);
    CHECK(back.host == p.host);
}

TEST_CASE("the table sums per op and in total", "[profile]") {
    const std::string table = sample().table();
    INFO(table);
    // 2 calls of the matmul: 0.5 of 2 ms card time; the conv2d first (most card time).
    CHECK(columns(table, "matmul bf16 64x64x64") == std::vector<std::string>{"2", "0.500", "25.0%",
                                                                             "9.0%", "5.243e+05",
                                                                             "4.915e+04", "0.610"});
    CHECK(columns(table, "conv2d fp32 1x8x8x4 k3x3 f8") ==
          std::vector<std::string>{"1", "1.500", "75.0%", "0.1%", "1.843e+04", "4096", "0.900"});
    CHECK(columns(table, "total").at(0) == "3");
    CHECK(columns(table, "total").at(1) == "2.000");
    CHECK(columns(table, "total").at(2) == "100.0%");
    CHECK(table.find("card cycles 1400, MACs 542720 in 3 op calls") != std::string::npos);
    CHECK(table.find("conv2d") < table.find("matmul"));
}

TEST_CASE("broken traces are refused with what is wrong", "[profile]") {
    const auto refused = [](const std::string &text, const std::string &expected) {
        try {
            Profile::from_trace_json(text);
            FAIL("accepted: " + text);
        } catch (const tpurt::Error &error) {
            CHECK(error.code() == tpurt::ErrorCode::InvalidArgument);
            CHECK(std::string(error.what()).find(expected) != std::string::npos);
        }
    };
    refused("{\"traceEvents\": [", "invalid JSON");
    refused("[1, 2]", "no \"traceEvents\"");
    refused(R"({"traceEvents": [{"ph": "X", "cat": "op", "name": "m", "ts": 1, "dur": 2}]})",
            "event 0 has no \"args\"");
    refused(R"({"traceEvents": [{"ph": "X", "cat": "op", "name": "m", "ts": 1, "dur": 2,
              "args": {"device": 0, "cycles": "many"}}]})",
            "\"cycles\" of the wrong type");
}
