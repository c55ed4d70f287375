// SPDX-License-Identifier: MIT
// op_attributes.hpp - internal: an op's attributes given by name as text (op_registry.hpp)
// parsed into the fields of its Attributes aggregate: numbers (floats exactly as strtof reads
// them, hexadecimal included), unsigned integers and lists of them, and the card's enums by
// their names.
#pragma once

#include "tpurt/card/vpu_ops.hpp"
#include "tpurt/codegen/train_compiler.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tpurt::detail {

// Each returns false when `text` is not a value of the type; `expected` says what would be.
bool parse_value(std::string_view text, float &out);
bool parse_value(std::string_view text, std::uint32_t &out);
bool parse_value(std::string_view text, std::uint64_t &out);
// A list of integers separated by commas: "2,0,1".
bool parse_value(std::string_view text, std::vector<std::uint64_t> &out);
bool parse_value(std::string_view text, VectorOp &out);
bool parse_value(std::string_view text, Activation &out);
bool parse_value(std::string_view text, ReduceOp &out);
bool parse_value(std::string_view text, PoolOp &out);
bool parse_value(std::string_view text, GradFunction &out);

std::string expected(float);
std::string expected(std::uint32_t);
std::string expected(std::uint64_t);
std::string expected(const std::vector<std::uint64_t> &);
std::string expected(VectorOp);
std::string expected(Activation);
std::string expected(ReduceOp);
std::string expected(PoolOp);
std::string expected(GradFunction);

} // namespace tpurt::detail
