// SPDX-License-Identifier: MIT
// conformance.hpp - the conformance table's types: one Case per op x dtype x shape (its operands
// in the op's order, how each input is made from a seed, its attributes by name as text, its
// golden model writing the expected outputs, exact bits or a stated tolerance), the per-family
// tables that list them, the ops excluded by name and the device the cases run on.
#pragma once

#include <tpurt/device.hpp>
#include <tpurt/types/bf16.hpp>
#include <tpurt/types/dtype.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace conformance {

using tpurt::DType;
using Shape = std::vector<std::size_t>;

// How an operand's initial contents are made (from the case's seed).
struct Fill {
    enum class Kind { Uniform, OneHot, Values, Sentinel } kind = Kind::Sentinel;
    double lo = 0, hi = 0;     // Uniform: reals (bf16: rounded) or integers in [lo, hi]
    std::vector<float> values; // Values: the operand's elements in order
};
Fill uniform(double lo, double hi);
Fill one_hot(); // rows over the last dimension, one 1 each
Fill values(std::vector<float> v);
Fill output(); // not read by the op: a sentinel the op must overwrite

struct Operand {
    std::string name;
    DType type = DType::Fp32;
    Shape shape;
    Fill fill;
    bool written = false; // compared with the golden model after the launch (in place too)
    bool absent = false;  // an optional operand left out (null)
    // A view of rows row_pad elements longer than the operand's last dimension (strided rows);
    // the padding holds a sentinel the op must leave alone.
    std::size_t row_pad = 0;
};
Operand in(std::string name, DType type, Shape shape, Fill fill);
Operand out(std::string name, DType type, Shape shape);
Operand inout(std::string name, DType type, Shape shape, Fill fill);
Operand none(std::string name);
Operand strided(Operand o, std::size_t row_pad);

// Every operand's contents as raw bytes: the inputs as made, written ones replaced by the
// golden model with what the op must leave there.
struct Arrays {
    std::vector<std::vector<std::byte>> bytes;
    std::vector<DType> types;

    template <typename T> std::span<T> as(std::size_t i) {
        return {reinterpret_cast<T *>(bytes[i].data()), bytes[i].size() / sizeof(T)};
    }
    std::vector<float> floats(std::size_t i) const;      // any dtype widened to float
    void store(std::size_t i, std::span<const float> v); // rounded to the operand's dtype
};

// Exact (both 0): the same bits. Otherwise |got - want| <= abs + rel |want| with the reason.
struct Tolerance {
    double abs = 0, rel = 0;
    std::string reason;
    bool exact() const { return abs == 0 && rel == 0; }
};

struct Case {
    std::string op;    // the registered op's name
    std::string label; // dtype, shape, attributes: unique per case, seeds its inputs
    std::vector<Operand> operands;
    std::vector<std::pair<std::string, std::string>> attributes;
    std::function<void(Arrays &)> golden;
    Tolerance tolerance{};
    // Inputs made from others before the launch (a max pooling's forward output y from x).
    std::function<void(Arrays &)> derive = nullptr;
};

// The tables, one per op family.
std::vector<Case> matmul_cases();
std::vector<Case> conv_cases();
std::vector<Case> vector_cases();
std::vector<Case> shape_cases();
std::vector<Case> train_cases();
std::vector<Case> all_cases();

// Registered ops with no conformance case, each with the reason.
struct Exclusion {
    const char *op;
    const char *reason;
};
std::span<const Exclusion> exclusions();

// The devices the cases run on, named in messages: on the host the engine in the process as
// the QEMU card and as a small card; in the guest the first card. The gradient checks use the
// first.
struct TestDevice {
    const char *name;
    tpurt::Device *device;
};
std::span<const TestDevice> devices();

// The binary32 value of a bf16 element and back (nearest even).
inline float widen(tpurt::Bf16 v) {
    return v.to_float();
}

} // namespace conformance
