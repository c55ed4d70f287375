// SPDX-License-Identifier: MIT
// test_serve.cpp - a running tpu-serve (started by check-serve.sh on the guest's loopback) from
// the outside: health, metadata, concurrent infer requests whose logits equal the CPU reference
// of the card's arithmetic bit for bit, malformed and oversized requests answered with a 4xx and
// a JSON error, garbage on the socket, and the server still serving afterwards; dynamic batching
// seen in /metrics. Environment: SERVE_PORT, SERVE_MODEL (the checkpoint it serves),
// SERVE_MAX_BATCH, SERVE_MAX_BODY, TPU_DATASETS (digits).
#include <tpu_data/dataset.hpp>
#include <tpu_infer/reference.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace {

using nlohmann::json;

const char *env(const char *name) {
    const char *v = std::getenv(name);
    if (!v)
        FAIL(std::string("set ") + name + " (tests/guest/workloads/check-serve.sh runs this test)");
    return v;
}
int port() {
    return std::atoi(env("SERVE_PORT"));
}
const std::string model_name = "digits";
const std::string infer_path = "/v2/models/digits/infer";

httplib::Client client() {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(120, 0);
    c.set_tcp_nodelay(true);
    return c;
}

const tpu_data::Dataset &digits() {
    static const tpu_data::Dataset d = tpu_data::load_digits(tpu_data::datasets_dir() + "/sklearn");
    return d;
}

std::string infer_body(std::size_t first, std::size_t rows) {
    const float *x = digits().sample(first);
    std::vector<float> data(x, x + rows * 64);
    return json{
        {"id", std::to_string(first)},
        {"inputs",
         {{{"name", "input"}, {"shape", {rows, 64}}, {"datatype", "FP32"}, {"data", data}}}}}
        .dump();
}

// A 4xx answer whose body is {"error": "..."} naming `what`.
void check_error(const httplib::Result &res, int status, const std::string &what) {
    REQUIRE(res);
    CHECK(res->status == status);
    json j = json::parse(res->body, nullptr, false);
    INFO(res->body);
    REQUIRE(j.is_object());
    REQUIRE(j.contains("error"));
    CHECK_THAT(j["error"].get<std::string>(), Catch::Contains(what));
}

} // namespace

TEST_CASE("tpu-serve is live and ready and describes its model") {
    httplib::Client c = client();
    auto live = c.Get("/v2/health/live");
    REQUIRE(live);
    CHECK(live->status == 200);
    auto ready = c.Get("/v2/health/ready");
    REQUIRE(ready);
    CHECK(ready->status == 200);
    auto meta = c.Get("/v2/models/" + model_name);
    REQUIRE(meta);
    REQUIRE(meta->status == 200);
    json m = json::parse(meta->body);
    CHECK(m["name"] == model_name);
    CHECK(m["inputs"][0]["name"] == "input");
    CHECK(m["inputs"][0]["shape"] == json{-1, 64});
    CHECK(m["outputs"][0]["shape"] == json{-1, 10});
    auto mready = c.Get("/v2/models/" + model_name + "/ready");
    REQUIRE(mready);
    CHECK(mready->status == 200);
    check_error(c.Get("/v2/models/nosuch"), 404, "unknown model 'nosuch'");
    check_error(c.Get("/v2/models/nosuch/ready"), 404, "unknown model");
    check_error(c.Get("/v3/anything"), 404, "no such endpoint: GET /v3/anything");
}

