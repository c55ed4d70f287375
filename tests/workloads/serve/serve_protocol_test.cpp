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
#include <cstring>
#include <limits>
#include <optional>
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

void refused(const std::string &body, const std::string &message,
             std::optional<std::string_view> header_length = std::nullopt) {
    INFO(body);
    try {
        tpu_serve::parse_infer_request(body, model(), header_length);
        FAIL("accepted");
    } catch (const tpu_serve::ProtocolError &e) {
        CHECK(e.status() == 400);
        CHECK_THAT(e.what(), Catch::Contains(message));
    }
}

// A request with its input as binary tensor data: {JSON, binary} and the JSON's length.
struct BinaryRequest {
    std::string body, header_length;
};
BinaryRequest binary_request(const std::vector<float> &data, std::uint64_t rows,
                             json parameters = nullptr, json extra = json::object()) {
    if (parameters.is_null())
        parameters = {{"binary_data_size", data.size() * sizeof(float)}};
    json j = {{"inputs",
               {{{"name", "input"},
                 {"shape", {rows, 4}},
                 {"datatype", "FP32"},
                 {"parameters", parameters}}}}};
    j.update(extra);
    std::string text = j.dump();
    const std::string length = std::to_string(text.size());
    text.append(reinterpret_cast<const char *>(data.data()), data.size() * sizeof(float));
    return {text, length};
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

TEST_CASE("binary tensor data: an input after the JSON, outputs after the response's JSON") {
    const std::vector<float> x = {1, 2.5f, -3, 4, 5, 6, 7, 8.25f};
    BinaryRequest b = binary_request(x, 2);
    auto r = tpu_serve::parse_infer_request(b.body, model(), b.header_length);
    CHECK(r.rows == 2);
    CHECK(r.data == x);
    CHECK_FALSE(r.binary_logits);
    CHECK_FALSE(r.binary_label);
    // The same request as JSON parses to the same bits.
    CHECK(tpu_serve::parse_infer_request(request({2, 4}, x), model()).data == r.data);

    // Every output as binary data; then only the label, the logits as JSON.
    b = binary_request(x, 2, nullptr, {{"parameters", {{"binary_data_output", true}}}});
    r = tpu_serve::parse_infer_request(b.body, model(), b.header_length);
    CHECK(r.binary_logits);
    CHECK(r.binary_label);
    const std::vector<float> logits = {0.5f, 2, 1, -1, -3, -2};
    auto response = tpu_serve::infer_response(model(), r, logits);
    REQUIRE(response.header_length);
    json head = json::parse(response.body.substr(0, *response.header_length));
    CHECK(head["outputs"][0]["name"] == "logits");
    CHECK(head["outputs"][0]["parameters"]["binary_data_size"] == 24);
    CHECK_FALSE(head["outputs"][0].contains("data"));
    CHECK(head["outputs"][1]["parameters"]["binary_data_size"] == 16);
    REQUIRE(response.body.size() == *response.header_length + 24 + 16);
    std::vector<float> got_logits(6);
    std::memcpy(got_logits.data(), response.body.data() + *response.header_length, 24);
    CHECK(got_logits == logits);
    std::int64_t label[2];
    std::memcpy(label, response.body.data() + *response.header_length + 24, 16);
    CHECK(label[0] == 1);
    CHECK(label[1] == 0);

    b = binary_request(
        x, 2, nullptr,
        {{"outputs",
          {{{"name", "logits"}}, {{"name", "label"}, {"parameters", {{"binary_data", true}}}}}}});
    r = tpu_serve::parse_infer_request(b.body, model(), b.header_length);
    CHECK_FALSE(r.binary_logits);
    CHECK(r.binary_label);
    response = tpu_serve::infer_response(model(), r, logits);
    REQUIRE(response.header_length);
    head = json::parse(response.body.substr(0, *response.header_length));
    CHECK(head["outputs"][0]["data"] == json{0.5, 2, 1, -1, -3, -2});
    CHECK(response.body.size() == *response.header_length + 16);
}

TEST_CASE("malformed binary tensor data is refused with 400 and what is wrong") {
    const std::vector<float> x = {1, 2, 3, 4};
    const BinaryRequest good = binary_request(x, 1);
    // The header: not a number, or past the body.
    refused(good.body, "is not a byte count", "12x");
    refused(good.body, "is not a byte count", "");
    refused(good.body, "is not a byte count", "-3");
    refused(good.body, "past the end of the " + std::to_string(good.body.size()) + "-byte body",
            std::to_string(good.body.size() + 1));
    // A header that cuts the JSON short, or leaves part of it as data.
    refused(good.body, "not valid JSON", std::to_string(std::stoul(good.header_length) - 1));
    // binary_data_size disagreeing with the shape, or with the bytes there are.
    BinaryRequest b = binary_request(x, 1, {{"binary_data_size", 12}});
    refused(b.body, "binary_data_size 12 is not the 16 bytes of its 4 FP32", b.header_length);
    b = binary_request({1, 2, 3}, 1, {{"binary_data_size", 16}});
    refused(b.body, "binary_data_size 16 is more than the 12 bytes after", b.header_length);
    b = binary_request(x, 1, {{"binary_data_size", -16}});
    refused(b.body, "binary_data_size -16 is not a byte count", b.header_length);
    b = binary_request(x, 1, {{"binary_data_size", "16"}});
    refused(b.body, "is not a byte count", b.header_length);
    refused(binary_request(x, 1, json::array()).body, "\"parameters\" is not an object",
            binary_request(x, 1, json::array()).header_length);
    // Bytes no input accounts for; binary data without the header; data given twice.
    b = binary_request({1, 2, 3, 4, 5}, 1, {{"binary_data_size", 16}});
    refused(b.body, "4 bytes after its JSON that no input's binary_data_size", b.header_length);
    refused(good.body, "a NUL byte at offset " + good.header_length);
    json j = json::parse(good.body.substr(0, std::stoul(good.header_length)));
    refused(j.dump(), "has no Inference-Header-Content-Length header");
    j["inputs"][0]["data"] = x;
    refused(j.dump(), "has both \"data\" and a binary_data_size", std::to_string(j.dump().size()));
    // Values JSON cannot carry either.
    b = binary_request({1, std::numeric_limits<float>::infinity(), 3, 4}, 1);
    refused(b.body, "holds inf at element 1, not a finite number", b.header_length);
    b = binary_request({1, 2, 3, 4}, 1, nullptr,
                       {{"outputs", {{{"name", "label"}, {"parameters", {{"binary_data", 1}}}}}}});
    refused(b.body, "binary_data 1 is not true or false", b.header_length);
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
    const auto response = tpu_serve::infer_response(model(), r, {0.5f, 2, 1, -1, -3, -2});
    CHECK_FALSE(response.header_length);
    json out = json::parse(response.body);
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
