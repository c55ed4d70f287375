// SPDX-License-Identifier: MIT
// test_serve_model.cpp - a running tpu-serve --model x.tpumodel (started by
// check-serve-model.sh on the guest's loopback) from the outside: metadata from the compiled
// graph, concurrent infer requests of 1-5 samples (cut into runs of the compiled batch) whose
// outputs match the CPU reference tpumodel::cpu::run_model() within 1e-6 of the output's
// largest magnitude (the card's fp32 FMAs: compiler/README.md), and requests that do not match
// the signature answered 400 naming the tensor. Environment: SERVE_PORT, SERVE_MODEL (the
// .tpumodel it serves), SERVE_NAME.
#include <tpumodel/cpu_executor.hpp>
#include <tpumodel/file.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

using nlohmann::json;

const char *env(const char *name) {
    const char *v = std::getenv(name);
    if (!v)
        FAIL(std::string("set ") + name +
             " (tests/guest/workloads/check-serve-model.sh runs this test)");
    return v;
}

httplib::Client client() {
    httplib::Client c("127.0.0.1", std::atoi(env("SERVE_PORT")));
    c.set_read_timeout(120, 0);
    return c;
}

const tpumodel::Model &model() {
    static const tpumodel::Model m = tpumodel::load(env("SERVE_MODEL"));
    return m;
}
const tpumodel::Tensor &input() {
    return model().tensors[model().inputs[0]];
}
const tpumodel::Tensor &output() {
    return model().tensors[model().outputs[0]];
}
std::size_t per_sample(const tpumodel::Tensor &t) {
    return std::size_t(t.element_count() / std::uint64_t(t.shape[0]));
}
std::string path(const std::string &what) {
    return "/v2/models/" + std::string(env("SERVE_NAME")) + what;
}

// Sample i's input values, deterministic.
std::vector<float> sample(std::size_t i) {
    std::vector<float> v(per_sample(input()));
    for (std::size_t k = 0; k < v.size(); ++k)
        v[k] = float(int((i * 31 + k * 7) % 19) - 9) / 9.0f;
    return v;
}

std::vector<std::int64_t> shape_of(std::size_t rows, const tpumodel::Tensor &t) {
    std::vector<std::int64_t> s = t.shape;
    s[0] = std::int64_t(rows);
    return s;
}

// The CPU reference's output for sample i (the compiled batch with i first, zeros after).
std::vector<float> reference(std::size_t i) {
    tpumodel::Tensor x = input();
    x.data.assign(x.element_count() * 4, 0);
    const std::vector<float> v = sample(i);
    std::memcpy(x.data.data(), v.data(), v.size() * 4);
    const tpumodel::Tensor y = tpumodel::cpu::run_model(model(), {x})[0];
    std::vector<float> out(per_sample(output()));
    std::memcpy(out.data(), y.data.data(), out.size() * 4);
    return out;
}

// "" when `got` is within 1e-6 of `want`'s largest magnitude everywhere.
std::string mismatch(const std::vector<float> &got, const std::vector<float> &want) {
    if (got.size() != want.size())
        return std::to_string(got.size()) + " values, want " + std::to_string(want.size());
    float scale = 0;
    for (float v : want)
        scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::fabs(got[i] - want[i]) > 1e-6f * scale)
            return "element " + std::to_string(i) + ": " + std::to_string(got[i]) + ", want " +
                   std::to_string(want[i]);
    return "";
}

} // namespace

TEST_CASE("tpu-serve describes a compiled model by its graph") {
    httplib::Client c = client();
    auto res = c.Get(path(""));
    REQUIRE(res);
    REQUIRE(res->status == 200);
    const json meta = json::parse(res->body);
    INFO(res->body);
    CHECK(meta["name"] == env("SERVE_NAME"));
    CHECK(meta["platform"] == "tpu-stack-fp32");
    CHECK(meta["inputs"][0]["name"] == input().name);
    CHECK(meta["inputs"][0]["datatype"] == "FP32");
    std::vector<std::int64_t> in_shape = shape_of(1, input()), out_shape = shape_of(1, output());
    in_shape[0] = out_shape[0] = -1;
    CHECK(meta["inputs"][0]["shape"] == json(in_shape));
    REQUIRE(meta["outputs"].size() == 1);
    CHECK(meta["outputs"][0]["name"] == output().name);
    CHECK(meta["outputs"][0]["shape"] == json(out_shape));
}

TEST_CASE("concurrent requests to a compiled model get the CPU reference's outputs") {
    constexpr int clients = 4, per_client = 5;
    std::vector<std::string> failures(clients);
    std::vector<std::thread> threads;
    for (int t = 0; t < clients; ++t)
        threads.emplace_back([&, t] {
            httplib::Client c = client();
            for (int i = 0; i < per_client && failures[t].empty(); ++i) {
                const std::size_t first = std::size_t(t * 10 + i * 3), rows = 1 + (t + i) % 5;
                std::vector<float> data;
                for (std::size_t r = 0; r < rows; ++r) {
                    const std::vector<float> s = sample(first + r);
                    data.insert(data.end(), s.begin(), s.end());
                }
                const json body = {{"inputs",
                                    {{{"name", input().name},
                                      {"shape", shape_of(rows, input())},
                                      {"datatype", "FP32"},
                                      {"data", data}}}}};
                auto res = c.Post(path("/infer"), body.dump(), "application/json");
                if (!res || res->status != 200) {
                    failures[t] = res ? res->body : httplib::to_string(res.error());
                    return;
                }
                const json j = json::parse(res->body);
                const auto got = j["outputs"][0]["data"].get<std::vector<float>>();
                const std::size_t n = per_sample(output());
                if (j["outputs"][0]["shape"] != json(shape_of(rows, output())) ||
                    got.size() != rows * n) {
                    failures[t] = "output shape: " + res->body.substr(0, 200);
                    return;
                }
                for (std::size_t r = 0; r < rows && failures[t].empty(); ++r) {
                    const std::string d =
                        mismatch(std::vector<float>(got.begin() + long(r * n),
                                                    got.begin() + long(r * n + n)),
                                 reference(first + r));
                    if (!d.empty())
                        failures[t] = "sample " + std::to_string(first + r) + ": " + d;
                }
            }
        });
    for (std::thread &t : threads)
        t.join();
    for (const std::string &f : failures)
        CHECK(f == "");
}

TEST_CASE("requests that do not match a compiled model get 400 naming the tensor") {
    httplib::Client c = client();
    std::vector<float> data = sample(0);
    data.push_back(0.0f); // one value more per sample than the model's
    const json body = {{"inputs",
                        {{{"name", input().name},
                          {"shape", {1, data.size()}},
                          {"datatype", "FP32"},
                          {"data", data}}}}};
    auto res = c.Post(path("/infer"), body.dump(), "application/json");
    REQUIRE(res);
    INFO(res->body);
    CHECK(res->status == 400);
    CHECK_THAT(res->body, Catch::Contains("input \\\"" + input().name + "\\\" shape"));
}
