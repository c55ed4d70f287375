// SPDX-License-Identifier: MIT
// protocol.hpp - the Open Inference Protocol (KServe v2) REST messages tpu-serve speaks, as pure
// functions of their text so that they are tested without a server: model metadata, the infer
// request (one FP32 input of shape [batch, features...], data flat or nested in row-major order,
// an optional "id" and "outputs" selection) and the infer response (outputs "logits" FP32
// [batch, classes] and "label" INT64 [batch], the argmax). Every malformed request is refused
// with a ProtocolError carrying the HTTP status and a message for the {"error": ...} body.
//
// The binary tensor data extension (KServe v2 / Triton, which clients such as Triton's send by
// default): a request with the HTTP header Inference-Header-Content-Length: N has N bytes of JSON
// and then the raw data of each input whose "parameters" hold "binary_data_size" (in the order
// of the inputs; little-endian, row-major, no padding). An output asked for with
// "parameters": {"binary_data": true} (or every output, with "binary_data_output": true in the
// request's "parameters") comes back the same way: the response's JSON gives the output's
// "binary_data_size" instead of "data", its length goes in the response's
// Inference-Header-Content-Length, and the outputs' bytes follow it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tpu_serve {

struct ModelSignature {
    std::string name; // the {name} of /v2/models/{name}
    std::string version = "1";
    std::string platform;        // e.g. "tpu-stack-bf16"
    std::string input = "input"; // the one input's name
    std::size_t features = 0;    // per sample
    std::size_t classes = 0;
    std::size_t max_batch = 0; // samples per request at most
    // A model given by its graph (tpu-serve --model x.tpumodel): the output's name, each
    // tensor's dimensions after the batch axis (a request's input must have exactly these), and
    // no "label" output. Empty input_dims: a checkpoint's signature (input [batch, features],
    // or any dimensions of that product; outputs "logits" and "label").
    std::string output = "logits";
    std::vector<std::size_t> input_dims, output_dims;
};

class ProtocolError : public std::runtime_error {
  public:
    ProtocolError(int status, const std::string &message)
        : std::runtime_error(message), status_(status) {}
    int status() const { return status_; }

  private:
    int status_;
};

struct InferRequest {
    std::string id; // echoed in the response when given
    std::size_t rows = 0;
    std::vector<float> data; // rows x features
    bool want_logits = true, want_label = true;
    bool binary_logits = false, binary_label = false; // returned as binary data
};

// The HTTP header of the binary tensor data extension.
inline constexpr const char *kInferenceHeaderContentLength = "Inference-Header-Content-Length";

// Parses and validates an infer request body against the model; throws ProtocolError (400).
// `header_length` is the request's Inference-Header-Content-Length, if it has one.
InferRequest parse_infer_request(std::string_view body, const ModelSignature &model,
                                 std::optional<std::string_view> header_length = std::nullopt);

struct InferResponse {
    std::string body;                         // the JSON, then any binary outputs
    std::optional<std::size_t> header_length; // the JSON's length, if binary outputs follow it
};

// The infer response for `logits` (rows x classes).
InferResponse infer_response(const ModelSignature &model, const InferRequest &request,
                             const std::vector<float> &logits);

// GET /v2/models/{name}
std::string model_metadata(const ModelSignature &model);

// {"error": message}
std::string error_body(std::string_view message);

} // namespace tpu_serve
