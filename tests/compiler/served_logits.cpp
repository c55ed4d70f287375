// SPDX-License-Identifier: MIT
// served_logits.cpp - a model's logits asked of tpu-serve's HTTP server (served_logits.hpp).
#include "served_logits.hpp"

#include <tpu_serve/server.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

namespace compiler_test {

std::vector<float> served_logits(tpu_serve::ModelSignature sig, tpu_serve::Batcher::RunFn run,
                                 const float *x, std::size_t count,
                                 const std::vector<std::size_t> &sample_dims) {
    tpu_serve::ServerOptions options;
    options.port = 0;
    tpu_serve::Server server(sig, std::move(run), serve_batch, std::chrono::microseconds(0),
                             options);
    const int port = server.bind();
    std::thread serving([&] { server.serve(); });
    httplib::Client client("127.0.0.1", port);
    std::size_t size = 1;
    for (std::size_t d : sample_dims)
        size *= d;
    std::vector<float> logits;
    for (std::size_t first = 0; first < count; first += serve_batch) {
        const std::size_t n = std::min(serve_batch, count - first);
        std::vector<std::size_t> shape{n};
        shape.insert(shape.end(), sample_dims.begin(), sample_dims.end());
        const nlohmann::json request = {
            {"inputs",
             {{{"name", sig.input},
               {"shape", shape},
               {"datatype", "FP32"},
               {"data", std::vector<float>(x + first * size, x + (first + n) * size)}}}}};
        const auto answer =
            client.Post("/v2/models/" + sig.name + "/infer", request.dump(), "application/json");
        REQUIRE(answer);
        INFO(answer->body);
        REQUIRE(answer->status == 200);
        const nlohmann::json out = nlohmann::json::parse(answer->body)["outputs"];
        const auto logit = std::find_if(
            out.begin(), out.end(), [](const nlohmann::json &o) { return o["name"] == "logits"; });
        REQUIRE(logit != out.end());
        for (const nlohmann::json &v : (*logit)["data"])
            logits.push_back(v.get<float>());
    }
    server.stop();
    serving.join();
    return logits;
}

} // namespace compiler_test
