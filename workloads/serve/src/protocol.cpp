// SPDX-License-Identifier: MIT
// protocol.cpp - KServe v2 messages with nlohmann/json: request validation (datatype, shape,
// element count, numbers only, input and output names), the binary tensor data extension's
// split of a body into its JSON and its data, and the responses.
#include "tpu_serve/protocol.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

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

// The binary data is copied as it lies: little-endian, as the extension defines it.
static_assert(std::endian::native == std::endian::little);

// A request body: its JSON, then (the binary tensor data extension) the inputs' binary data.
struct BodyParts {
    std::string_view json, binary;
};

BodyParts split_body(std::string_view body, std::optional<std::string_view> header_length) {
    if (!header_length)
        return {body, {}};
    const std::string header(kInferenceHeaderContentLength);
    std::uint64_t n = 0;
    const char *first = header_length->data(), *last = first + header_length->size();
    const auto [end, error] = std::from_chars(first, last, n);
    if (header_length->empty() || error != std::errc() || end != last)
        bad(header + " \"" + std::string(*header_length) + "\" is not a byte count");
    if (n > body.size())
        bad(header + " " + std::to_string(n) + " is past the end of the " +
            std::to_string(body.size()) + "-byte body");
    return {body.substr(0, n), body.substr(n)};
}

// A tensor's "parameters" (an object, or absent).
const json *parameters(const json &tensor, const std::string &where) {
    auto it = tensor.find("parameters");
    if (it == tensor.end())
        return nullptr;
    if (!it->is_object())
        bad(where + "'s \"parameters\" is not an object");
    return &*it;
}

// The "binary_data_size" of an input's parameters, if it has one.
std::optional<std::uint64_t> binary_data_size(const json &input, const std::string &where) {
    const json *p = parameters(input, where);
    if (!p || !p->contains("binary_data_size"))
        return std::nullopt;
    const json &size = (*p)["binary_data_size"];
    if (!size.is_number_integer() || size.get<std::int64_t>() < 0)
        bad(where + "'s binary_data_size " + size.dump() + " is not a byte count");
    return size.get<std::uint64_t>();
}

// A boolean parameter (false when absent).
bool flag(const json *params, const char *name, const std::string &where) {
    if (!params || !params->contains(name))
        return false;
    const json &v = (*params)[name];
    if (!v.is_boolean())
        bad(where + "'s " + name + " " + v.dump() + " is not true or false");
    return v.get<bool>();
}

// Reads `count` FP32 values of input `name` from the front of `binary`.
void read_binary(std::string_view &binary, std::uint64_t size, std::size_t count,
                 const std::string &name, bool has_header, std::vector<float> &out) {
    if (!has_header)
        bad("input \"" + name + "\" has a binary_data_size but the request has no " +
            kInferenceHeaderContentLength + " header");
    if (size != std::uint64_t{count} * sizeof(float))
        bad("input \"" + name + "\"'s binary_data_size " + std::to_string(size) + " is not the " +
            std::to_string(count * sizeof(float)) + " bytes of its " + std::to_string(count) +
            " FP32 elements");
    if (binary.size() < size)
        bad("input \"" + name + "\"'s binary_data_size " + std::to_string(size) +
            " is more than the " + std::to_string(binary.size()) +
            " bytes after the request's JSON");
    out.resize(count);
    std::memcpy(out.data(), binary.data(), size);
    binary.remove_prefix(size);
    for (std::size_t i = 0; i < count; ++i)
        if (!std::isfinite(out[i]))
            bad("input \"" + name + "\"'s binary data holds " + std::to_string(out[i]) +
                " at element " + std::to_string(i) + ", not a finite number");
}

// [-1, dims...]: a tensor's shape with its batch axis; [-1, flat] when `dims` is empty.
std::vector<std::int64_t> batch_shape(const std::vector<std::size_t> &dims, std::size_t flat = 0) {
    std::vector<std::int64_t> shape = {-1};
    if (dims.empty())
        shape.push_back(std::int64_t(flat));
    for (std::size_t d : dims)
        shape.push_back(std::int64_t(d));
    return shape;
}

// A checkpoint's signature has the argmax output "label"; a graph's has its outputs only.
bool has_label(const ModelSignature &model) {
    return model.input_dims.empty();
}

void append_bytes(std::string &out, const void *data, std::size_t bytes) {
    out.append(static_cast<const char *>(data), bytes);
}

} // namespace

