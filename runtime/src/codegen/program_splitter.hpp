// SPDX-License-Identifier: MIT
// program_splitter.hpp - internal: the one program-size splitter of the compilers. Collects
// self-contained blocks of instructions into programs of at most max_program_bytes (HALT
// included), each program beginning with an optional prologue (e.g. the training compilers'
// constant 1 as a weight).
#pragma once

#include "tpurt/codegen/program_builder.hpp"

#include <cstddef>
#include <vector>

namespace tpurt {

class ProgramSplitter {
  public:
    explicit ProgramSplitter(std::size_t max_program_bytes, Program prologue = {});
    // Appends `block` to the current program, or ends that program and starts the next one with
    // it; throws InvalidArgument if the prologue, the block and HALT exceed one program.
    void add(const Program &block);
    // The programs so far, the last one ended (a program of HALT alone if nothing was added).
    std::vector<Program> finish();

  private:
    std::size_t max_insns_;
    Program prologue_;
    ProgramBuilder current_;
    std::vector<Program> programs_;
};

} // namespace tpurt
