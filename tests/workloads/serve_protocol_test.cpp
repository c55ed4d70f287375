// SPDX-License-Identifier: MIT
// serve_protocol_test.cpp - tpu-serve without HTTP: KServe v2 infer requests (flat and nested
// data, ids, output selection, and every malformed kind refused with a 400 and a message), the
// responses and metadata, the Prometheus text, and the dynamic batcher merging concurrent
// requests into one batch and handing each its rows.
#include <tpu_serve/batcher.hpp>
#include <tpu_serve/metrics.hpp>
#include <tpu_serve/protocol.hpp>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

namespace {

using nlohmann::json;

tpu_serve::ModelSignature model() {
    tpu_serve::ModelSignature m;
    m.name = "mlp";
    m.platform = "tpu-stack-bf16";
    m.features = 4;
    m.classes = 3;
    m.max_batch = 8;
    return m;
}

std::string request(const json &shape, const json &data, const std::string &datatype = "FP32",
                    const std::string &name = "input") {
    return json{
        {"inputs", {{{"name", name}, {"shape", shape}, {"datatype", datatype}, {"data", data}}}}}
        .dump();
}

void refused(const std::string &body, const std::string &message) {
    INFO(body);
    try {
        tpu_serve::parse_infer_request(body, model());
        FAIL("accepted");
    } catch (const tpu_serve::ProtocolError &e) {
        CHECK(e.status() == 400);
        CHECK_THAT(e.what(), Catch::Contains(message));
    }
}

} // namespace

TEST_CASE("infer requests: flat and nested data, image shapes, id and outputs") {
    auto r = tpu_serve::parse_infer_request(request({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8.5}), model());
    CHECK(r.rows == 2);
    CHECK(r.data == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8.5f});
    CHECK(r.want_logits);
    CHECK(r.want_label);
    r = tpu_serve::parse_infer_request(request({1, 2, 2}, {{{1, 2}, {3, 4}}}), model());
    CHECK(r.rows == 1);
    CHECK(r.data == std::vector<float>{1, 2, 3, 4});
    json j = json::parse(request({1, 4}, {0, 0, 0, 0}));
    j["id"] = "req-7";
    j["outputs"] = {{{"name", "label"}}};
    r = tpu_serve::parse_infer_request(j.dump(), model());
    CHECK(r.id == "req-7");
    CHECK(!r.want_logits);
    CHECK(r.want_label);
}

TEST_CASE("malformed infer requests are refused with 400 and what is wrong") {
    refused("{\"inputs\": [", "not valid JSON");
    refused("[1, 2]", "not a JSON object");
    refused("{}", "the request has no \"inputs\"");
    refused(R"({"inputs": {}})", "must be an array of one tensor");
    refused(R"({"inputs": [1]})", "inputs[0] is not an object");
    refused(R"({"inputs": [{"shape": [1, 4], "datatype": "FP32", "data": [1,2,3,4]}]})",
            "inputs[0] has no \"name\"");
    refused(request({1, 4}, {1, 2, 3, 4}, "FP32", "pixels"), "unknown input \"pixels\"");
    refused(request({1, 4}, {1, 2, 3, 4}, "INT8"), "datatype \"INT8\" is not supported");
    refused(request({4}, {1, 2, 3, 4}), "input shape must be [batch, 4]");
    refused(request({1, 5}, {1, 2, 3, 4, 5}), "does not hold samples of 4 features");
    refused(request({0, 4}, json::array()), "not a positive integer");
    refused(request({1, -4}, {1}), "not a positive integer");
    refused(request({1, "4"}, {1}), "not a positive integer");
    refused(request({9, 4}, std::vector<float>(36, 0.0f)), "more than the 8 samples");
    refused(request({2, 4}, {1, 2, 3, 4}), "holds 4 elements, its shape [2,4] 8");
    refused(request({1, 4}, {1, 2, 3, 4, 5}), "more than the 4 elements");
    refused(request({1, 4}, {1, 2, "x", 4}), "holds string \"x\", not a number");
    refused(request({1, 4}, {1, 2, nullptr, 4}), "holds null");
    refused(request({1, 4}, {1, 2, true, 4}), "holds boolean");
    refused(request({1, 4}, {1, 2, 1e39, 4}), "beyond FP32's range");
    refused(request({1, 4}, {{{{{1, 2, 3, 4}}}}}), "nested deeper than its shape");
    refused(R"({"id": 5, "inputs": []})", "\"id\" is not a string");
    json j = json::parse(request({1, 4}, {0, 0, 0, 0}));
    j["outputs"] = {{{"name", "probabilities"}}};
    refused(j.dump(), "unknown output \"probabilities\"");
    j["outputs"] = "logits";
    refused(j.dump(), "\"outputs\" is not an array");
}

