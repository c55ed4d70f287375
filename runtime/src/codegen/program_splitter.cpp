// SPDX-License-Identifier: MIT
// program_splitter.cpp - blocks of instructions into programs of bounded size (see
// program_splitter.hpp).
#include "codegen/program_splitter.hpp"

#include "tpurt/error.hpp"

#include <tpu_hw.h>

#include <utility>

namespace tpurt {

ProgramSplitter::ProgramSplitter(std::size_t max_program_bytes, Program prologue)
    : max_insns_(max_program_bytes / TPU_INSN_SIZE), prologue_(std::move(prologue)) {}

void ProgramSplitter::add(const Program &block) {
    if (prologue_.insns.size() + block.insns.size() + 1 > max_insns_)
        throw Error(ErrorCode::InvalidArgument, "program size limit below one tile");
    if (!current_.empty() && current_.size() + block.insns.size() + 1 > max_insns_)
        programs_.push_back(current_.halt().finish());
    if (current_.empty())
        current_.append(prologue_);
    current_.append(block);
}

std::vector<Program> ProgramSplitter::finish() {
    programs_.push_back(current_.halt().finish());
    return std::move(programs_);
}

} // namespace tpurt
