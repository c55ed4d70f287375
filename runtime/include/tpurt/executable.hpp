// SPDX-License-Identifier: MIT
// executable.hpp - tpurt::Executable: an op compiled once for one shape, dtype and card
// geometry and launched on any buffers of that shape.
//
// Design (runtime-only; the card's programs and spec are unchanged): the op's compiler runs
// with argument i placed at the placeholder address placeholder(i) = (i + 1) << 48, far
// outside the card's 39-bit address space. link() then finds every instruction field that
// holds a host address (DMA_IN / DMA_OUT / LOAD_W-from-host host_addr, TIMESTAMP host_addr),
// and records a relocation (instruction, argument, offset from the argument's base) for each;
// an address that belongs to no argument is refused. A launch copies a program into a
// recycled program buffer and writes base[argument] + offset into every relocated field.
// So the compiler's work (tiling, instruction selection) happens once per shape; a launch costs
// one copy of the instructions and one store per relocation, and creates no buffer object.
#pragma once

#include "tpurt/card/buffer.hpp"
#include "tpurt/card/job.hpp"
#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/ops/matmul.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tpurt {

class Device;

// One operand of an executable: a region of device memory `bytes` long from its base address.
struct ExecutableArg {
    std::string name;        // "A", "weights", ...
    std::uint64_t bytes = 0; // how far the programs reach from the base (for bounds checks)
};

class Executable {
  public:
    // Where compilers place argument i (for i < max_args) while an executable is built.
    static constexpr std::size_t max_args = 15;
    static constexpr std::uint64_t placeholder(std::size_t arg) {
        return std::uint64_t{arg + 1} << 48;
    }

    // Links programs compiled with argument i at placeholder(i) into an executable `name`.
    // Throws Error(InvalidArgument) for more than max_args arguments or a host address that
    // lies outside every argument's [placeholder, placeholder + bytes) region.
    static Executable link(std::string name, std::vector<ExecutableArg> args,
                           std::vector<Program> programs);
    // The same for a captured sequence of launches (graph.hpp), whose arguments are every
    // captured launch's: up to max_graph_args of them (the placeholders' top 16 bits).
    static constexpr std::size_t max_graph_args = 0xfffe;
    static Executable link_graph(std::string name, std::vector<ExecutableArg> args,
                                 std::vector<Program> programs);

    const std::string &name() const { return name_; }
    const std::vector<ExecutableArg> &args() const { return args_; }
    std::size_t program_count() const { return programs_.size(); }
    std::uint64_t instruction_count() const { return instructions_; }
    std::size_t relocation_count() const { return relocations_.size(); }
    // Per launch, from the programs: host bytes DMA_IN, LOAD_W and DMA_OUT move, and MACs.
    std::uint64_t bytes_moved() const { return bytes_moved_; }
    std::uint64_t macs() const { return macs_; }

    // Program `index` with argument i at bases[i], into `out` (exactly its instructions).
    // Throws Error(InvalidArgument) for a wrong count of bases or a wrong output size.
    void patch(std::size_t index, std::span<const std::uint64_t> bases,
               std::span<union tpu_insn> out) const;
    // The same as a Program value (tests run it on the engine library).
    Program patched(std::size_t index, std::span<const std::uint64_t> bases) const;
    std::size_t program_bytes(std::size_t index) const;

    // Runs every program on `device` with argument i at bases[i], which must lie with its
    // whole region inside one of `buffers` (every buffer the op touches), and waits for them;
    // at most 32 jobs are in flight. Throws Error(InvalidArgument) naming the argument whose
    // region is not inside any of the buffers. Recorded by the profiler when it is on.
    // The check run() makes before it submits anything (also made when an op is queued on a
    // stream): a wrong count of bases, or an argument region outside every buffer, is refused.
    void check_arguments(std::span<const std::uint64_t> bases,
                         std::span<const Buffer *const> buffers) const;

    MatmulStats run(Device &device, std::span<const std::uint64_t> bases,
                    std::span<const Buffer *const> buffers,
                    std::chrono::nanoseconds timeout = Job::default_timeout) const;

  private:
    struct Relocation {
        std::uint32_t program;
        std::uint32_t insn;
        std::uint32_t arg;
        std::uint64_t offset;
    };

    Executable() = default;
    static Executable link_up_to(std::size_t arg_limit, std::string name,
                                 std::vector<ExecutableArg> args, std::vector<Program> programs);
    void check_bases(std::span<const std::uint64_t> bases) const;

    std::string name_;
    std::vector<ExecutableArg> args_;
    std::vector<Program> programs_;
    std::vector<Relocation> relocations_;       // sorted by program, then instruction
    std::vector<std::size_t> first_relocation_; // per program, index into relocations_, + end
    std::uint64_t instructions_ = 0;
    std::uint64_t bytes_moved_ = 0;
    std::uint64_t macs_ = 0;
};

} // namespace tpurt