TEST_CASE("concurrent infer requests get the CPU reference's logits bit for bit") {
    const tpu_infer::Network net = tpu_infer::load_network(env("SERVE_MODEL"));
    constexpr int clients = 8, per_client = 6;
    std::vector<std::string> failures(clients);
    std::vector<std::thread> threads;
    for (int t = 0; t < clients; ++t)
        threads.emplace_back([&, t] {
            httplib::Client c = client();
            for (int i = 0; i < per_client && failures[t].empty(); ++i) {
                const std::size_t first = std::size_t(t * 97 + i * 13) % 1700, rows = 1 + i % 3;
                auto res = c.Post(infer_path, infer_body(first, rows), "application/json");
                if (!res || res->status != 200) {
                    failures[t] = res ? res->body : httplib::to_string(res.error());
                    return;
                }
                json j = json::parse(res->body);
                const std::vector<float> want =
                    tpu_infer::reference_logits(net, digits().sample(first), rows);
                const auto logits = j["outputs"][0]["data"].get<std::vector<float>>();
                const auto labels = j["outputs"][1]["data"].get<std::vector<std::uint32_t>>();
                if (j["id"] != std::to_string(first) || j["model_name"] != model_name)
                    failures[t] = "wrong id or model name: " + res->body.substr(0, 200);
                else if (logits.size() != want.size() ||
                         std::memcmp(logits.data(), want.data(), want.size() * 4) != 0)
                    failures[t] =
                        "logits differ from the reference for sample " + std::to_string(first);
                else if (labels != tpu_infer::argmax_rows(want, 10))
                    failures[t] = "labels differ from the reference's argmax";
            }
        });
    for (std::thread &t : threads)
        t.join();
    for (const std::string &f : failures)
        CHECK(f == "");
}

TEST_CASE("malformed, wrongly shaped and oversized requests get a 4xx and a JSON error") {
    httplib::Client c = client();
    const char *type = "application/json";
    check_error(c.Post(infer_path, "{\"inputs\": [", type), 400, "not valid JSON");
    check_error(c.Post(infer_path, "", type), 400, "not valid JSON");
    check_error(c.Post(infer_path, "{}", type), 400, "no \"inputs\"");
    json good = json::parse(infer_body(0, 1));
    json j = good;
    j["inputs"][0]["datatype"] = "INT32";
    check_error(c.Post(infer_path, j.dump(), type), 400, "datatype \"INT32\" is not supported");
    j = good;
    j["inputs"][0]["shape"] = {1, 63};
    check_error(c.Post(infer_path, j.dump(), type), 400, "does not hold samples of 64 features");
    j = good;
    j["inputs"][0]["shape"] = {2, 64};
    check_error(c.Post(infer_path, j.dump(), type), 400, "holds 64 elements");
    j = good;
    j["inputs"][0]["name"] = "image";
    check_error(c.Post(infer_path, j.dump(), type), 400, "unknown input \"image\"");
    j = good;
    j["inputs"][0].erase("data");
    check_error(c.Post(infer_path, j.dump(), type), 400, "has no \"data\"");
    j = good;
    j["inputs"][0]["data"][5] = "x";
    check_error(c.Post(infer_path, j.dump(), type), 400, "not a number");
    check_error(c.Post("/v2/models/nosuch/infer", good.dump(), type), 404, "unknown model");

    const std::size_t max_batch = std::strtoul(env("SERVE_MAX_BATCH"), nullptr, 10);
    check_error(c.Post(infer_path, infer_body(0, max_batch + 1), type), 400,
                "samples a request may hold");
    const std::size_t max_body = std::strtoul(env("SERVE_MAX_BODY"), nullptr, 10);
    std::string huge = good.dump();
    huge.insert(huge.size() - 1, std::string(max_body, ' '));
    check_error(c.Post(infer_path, huge, type), 413, "over the server's limit");
}