InferRequest parse_infer_request(std::string_view body, const ModelSignature &model,
                                 std::optional<std::string_view> header_length) {
    auto [text, binary] = split_body(body, header_length);
    if (const auto nul = text.find('\0'); nul != std::string_view::npos)
        bad("the body holds a NUL byte at offset " + std::to_string(nul) +
            ": binary data after the JSON needs an " + kInferenceHeaderContentLength + " header");
    json j = json::parse(text, nullptr, false);
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
        bad("input \"" + model.input + "\" datatype " + datatype.dump() +
            " is not supported: send \"FP32\"");
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
        bad("input \"" + model.input + "\" shape " + shape.dump() + " does not hold samples of " +
            std::to_string(model.features) + " features");
    if (!model.input_dims.empty() &&
        !std::equal(dims.begin() + 1, dims.end(), model.input_dims.begin(), model.input_dims.end()))
        bad("input \"" + model.input + "\" shape " + shape.dump() + " is not the model's " +
            json(batch_shape(model.input_dims)).dump());
    if (dims[0] > model.max_batch)
        bad("batch " + std::to_string(dims[0]) + " is more than the " +
            std::to_string(model.max_batch) + " samples a request may hold");
    r.rows = dims[0];
    const std::size_t count = r.rows * model.features;
    if (const auto size = binary_data_size(in, "inputs[0]")) {
        if (in.contains("data"))
            bad("inputs[0] has both \"data\" and a binary_data_size");
        read_binary(binary, *size, count, model.input, header_length.has_value(), r.data);
    } else {
        r.data.reserve(count);
        flatten(field(in, "data", "inputs[0]"), r.data, count, dims.size());
        if (r.data.size() != count)
            bad("input data holds " + std::to_string(r.data.size()) + " elements, its shape " +
                shape.dump() + " " + std::to_string(count));
    }
    if (!binary.empty())
        bad("the body holds " + std::to_string(binary.size()) +
            " bytes after its JSON that no input's binary_data_size accounts for");
    // "binary_data_output": every output as binary data unless an output says otherwise.
    const bool all_binary = flag(parameters(j, "the request"), "binary_data_output", "the request");
    r.binary_logits = r.binary_label = all_binary;
    if (auto outs = j.find("outputs"); outs != j.end()) {
        if (!outs->is_array())
            bad("\"outputs\" is not an array");
        r.want_logits = r.want_label = false;
        for (const json &o : *outs) {
            if (!o.is_object() || !o.contains("name") || !o["name"].is_string())
                bad("every requested output needs a \"name\"");
            const std::string n = o["name"].get<std::string>();
            const json *params = parameters(o, "output \"" + n + "\"");
            const bool binary_output = params && params->contains("binary_data")
                                           ? flag(params, "binary_data", "output \"" + n + "\"")
                                           : all_binary;
            if (n == model.output)
                r.want_logits = true, r.binary_logits = binary_output;
            else if (n == "label" && has_label(model))
                r.want_label = true, r.binary_label = binary_output;
            else
                bad("unknown output \"" + n + "\": the model's outputs are \"" + model.output +
                    (has_label(model) ? "\" and \"label\"" : "\""));
        }
    }
    r.want_label = r.want_label && has_label(model);
    return r;
}

InferResponse infer_response(const ModelSignature &model, const InferRequest &request,
                             const std::vector<float> &logits) {
    json out = json::array();
    std::string binary;
    bool any_binary = false;
    // An output with its data in the JSON, or after it.
    const auto add = [&](json tensor, const auto &data, bool as_binary) {
        if (as_binary) {
            const std::size_t bytes = data.size() * sizeof(data[0]);
            tensor["parameters"] = {{"binary_data_size", bytes}};
            append_bytes(binary, data.data(), bytes);
            any_binary = true;
        } else {
            tensor["data"] = data;
        }
        out.push_back(std::move(tensor));
    };
    if (request.want_logits) {
        std::vector<std::int64_t> shape = batch_shape(model.output_dims, model.classes);
        shape[0] = std::int64_t(request.rows);
        add({{"name", model.output}, {"datatype", "FP32"}, {"shape", shape}}, logits,
            request.binary_logits);
    }
    if (request.want_label) {
        std::vector<std::int64_t> label(request.rows);
        for (std::size_t r = 0; r < request.rows; ++r) {
            const float *row = logits.data() + r * model.classes;
            label[r] = std::max_element(row, row + model.classes) - row;
        }
        add({{"name", "label"}, {"datatype", "INT64"}, {"shape", {request.rows}}}, label,
            request.binary_label);
    }
    json j = {{"model_name", model.name}, {"model_version", model.version}, {"outputs", out}};
    if (!request.id.empty())
        j["id"] = request.id;
    InferResponse response{j.dump(), std::nullopt};
    if (any_binary) {
        response.header_length = response.body.size();
        response.body += binary;
    }
    return response;
}

std::string model_metadata(const ModelSignature &model) {
    json outputs = {{{"name", model.output},
                     {"datatype", "FP32"},
                     {"shape", batch_shape(model.output_dims, model.classes)}}};
    if (has_label(model))
        outputs.push_back({{"name", "label"}, {"datatype", "INT64"}, {"shape", {-1}}});
    const json j = {{"name", model.name},
                    {"versions", {model.version}},
                    {"platform", model.platform},
                    {"inputs",
                     {{{"name", model.input},
                       {"datatype", "FP32"},
                       {"shape", batch_shape(model.input_dims, model.features)}}}},
                    {"outputs", outputs}};
    return j.dump();
}

std::string error_body(std::string_view message) {
    return json{{"error", message}}.dump();
}

} // namespace tpu_serve
