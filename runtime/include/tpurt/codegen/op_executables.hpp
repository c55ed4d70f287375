// SPDX-License-Identifier: MIT
// op_executables.hpp - a compiler's problem (MatmulProblem, ElementwiseProblem, SoftmaxProblem,
// ...) as an executable: the pure function of the problem and the card's limits that compiles
// it with its arguments at their placeholder addresses and links it (see executable.hpp), its
// cache key (problem_key.hpp: every field of the problem, its address fields bound to their
// placeholders, plus the card's geometry) and the device-cached form, compiled on the first use
// of a key. One template each, defined once for every kernel of the registry (its problem type);
// the problem's addresses are ignored (only whether an optional one such as a dense layer's bias
// is present counts), its strides (0: dense) and shapes define the executable. The argument
// order is each kernel's (matmul: A, B, C, then the bias when the epilogue has one).
#pragma once

#include "tpurt/device_info.hpp"
#include "tpurt/executable.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tpurt {

class Device;

template <class Problem>
Executable compile_executable(const Problem &problem, const ArrayLimits &limits);
template <class Problem>
std::string executable_key(const Problem &problem, const ArrayLimits &limits);
template <class Problem>
std::shared_ptr<const Executable> cached_executable(Device &device, const Problem &problem);

// One leaf field of a registered op's problem (or of the card's limits, "limits.N") changed
// from a sample problem (key::make_sample()): whether its cache key changed, and whether the
// field is an address the argument list binds to a placeholder (which the key ignores).
struct KeyFieldCheck {
    std::string field; // "matmul.10?.2": field 10, inside its optional field 2
    bool changes_key = false;
    bool bound_argument = false;
};
// Empty for a composite op (its parts are other kernels, or its executable keys on its own
// problem's fields by the same cache_key()). Throws Error(InvalidArgument) for an op the
// registry does not know.
std::vector<KeyFieldCheck> op_key_checks(std::string_view op, const ArrayLimits &limits);

} // namespace tpurt
