// SPDX-License-Identifier: MIT
// protocol.cpp - KServe v2 JSON messages with nlohmann/json: request validation (datatype,
// shape, element count, numbers only, input and output names) and the responses.
#include "tpu_serve/protocol.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace tpu_serve {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string &message) {
    throw ProtocolError(400, message);
}

const json &field(const json &object, const char *name, const std::string &where) {
    auto it = object.find(name);
    if (it == object.end())
        bad(where + " has no \"" + name + "\"");
    return *it;
}

// Appends the numbers of a flat or nested array in row-major order, at most `limit` of them,
// nested at most `depth` deep (the shape's rank).
void flatten(const json &v, std::vector<float> &out, std::size_t limit, std::size_t depth) {
    if (v.is_array()) {
        if (depth == 0)
            bad("input data is nested deeper than its shape");
        for (const json &e : v)
            flatten(e, out, limit, depth - 1);
        return;
    }
    if (!v.is_number())
        bad("input data holds " + std::string(v.type_name()) + " " + v.dump() + ", not a number");
    if (out.size() >= limit)
        bad("input data holds more than the " + std::to_string(limit) + " elements its shape says");
    const double d = v.get<double>();
    if (std::fabs(d) > 3.4e38)
        bad("input data holds " + v.dump() + ", beyond FP32's range");
    out.push_back(static_cast<float>(d));
}

} // namespace

InferRequest parse_infer_request(std::string_view body, const ModelSignature &model) {
    json j = json::parse(body, nullptr, false);
    if (j.is_discarded())
        bad("the body is not valid JSON");
    if (!j.is_object())
        bad("the body is not a JSON object");
    InferRequest r;
    if (auto id = j.find("id"); id != j.end()) {
        if (!id->is_string())
            bad("\"id\" is not a string");
        r.id = id->get<std::string>();
    }
    const json &inputs = field(j, "inputs", "the request");
    if (!inputs.is_array() || inputs.size() != 1)
        bad("\"inputs\" must be an array of one tensor (\"" + model.input + "\")");
    const json &in = inputs[0];
    if (!in.is_object())
        bad("inputs[0] is not an object");
    const json &name = field(in, "name", "inputs[0]");
    if (!name.is_string() || name.get<std::string>() != model.input)
        bad("unknown input " + name.dump() + ": the model's input is \"" + model.input + "\"");
    const json &datatype = field(in, "datatype", "inputs[0]");
    if (!datatype.is_string() || datatype.get<std::string>() != "FP32")
        bad("input datatype " + datatype.dump() + " is not supported: send \"FP32\"");
    const json &shape = field(in, "shape", "inputs[0]");
    if (!shape.is_array() || shape.size() < 2)
        bad("input shape must be [batch, " + std::to_string(model.features) + "] (or [batch, " +
            "dimensions whose product is " + std::to_string(model.features) + "])");
    std::vector<std::uint64_t> dims;
    for (const json &d : shape) {
        if (!d.is_number_integer() || d.get<std::int64_t>() <= 0)
            bad("input shape " + shape.dump() + " holds " + d.dump() + ", not a positive integer");
        dims.push_back(d.get<std::uint64_t>());
    }
    std::uint64_t per_sample = 1;
    for (std::size_t i = 1; i < dims.size(); ++i) {
        per_sample *= dims[i];
        if (per_sample > model.features)
            break;
    }
    if (per_sample != model.features)
        bad("input shape " + shape.dump() + " does not hold samples of " +
            std::to_string(model.features) + " features");
    if (dims[0] > model.max_batch)
        bad("batch " + std::to_string(dims[0]) + " is more than the " +
            std::to_string(model.max_batch) + " samples a request may hold");
    r.rows = dims[0];
    const std::size_t count = r.rows * model.features;
    r.data.reserve(count);
    flatten(field(in, "data", "inputs[0]"), r.data, count, dims.size());
    if (r.data.size() != count)
        bad("input data holds " + std::to_string(r.data.size()) + " elements, its shape " +
            shape.dump() + " " + std::to_string(count));
    if (auto outs = j.find("outputs"); outs != j.end()) {
        if (!outs->is_array())
            bad("\"outputs\" is not an array");
        r.want_logits = r.want_label = false;
        for (const json &o : *outs) {
            if (!o.is_object() || !o.contains("name") || !o["name"].is_string())
                bad("every requested output needs a \"name\"");
            const std::string n = o["name"].get<std::string>();
            if (n == "logits")
                r.want_logits = true;
            else if (n == "label")
                r.want_label = true;
            else
                bad("unknown output \"" + n +
                    "\": the model's outputs are \"logits\" and "
                    "\"label\"");
        }
    }
    return r;
}

std::string infer_response(const ModelSignature &model, const InferRequest &request,
                           const std::vector<float> &logits) {
    json out = json::array();
    if (request.want_logits)
        out.push_back({{"name", "logits"},
                       {"datatype", "FP32"},
                       {"shape", {request.rows, model.classes}},
                       {"data", logits}});
    if (request.want_label) {
        std::vector<std::int64_t> label(request.rows);
        for (std::size_t r = 0; r < request.rows; ++r) {
            const float *row = logits.data() + r * model.classes;
            label[r] = std::max_element(row, row + model.classes) - row;
        }
        out.push_back(
            {{"name", "label"}, {"datatype", "INT64"}, {"shape", {request.rows}}, {"data", label}});
    }
    json j = {{"model_name", model.name}, {"model_version", model.version}, {"outputs", out}};
    if (!request.id.empty())
        j["id"] = request.id;
    return j.dump();
}

std::string model_metadata(const ModelSignature &model) {
    const json j = {
        {"name", model.name},
        {"versions", {model.version}},
        {"platform", model.platform},
        {"inputs",
         {{{"name", model.input}, {"datatype", "FP32"}, {"shape", {-1, model.features}}}}},
        {"outputs",
         {{{"name", "logits"}, {"datatype", "FP32"}, {"shape", {-1, model.classes}}},
          {{"name", "label"}, {"datatype", "INT64"}, {"shape", {-1}}}}}};
    return j.dump();
}

std::string error_body(std::string_view message) {
    return json{{"error", message}}.dump();
}

} // namespace tpu_serve
