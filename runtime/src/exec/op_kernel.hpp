// SPDX-License-Identifier: MIT
// op_kernel.hpp - internal: a kernel is what turns one compiler's problem into an executable,
// declared once in its op's folder as a struct with
//   using Problem = XProblem;                      // an aggregate: shapes, dtypes, attributes
//   static constexpr const char *name = "x";       // the cache key's prefix
//   static void bind(Problem &, OpArguments &);    // the argument list, in order, and the
//                                                  // problem made canonical (spelled_out())
//   static std::vector<Program> compile(const Problem &, const ArrayLimits &);
//   static std::string profile_name(const Problem &);  // the executable's name in profiles
// and made an executable by TPURT_KERNEL(Kernel). Everything else is generic: the cache key is
// the name, every field of the problem after bind() (problem_key.hpp) and the card's geometry;
// compiling binds, compiles and links; the device's cache holds the result.
#pragma once

#include "device/device_state.hpp"
#include "exec/executable_cache.hpp"
#include "tpurt/codegen/op_executables.hpp"
#include "tpurt/codegen/problem_key.hpp"
#include "tpurt/device.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tpurt::detail {

// An executable's arguments, built while a kernel's bind() walks its problem's address fields:
// bind() sets each to the placeholder of the next argument (executable.hpp).
class OpArguments {
  public:
    void bind(std::uint64_t &field, std::string name, std::uint64_t bytes) {
        field = Executable::placeholder(args_.size());
        fields_.push_back(&field);
        args_.push_back({std::move(name), bytes});
    }
    // Whether bind() wrote `field` (the registry's key test).
    bool bound(const void *field) const {
        for (const void *f : fields_)
            if (f == field)
                return true;
        return false;
    }
    std::vector<ExecutableArg> take() { return std::move(args_); }

  private:
    std::vector<ExecutableArg> args_;
    std::vector<const void *> fields_;
};

// A row stride of 0 (dense) written out as `row_bytes`, so that a problem with a dense stride
// of 0 and one with it spelled out, whose programs are the same, have one key.
inline std::uint64_t spelled_out(std::uint64_t &stride, std::uint64_t row_bytes) {
    if (stride == 0)
        stride = row_bytes;
    return stride;
}

template <class Kernel>
std::string kernel_key(typename Kernel::Problem problem, const ArrayLimits &limits) {
    OpArguments args;
    Kernel::bind(problem, args);
    return cache_key(Kernel::name, problem, limits);
}

template <class Kernel>
Executable compile_kernel(typename Kernel::Problem problem, const ArrayLimits &limits) {
    OpArguments args;
    Kernel::bind(problem, args);
    std::vector<Program> programs = Kernel::compile(problem, limits);
    return Executable::link(Kernel::profile_name(problem), args.take(), std::move(programs));
}

template <class Kernel>
std::shared_ptr<const Executable> kernel_executable(Device &device,
                                                    const typename Kernel::Problem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return state_of(device).executables.get(kernel_key<Kernel>(problem, limits), [&] {
        return compile_kernel<Kernel>(problem, limits);
    });
}

// The key test of a kernel: every leaf of a sample problem (problem_key.hpp), and of the
// limits, changed one at a time (op_executables.hpp).
template <class Kernel> std::vector<KeyFieldCheck> kernel_key_checks(const ArrayLimits &limits) {
    using Problem = typename Kernel::Problem;
    Problem base{};
    key::make_sample(base);
    const std::string base_key = kernel_key<Kernel>(base, limits);
    std::vector<KeyFieldCheck> checks;
    Problem variant = base;
    key::each_variant(variant, Kernel::name, [&](const std::string &path, const void *leaf) {
        Problem bound = variant;
        OpArguments args;
        Kernel::bind(bound, args);
        const auto offset =
            reinterpret_cast<const char *>(leaf) - reinterpret_cast<const char *>(&variant);
        const bool inside = offset >= 0 && std::size_t(offset) < sizeof(Problem);
        checks.push_back({path, kernel_key<Kernel>(variant, limits) != base_key,
                          inside && args.bound(reinterpret_cast<const char *>(&bound) + offset)});
    });
    ArrayLimits other = limits;
    key::each_variant(other, "limits", [&](const std::string &path, const void *) {
        checks.push_back({path, kernel_key<Kernel>(base, other) != base_key, false});
    });
    return checks;
}

// The problem type's kernel, declared by TPURT_KERNEL next to the kernel.
template <class Problem> struct KernelFor;

} // namespace tpurt::detail

namespace tpurt {

template <class Problem>
Executable compile_executable(const Problem &problem, const ArrayLimits &limits) {
    return detail::compile_kernel<typename detail::KernelFor<Problem>::type>(problem, limits);
}
template <class Problem>
std::string executable_key(const Problem &problem, const ArrayLimits &limits) {
    return detail::kernel_key<typename detail::KernelFor<Problem>::type>(problem, limits);
}
template <class Problem>
std::shared_ptr<const Executable> cached_executable(Device &device, const Problem &problem) {
    return detail::kernel_executable<typename detail::KernelFor<Problem>::type>(device, problem);
}

} // namespace tpurt

// At namespace tpurt scope, in the kernel's source file: the public templates of
// op_executables.hpp for the kernel's problem type.
#define TPURT_KERNEL(Kernel)                                                                       \
    template <> struct detail::KernelFor<Kernel::Problem> { using type = Kernel; };                \
    template Executable compile_executable(const Kernel::Problem &, const ArrayLimits &);          \
    template std::string executable_key(const Kernel::Problem &, const ArrayLimits &);             \
    template std::shared_ptr<const Executable> cached_executable(Device &, const Kernel::Problem &)
