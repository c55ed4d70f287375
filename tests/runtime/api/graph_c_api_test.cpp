// SPDX-License-Identifier: MIT
// graph_c_api_test.cpp - capture and replay through the C API (tpurt.h) on the in-process card:
// square and elementwise sub recorded on a stream, replayed as one job with new inputs written
// as a copy and as the graph's parameter, against host arithmetic; host copies refused while
// capturing; an end without a begin refused.
#include <tpurt/tpurt.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

TEST_CASE("in process: the C API captures ops on a stream and replays them as one job",
          "[in-process][c-api][graph]") {
    tpurt_device *dev = nullptr;
    REQUIRE(tpurt_open_in_process(nullptr, &dev) == TPURT_OK);
    constexpr std::uint64_t R = 3, C = 5;
    tpurt_tensor_desc desc = {};
    desc.struct_size = sizeof(desc);
    desc.dtype = TPURT_INT32;
    desc.rank = 2;
    desc.shape[0] = R;
    desc.shape[1] = C;
    tpurt_tensor *x = nullptr, *sq = nullptr, *diff = nullptr;
    REQUIRE(tpurt_tensor_create(dev, &desc, &x) == TPURT_OK);
    REQUIRE(tpurt_tensor_create(dev, &desc, &sq) == TPURT_OK);
    REQUIRE(tpurt_tensor_create(dev, &desc, &diff) == TPURT_OK);
    tpurt_stream *s = nullptr;
    REQUIRE(tpurt_stream_create(dev, nullptr, &s) == TPURT_OK);

    tpurt_graph *graph = nullptr;
    CHECK(tpurt_stream_end_capture(s, "none", &graph) == TPURT_E_INVALID);
    REQUIRE(tpurt_stream_begin_capture(s) == TPURT_OK);
    std::vector<std::int32_t> values(R * C), out(R * C);
    CHECK(tpurt_tensor_write(s, x, values.data(), values.size() * 4) == TPURT_E_INVALID);
    CHECK(std::string(tpurt_last_error()).find("cannot be captured") != std::string::npos);
    tpurt_tensor *square_args[2] = {x, sq};
    REQUIRE(tpurt_op_launch(nullptr, s, "square", square_args, 2, nullptr, 0) == TPURT_OK);
    tpurt_tensor *sub_args[3] = {sq, x, diff};
    const tpurt_op_attr sub[1] = {{"op", "sub"}};
    REQUIRE(tpurt_op_launch(nullptr, s, "elementwise", sub_args, 3, sub, 1) == TPURT_OK);
    REQUIRE(tpurt_stream_end_capture(s, "x2-x", &graph) == TPURT_OK);
    std::size_t jobs = 0, eager = 0;
    REQUIRE(tpurt_graph_jobs(graph, &jobs, &eager) == TPURT_OK);
    CHECK(jobs == 1);
    CHECK(eager == 2);
    REQUIRE(tpurt_graph_add_parameter(graph, "x", x) == TPURT_OK);

    for (std::int32_t round = 0; round < 3; ++round) {
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = static_cast<std::int32_t>(i) * (round + 1) - 7;
        if (round == 1) // the input as the graph's parameter, else as a copy on the stream
            REQUIRE(tpurt_graph_set_parameter(graph, "x", values.data(), values.size() * 4) ==
                    TPURT_OK);
        else
            REQUIRE(tpurt_tensor_write(s, x, values.data(), values.size() * 4) == TPURT_OK);
        REQUIRE(tpurt_graph_replay(graph, s) == TPURT_OK);
        REQUIRE(tpurt_tensor_read(s, diff, out.data(), out.size() * 4) == TPURT_OK);
        REQUIRE(tpurt_stream_synchronize(s, TPURT_WAIT_DEFAULT) == TPURT_OK);
        for (std::size_t i = 0; i < values.size(); ++i) {
            INFO("round " << round << " element " << i);
            CHECK(out[i] == values[i] * values[i] - values[i]);
        }
    }
    tpurt_graph_destroy(graph);
    tpurt_stream_destroy(s);
    tpurt_tensor_destroy(x);
    tpurt_tensor_destroy(sq);
    tpurt_tensor_destroy(diff);
    tpurt_close(dev);
}