TEST_CASE("binary tensor data gets the logits of the JSON form, and bad sizes a 400") {
    const tpu_infer::Network net = tpu_infer::load_network(env("SERVE_MODEL"));
    httplib::Client c = client();
    const std::size_t first = 321, rows = 3;
    const float *x = digits().sample(first);
    json head = {{"inputs",
                  {{{"name", "input"},
                    {"shape", {rows, 64}},
                    {"datatype", "FP32"},
                    {"parameters", {{"binary_data_size", rows * 64 * 4}}}}}},
                 {"parameters", {{"binary_data_output", true}}}};
    const std::string text = head.dump();
    const std::string data(reinterpret_cast<const char *>(x), rows * 64 * 4);
    const auto post = [&](const std::string &body, const std::string &length) {
        return c.Post(infer_path, {{"Inference-Header-Content-Length", length}}, body,
                      "application/octet-stream");
    };
    auto res = post(text + data, std::to_string(text.size()));
    REQUIRE(res);
    INFO(res->body.substr(0, 300));
    REQUIRE(res->status == 200);
    REQUIRE(res->has_header("Inference-Header-Content-Length"));
    const std::size_t length = std::stoul(res->get_header_value("Inference-Header-Content-Length"));
    REQUIRE(length <= res->body.size());
    json answer = json::parse(res->body.substr(0, length));
    CHECK(answer["outputs"][0]["parameters"]["binary_data_size"] == rows * 10 * 4);
    REQUIRE(res->body.size() == length + rows * 10 * 4 + rows * 8);
    std::vector<float> logits(rows * 10);
    std::memcpy(logits.data(), res->body.data() + length, logits.size() * 4);
    const std::vector<float> want = tpu_infer::reference_logits(net, x, rows);
    CHECK(std::memcmp(logits.data(), want.data(), want.size() * 4) == 0);
    // The JSON form of the same request: the same bits.
    auto json_res = c.Post(infer_path, infer_body(first, rows), "application/json");
    REQUIRE(json_res);
    REQUIRE(json_res->status == 200);
    CHECK_FALSE(json_res->has_header("Inference-Header-Content-Length"));
    const auto json_logits =
        json::parse(json_res->body)["outputs"][0]["data"].get<std::vector<float>>();
    REQUIRE(json_logits.size() == logits.size());
    CHECK(std::memcmp(json_logits.data(), logits.data(), logits.size() * 4) == 0);

    // Sizes that disagree with the header or the shape, a header past the body.
    check_error(post(text + data, std::to_string(text.size() + data.size() + 1)), 400,
                "past the end of the");
    check_error(post(text + data.substr(4), std::to_string(text.size())), 400, "is more than the");
    check_error(post(text + data + "more", std::to_string(text.size())), 400,
                "4 bytes after its JSON");
    check_error(post(text + data, "5"), 400, "not valid JSON");
    check_error(post(text + data, "many"), 400, "is not a byte count");
}

TEST_CASE("garbage on the socket does not take the server down") {
    for (const char *garbage : {"GARBAGE\r\n\r\n",
                                "POST /v2/models/digits/infer HTTP/1.1\r\n"
                                "Content-Length: 99999999999999\r\n\r\n{",
                                "\x01\x02\x03"}) {
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        REQUIRE(fd >= 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(std::uint16_t(port()));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
        CHECK(write(fd, garbage, std::strlen(garbage)) > 0);
        shutdown(fd, SHUT_WR);
        char buf[512];
        while (read(fd, buf, sizeof buf) > 0) {
        }
        close(fd);
    }
}

TEST_CASE("after all that the server still serves, and batched concurrent requests") {
    httplib::Client c = client();
    auto res = c.Post(infer_path, infer_body(42, 2), "application/json");
    REQUIRE(res);
    CHECK(res->status == 200);
    auto metrics = c.Get("/metrics");
    REQUIRE(metrics);
    REQUIRE(metrics->status == 200);
    const std::string &m = metrics->body;
    CHECK_THAT(m, Catch::Contains("tpu_serve_requests_total{code=\"200\"}"));
    CHECK_THAT(m, Catch::Contains("tpu_serve_requests_total{code=\"400\"}"));
    CHECK_THAT(m, Catch::Contains("tpu_serve_request_failures_total"));
    // Dynamic batching: fewer card batches than successful requests.
    auto value = [&](const std::string &name) {
        const std::size_t at = m.find("\n" + name + " ");
        REQUIRE(at != std::string::npos);
        return std::strtod(m.c_str() + at + name.size() + 2, nullptr);
    };
    const double batches = value("tpu_serve_batch_size_count");
    const double ok_at = m.find("tpu_serve_requests_total{code=\"200\"} ");
    const double ok = std::strtod(m.c_str() + std::size_t(ok_at) + 37, nullptr);
    INFO(m);
    CHECK(ok >= 49);
    CHECK(batches < ok);
}