TEST_CASE("infer responses, metadata and errors are KServe v2 JSON") {
    auto r = tpu_serve::parse_infer_request(request({2, 4}, std::vector<float>(8, 0.0f)), model());
    r.id = "abc";
    json out = json::parse(tpu_serve::infer_response(model(), r, {0.5f, 2, 1, -1, -3, -2}));
    CHECK(out["model_name"] == "mlp");
    CHECK(out["model_version"] == "1");
    CHECK(out["id"] == "abc");
    REQUIRE(out["outputs"].size() == 2);
    CHECK(out["outputs"][0]["name"] == "logits");
    CHECK(out["outputs"][0]["datatype"] == "FP32");
    CHECK(out["outputs"][0]["shape"] == json{2, 3});
    CHECK(out["outputs"][0]["data"] == json{0.5, 2, 1, -1, -3, -2});
    CHECK(out["outputs"][1]["name"] == "label");
    CHECK(out["outputs"][1]["datatype"] == "INT64");
    CHECK(out["outputs"][1]["data"] == json{1, 0});
    json meta = json::parse(tpu_serve::model_metadata(model()));
    CHECK(meta["name"] == "mlp");
    CHECK(meta["platform"] == "tpu-stack-bf16");
    CHECK(meta["inputs"][0]["shape"] == json{-1, 4});
    CHECK(meta["outputs"][0]["shape"] == json{-1, 3});
    CHECK(json::parse(tpu_serve::error_body("bad \"x\""))["error"] == "bad \"x\"");
}

TEST_CASE("Prometheus metrics: counters by status and cumulative histograms") {
    tpu_serve::Metrics m(8);
    m.request(200, 0.003);
    m.request(200, 0.2);
    m.request(400, 0.0005);
    m.batch(3);
    m.batch(8);
    const std::string text = m.render();
    CHECK_THAT(text, Catch::Contains("tpu_serve_requests_total{code=\"200\"} 2\n"));
    CHECK_THAT(text, Catch::Contains("tpu_serve_requests_total{code=\"400\"} 1\n"));
    CHECK_THAT(text, Catch::Contains("tpu_serve_request_failures_total 1\n"));
    CHECK_THAT(text, Catch::Contains("tpu_serve_samples_total 11\n"));
    CHECK_THAT(text,
               Catch::Contains("tpu_serve_request_duration_seconds_bucket{le=\"0.001\"} 1\n"));
    CHECK_THAT(text,
               Catch::Contains("tpu_serve_request_duration_seconds_bucket{le=\"0.005\"} 2\n"));
    CHECK_THAT(text, Catch::Contains("tpu_serve_request_duration_seconds_count 3\n"));
    CHECK_THAT(text, Catch::Contains("tpu_serve_batch_size_bucket{le=\"2\"} 0\n"));
    CHECK_THAT(text, Catch::Contains("tpu_serve_batch_size_bucket{le=\"4\"} 1\n"));
    CHECK_THAT(text, Catch::Contains("tpu_serve_batch_size_bucket{le=\"8\"} 2\n"));
    CHECK_THAT(text, Catch::Contains("# TYPE tpu_serve_batch_size histogram\n"));
}

TEST_CASE("the batcher merges concurrent requests into one batch and splits the results") {
    std::vector<std::size_t> batches;
    std::atomic<int> calls{0};
    // logits of a sample: (sum, -sum)
    tpu_serve::Batcher b(
        [&](const float *x, std::size_t rows) {
            ++calls;
            std::vector<float> out;
            for (std::size_t r = 0; r < rows; ++r) {
                const float s = x[2 * r] + x[2 * r + 1];
                out.push_back(s);
                out.push_back(-s);
            }
            return out;
        },
        [&](std::size_t rows) { batches.push_back(rows); }, 2, 2, 8,
        std::chrono::milliseconds(1000)); // long enough for three submits on a loaded machine
    std::vector<std::future<std::vector<float>>> f;
    f.push_back(b.submit({1, 2}, 1));
    f.push_back(b.submit({10, 20, 30, 40}, 2));
    f.push_back(b.submit({5, 5}, 1));
    CHECK(f[0].get() == std::vector<float>{3, -3});
    CHECK(f[1].get() == std::vector<float>{30, -30, 70, -70});
    CHECK(f[2].get() == std::vector<float>{10, -10});
    CHECK(calls == 1);
    CHECK(batches == std::vector<std::size_t>{4});

    // Once the queue holds a full batch it goes at once; a request that would overflow the
    // batch waits for the next one.
    auto full = b.submit(std::vector<float>(12, 1.0f), 6);
    auto rest = b.submit(std::vector<float>(6, 1.0f), 3);
    CHECK(full.get().size() == 12);
    CHECK(rest.get().size() == 6);
    CHECK(batches == std::vector<std::size_t>{4, 6, 3});
    CHECK_THROWS(b.submit(std::vector<float>(18, 0.0f), 9));
    CHECK_THROWS(b.submit({1, 2, 3}, 1));
    b.stop();
    CHECK_THROWS(b.submit({1, 2}, 1));
}

TEST_CASE("a failing batch fails each of its requests, and the batcher goes on") {
    bool fail = true;
    tpu_serve::Batcher b(
        [&](const float *, std::size_t rows) {
            if (fail)
                throw std::runtime_error("card error");
            return std::vector<float>(rows, 1.0f);
        },
        nullptr, 1, 1, 4, std::chrono::milliseconds(1));
    auto f = b.submit({1}, 1);
    CHECK_THROWS_WITH(f.get(), "card error");
    fail = false;
    CHECK(b.submit({1}, 1).get() == std::vector<float>{1});
}
