// SPDX-License-Identifier: MIT
// serve_graph_test.cpp - tpu-serve's compiled models (tpu-serve --model x.tpumodel) without
// HTTP: the KServe v2 signature and metadata taken from the graph (names, FP32, shapes with the
// batch axis), requests that do not match it refused with 400 naming the tensor, models it
// cannot serve refused with the reason, and batches of any size cut into runs of the compiled
// batch (the last padded with zeros), on the CPU reference and on the card in the process.
#include <tpu_serve/graph_model.hpp>
#include <tpu_serve/protocol.hpp>

#include <tpumodel/card_executor.hpp>
#include <tpumodel/cpu_executor.hpp>

#include <tpurt/device.hpp>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <cstring>

namespace {

using nlohmann::json;

// image [3, 1, 2, 2] -> Relu (on the card: unary) -> act [3, 1, 2, 2].
tpumodel::Model relu_model() {
    tpumodel::Model m;
    m.producer = "serve_graph_test";
    const auto image = m.add_tensor(
        {"image", tpumodel::DType::Float, tpumodel::Layout::Plain, {3, 1, 2, 2}, false, {}});
    const auto act = m.add_tensor(
        {"act", tpumodel::DType::Float, tpumodel::Layout::Plain, {3, 1, 2, 2}, false, {}});
    tpumodel::Node relu;
    relu.name = "relu";
    relu.op = "Relu";
    relu.placement = tpumodel::Placement::Card;
    relu.card_op = "unary";
    relu.inputs = {image};
    relu.outputs = {act};
    m.nodes.push_back(relu);
    m.inputs = {image};
    m.outputs = {act};
    return m;
}

std::string request(const json &shape, std::size_t n, const std::string &name = "image") {
    return json{{"inputs",
                 {{{"name", name},
                   {"shape", shape},
                   {"datatype", "FP32"},
                   {"data", std::vector<float>(n, 1.0f)}}}}}
        .dump();
}

void refused(const tpu_serve::ModelSignature &sig, const std::string &body,
             const std::string &message) {
    INFO(body);
    try {
        tpu_serve::parse_infer_request(body, sig);
        FAIL("accepted");
    } catch (const tpu_serve::ProtocolError &e) {
        CHECK(e.status() == 400);
        CHECK_THAT(e.what(), Catch::Contains(message));
    }
}

std::vector<float> samples(std::size_t n) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = float(int(i % 7) - 3) * 0.5f;
    return v;
}

} // namespace

TEST_CASE("a compiled model's metadata comes from its graph", "[serve-graph]") {
    tpu_serve::ModelSignature sig = tpu_serve::graph_signature(relu_model(), "relu");
    sig.max_batch = 8;
    const json meta = json::parse(tpu_serve::model_metadata(sig));
    CHECK(meta["name"] == "relu");
    CHECK(meta["platform"] == "tpu-stack-fp32");
    CHECK(meta["inputs"] ==
          json::parse(R"([{"name": "image", "datatype": "FP32", "shape": [-1, 1, 2, 2]}])"));
    CHECK(meta["outputs"] ==
          json::parse(R"([{"name": "act", "datatype": "FP32", "shape": [-1, 1, 2, 2]}])"));

    auto r = tpu_serve::parse_infer_request(request({2, 1, 2, 2}, 8), sig);
    CHECK(r.rows == 2);
    CHECK_FALSE(r.want_label);
    const json out = json::parse(tpu_serve::infer_response(sig, r, samples(8)).body);
    REQUIRE(out["outputs"].size() == 1);
    CHECK(out["outputs"][0]["name"] == "act");
    CHECK(out["outputs"][0]["shape"] == json{2, 1, 2, 2});
}

TEST_CASE("requests that do not match a compiled model's signature get 400 naming the tensor",
          "[serve-graph]") {
    tpu_serve::ModelSignature sig = tpu_serve::graph_signature(relu_model(), "relu");
    sig.max_batch = 8;
    refused(sig, request({2, 4}, 8), "input \"image\" shape [2,4] is not the model's [-1,1,2,2]");
    refused(sig, request({2, 2, 2, 1}, 8), "input \"image\" shape [2,2,2,1] is not the model's");
    refused(sig, request({2, 1, 2, 2}, 8, "x"),
            "unknown input \"x\": the model's input is \"image\"");
    json j = json::parse(request({1, 1, 2, 2}, 4));
    j["inputs"][0]["datatype"] = "INT64";
    refused(sig, j.dump(), "input \"image\" datatype \"INT64\" is not supported");
    j = json::parse(request({1, 1, 2, 2}, 4));
    j["outputs"] = {{{"name", "label"}}};
    refused(sig, j.dump(), "unknown output \"label\": the model's outputs are \"act\"");
}

TEST_CASE("models tpu-serve cannot serve are refused with the reason", "[serve-graph]") {
    tpumodel::Model m = relu_model();
    m.outputs.push_back(m.inputs[0]);
    CHECK_THROWS_WITH(tpu_serve::graph_signature(m, "x"),
                      Catch::Contains("1 inputs and 2 outputs: tpu-serve serves models of one "
                                      "input and one output"));
    m = relu_model();
    m.tensors[1].shape = {6, 2};
    CHECK_THROWS_WITH(tpu_serve::graph_signature(m, "x"),
                      Catch::Contains("do not share a batch axis"));
    m = relu_model();
    m.tensors[0].dtype = tpumodel::DType::Int64;
    CHECK_THROWS_WITH(tpu_serve::graph_signature(m, "x"),
                      "input 'image' is int64: tpu-serve serves float32 tensors");
    m = relu_model();
    m.tensors[0].shape = {12};
    m.tensors[1].shape = {12};
    CHECK_THROWS_WITH(tpu_serve::graph_signature(m, "x"), Catch::Contains("has no batch axis"));
}

TEST_CASE("batches of any size run in chunks of the compiled batch, the last padded",
          "[serve-graph]") {
    const tpumodel::Model m = relu_model();
    std::vector<std::vector<float>> seen; // each run's input
    const tpu_serve::GraphRunner runner(m, [&](const std::vector<tpumodel::Tensor> &in) {
        std::vector<float> x(in.at(0).element_count());
        std::memcpy(x.data(), in[0].data.data(), in[0].data.size());
        seen.push_back(x);
        return tpumodel::cpu::run_model(m, in);
    });
    CHECK(runner.batch() == 3);
    const std::vector<float> x = samples(7 * 4);
    const std::vector<float> y = runner.run(x.data(), 7);
    REQUIRE(seen.size() == 3);
    CHECK(std::vector<float>(seen[2].begin() + 4, seen[2].end()) == std::vector<float>(8, 0.0f));
    REQUIRE(y.size() == x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        CHECK(y[i] == std::max(x[i], 0.0f));
}

TEST_CASE("a compiled model served on the card answers as on the CPU", "[serve-graph]") {
    const tpumodel::Model m = relu_model();
    tpurt::Device dev = tpurt::Device::open_in_process({});
    tpumodel::card::Executor exe(dev, m);
    const tpu_serve::GraphRunner card(
        m, [&](const std::vector<tpumodel::Tensor> &in) { return exe.run(in); });
    const tpu_serve::GraphRunner cpu(m, [&](const std::vector<tpumodel::Tensor> &in) {
        return tpumodel::cpu::run_model(m, in);
    });
    const std::vector<float> x = samples(5 * 4);
    CHECK(card.run(x.data(), 5) == cpu.run(x.data(), 5));
}
