// SPDX-License-Identifier: MIT
// model.hpp - a compiled model in memory: the graph of a .tpumodel file (docs/tpumodel.md).
// Tensors (name, dtype, shape, layout, the data of constants) and nodes in topological order
// (ONNX op, attributes, input and output tensor ids, placement on the card or the CPU). The
// compiler's passes rewrite it; the runtime reads it. No ONNX and no protobuf in here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace tpumodel {

// Element types, numbered as ONNX's TensorProto.DataType.
enum class DType : std::uint8_t {
    Float = 1,
    Uint8 = 2,
    Int8 = 3,
    Int32 = 6,
    Int64 = 7,
    Bool = 9,
    Bfloat16 = 16,
};
// How a tensor's elements are ordered: Plain is ONNX's order for its shape; Nhwc is an image
// in the card's order (the shape is given as [N, H, W, C]); Hwio is a convolution's weights in
// the card's order ([KH, KW, C, F]).
enum class Layout : std::uint8_t { Plain = 0, Nhwc = 1, Hwio = 2 };
enum class Placement : std::uint8_t { Card = 0, Cpu = 1 };
// The arithmetic the model was compiled for (tpu-compile --dtype).
enum class Precision : std::uint8_t { Fp32 = 0, Bf16 = 1, Int8 = 2 };

constexpr std::uint32_t no_tensor = 0xffffffffu; // an optional input left out
constexpr std::size_t max_rank = 8;
constexpr std::uint64_t max_elements = std::uint64_t(1) << 32; // per tensor

bool dtype_known(std::uint8_t code);
std::size_t dtype_size(DType t);
const char *dtype_name(DType t); // "float32", "int64", ...
const char *layout_name(Layout l);
const char *placement_name(Placement p);
const char *precision_name(Precision p);

struct Tensor {
    std::string name;
    DType dtype = DType::Float;
    Layout layout = Layout::Plain;
    std::vector<std::int64_t> shape;
    bool constant = false;          // an initialiser: `data` holds its elements
    std::vector<std::uint8_t> data; // little-endian, dense, in `layout`'s order
    std::uint64_t element_count() const;
    std::string shape_string() const;  // "[1, 28, 28, 1]"
    std::vector<float> floats() const; // `data` as float32 elements (dtype Float)
};

using AttributeValue =
    std::variant<std::int64_t, float, std::string, std::vector<std::int64_t>, std::vector<float>>;
struct Attribute {
    std::string name;
    AttributeValue value;
};

struct Node {
    std::string name;
    std::string op; // the ONNX op type; fused nodes keep the first op's and say so in attributes
    Placement placement = Placement::Cpu;
    std::string card_op; // libtpurt's registered op that runs it on the card, else empty
    std::string reason;  // why a CPU node is not on the card
    std::vector<Attribute> attributes;
    std::vector<std::uint32_t> inputs, outputs; // tensor ids; inputs may hold no_tensor

    const Attribute *find(const std::string &attr) const;
    std::int64_t get_int(const std::string &attr, std::int64_t fallback) const;
    float get_float(const std::string &attr, float fallback) const;
    std::string get_string(const std::string &attr, const std::string &fallback) const;
    std::vector<std::int64_t> get_ints(const std::string &attr,
                                       const std::vector<std::int64_t> &fallback) const;
    void set(const std::string &attr, AttributeValue value); // adds or replaces
    std::string describe() const;                            // "node 'conv1' (Conv)"
};

struct Model {
    std::string producer; // what wrote it, e.g. "tpu-compile 0.1 from mlp.onnx"
    Precision precision = Precision::Fp32;
    std::vector<Tensor> tensors;
    std::vector<Node> nodes; // topological order
    std::vector<std::uint32_t> inputs, outputs;

    std::uint32_t add_tensor(Tensor t);                       // its id
    std::uint32_t find_tensor(const std::string &name) const; // no_tensor if absent
};

// Thrown for a file or model that breaks the format; the message starts with `origin` (the
// file's path) and says what is wrong.
class FormatError : public std::runtime_error {
  public:
    FormatError(const std::string &origin, const std::string &what)
        : std::runtime_error(origin + ": " + what) {}
};

// Whether node `n` of `m` is one of the layers a model compiled for int8 runs in int8 (given
// its calibrated range): a card dense or conv2d_layer of computed float data by constant
// weights.
bool int8_layer_form(const Model &m, const Node &n);

// The structural rules of docs/tpumodel.md: ids in range, every tensor produced once and
// before it is used, constants' data of their size, known dtypes and ranks, bounded shapes.
void validate(const Model &m, const std::string &origin);

} // namespace tpumodel
