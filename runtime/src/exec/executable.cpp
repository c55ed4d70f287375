// SPDX-License-Identifier: MIT
// executable.cpp - linking compiled programs into relocatable executables, patching them for a
// launch and running them on a device (see executable.hpp).
#include "tpurt/executable.hpp"

#include "profile/profiler_record.hpp"
#include "tpurt/device.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>

namespace tpurt {

namespace {

constexpr std::size_t max_jobs_in_flight = 32;

// The host address field of an instruction, if it has one.
__u64 *host_address_field(union tpu_insn &insn) {
    switch (insn.hdr.opcode) {
    case TPU_OP_DMA_IN:
    case TPU_OP_DMA_OUT:
        return &insn.dma.host_addr;
    case TPU_OP_LOAD_W:
        return (insn.hdr.flags & TPU_F_W_HOST) ? &insn.dma.host_addr : nullptr;
    case TPU_OP_TIMESTAMP:
        return &insn.ts.host_addr;
    case TPU_OP_SEND:
    case TPU_OP_RECV:
        return (insn.hdr.flags & TPU_F_LINK_HOST) ? &insn.link.addr : nullptr;
    default:
        return nullptr;
    }
}

// Host bytes an instruction moves (DMA in and out, weights from the host).
std::uint64_t host_bytes(const union tpu_insn &insn) {
    const bool host_weights = insn.hdr.opcode == TPU_OP_LOAD_W && (insn.hdr.flags & TPU_F_W_HOST);
    if (insn.hdr.opcode != TPU_OP_DMA_IN && insn.hdr.opcode != TPU_OP_DMA_OUT && !host_weights)
        return 0;
    return std::uint64_t{insn.dma.rows} * insn.dma.cols *
           element_size(static_cast<DType>(insn.hdr.dtype));
}

std::string hex(std::uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

// True if [base, base + bytes) lies inside buffer b.
bool inside(const Buffer *b, std::uint64_t base, std::uint64_t bytes) {
    if (!b || base < b->device_addr())
        return false;
    const std::uint64_t offset = base - b->device_addr();
    return offset <= b->size() && bytes <= b->size() - offset;
}

} // namespace

Executable Executable::link(std::string name, std::vector<ExecutableArg> args,
                            std::vector<Program> programs) {
    return link_up_to(max_args, std::move(name), std::move(args), std::move(programs));
}

Executable Executable::link_graph(std::string name, std::vector<ExecutableArg> args,
                                  std::vector<Program> programs) {
    return link_up_to(max_graph_args, std::move(name), std::move(args), std::move(programs));
}

Executable Executable::link_up_to(std::size_t arg_limit, std::string name,
                                  std::vector<ExecutableArg> args, std::vector<Program> programs) {
    if (args.size() > arg_limit)
        throw Error(ErrorCode::InvalidArgument,
                    "executable " + name + " has " + std::to_string(args.size()) +
                        " arguments, at most " + std::to_string(arg_limit));
    Executable exe;
    exe.name_ = std::move(name);
    exe.args_ = std::move(args);
    exe.programs_ = std::move(programs);
    for (std::size_t p = 0; p < exe.programs_.size(); ++p) {
        exe.first_relocation_.push_back(exe.relocations_.size());
        std::uint32_t weight_cols = 0;
        std::vector<union tpu_insn> &insns = exe.programs_[p].insns;
        exe.instructions_ += insns.size();
        for (std::size_t i = 0; i < insns.size(); ++i) {
            union tpu_insn &insn = insns[i];
            exe.bytes_moved_ += host_bytes(insn);
            if (insn.hdr.opcode == TPU_OP_LOAD_W)
                weight_cols = (insn.hdr.flags & TPU_F_W_HOST) ? insn.dma.cols : insn.mxu.cols;
            if (insn.hdr.opcode == TPU_OP_MATMUL)
                exe.macs_ += std::uint64_t{insn.mxu.rows} * insn.mxu.cols * weight_cols;
            __u64 *field = host_address_field(insn);
            if (!field)
                continue;
            const std::uint64_t addr = *field;
            const std::uint64_t arg = (addr >> 48) - 1;
            const std::uint64_t offset = addr - placeholder(arg);
            if ((addr >> 48) == 0 || arg >= exe.args_.size() || offset >= exe.args_[arg].bytes)
                throw Error(ErrorCode::InvalidArgument,
                            "executable " + exe.name_ + ": program " + std::to_string(p) +
                                " instruction " + std::to_string(i) + " uses address " + hex(addr) +
                                ", which is in none of its arguments");
            *field = 0;
            exe.relocations_.push_back({static_cast<std::uint32_t>(p),
                                        static_cast<std::uint32_t>(i),
                                        static_cast<std::uint32_t>(arg), offset});
        }
    }
    exe.first_relocation_.push_back(exe.relocations_.size());
    return exe;
}

std::size_t Executable::program_bytes(std::size_t index) const {
    return programs_.at(index).size_bytes();
}

void Executable::check_bases(std::span<const std::uint64_t> bases) const {
    if (bases.size() != args_.size())
        throw Error(ErrorCode::InvalidArgument,
                    "executable " + name_ + " takes " + std::to_string(args_.size()) +
                        " argument addresses, not " + std::to_string(bases.size()));
}

void Executable::patch(std::size_t index, std::span<const std::uint64_t> bases,
                       std::span<union tpu_insn> out) const {
    check_bases(bases);
    const Program &program = programs_.at(index);
    if (out.size() != program.insns.size())
        throw Error(ErrorCode::InvalidArgument,
                    "executable " + name_ + ": program " + std::to_string(index) + " has " +
                        std::to_string(program.insns.size()) + " instructions, not " +
                        std::to_string(out.size()));
    std::memcpy(out.data(), program.insns.data(), program.size_bytes());
    for (std::size_t r = first_relocation_[index]; r < first_relocation_[index + 1]; ++r) {
        const Relocation &rel = relocations_[r];
        *host_address_field(out[rel.insn]) = bases[rel.arg] + rel.offset;
    }
}

Program Executable::patched(std::size_t index, std::span<const std::uint64_t> bases) const {
    Program program;
    program.insns.resize(programs_.at(index).insns.size());
    patch(index, bases, program.insns);
    return program;
}

void Executable::check_arguments(std::span<const std::uint64_t> bases,
                                 std::span<const Buffer *const> buffers) const {
    check_bases(bases);
    for (std::size_t i = 0; i < args_.size(); ++i) {
        if (std::none_of(buffers.begin(), buffers.end(),
                         [&](const Buffer *b) { return inside(b, bases[i], args_[i].bytes); }))
            throw Error(ErrorCode::InvalidArgument,
                        name_ + ": " + args_[i].name + " (" + std::to_string(args_[i].bytes) +
                            " bytes) does not lie inside any of the op's buffers: a freed, "
                            "moved-from or too small buffer?");
    }
}

MatmulStats Executable::run(Device &device, std::span<const std::uint64_t> bases,
                            std::span<const Buffer *const> buffers,
                            std::chrono::nanoseconds timeout) const {
    check_arguments(bases, buffers);
    using Clock = std::chrono::steady_clock;
    const bool profiling = profiler::active();
    const unsigned card = device.info().minor;
    const auto span = [&](const char *what, Clock::time_point from) {
        if (profiling)
            detail::record_host(
                {what, name_, card, detail::profile_us(from),
                 std::chrono::duration<double, std::micro>(Clock::now() - from).count()});
    };
    const auto start = Clock::now();
    MatmulStats stats;
    std::deque<Job> in_flight;
    const auto retire = [&] {
        const auto wait_start = Clock::now();
        stats += in_flight.front().wait(timeout);
        span("wait", wait_start);
        in_flight.pop_front();
    };
    for (std::size_t p = 0; p < programs_.size(); ++p) {
        if (in_flight.size() == max_jobs_in_flight)
            retire();
        const auto submit_start = Clock::now();
        in_flight.push_back(device.launch(*this, p, bases, buffers));
        span("submit", submit_start);
    }
    while (!in_flight.empty())
        retire();
    stats.wall = Clock::now() - start;
    stats.jobs = programs_.size();
    if (profiling)
        detail::record_op({.name = name_,
                           .device = card,
                           .start_us = detail::profile_us(start),
                           .wall_us = std::chrono::duration<double, std::micro>(stats.wall).count(),
                           .card_us = std::chrono::duration<double, std::micro>(
                                          stats.modelled_time(device.info()))
                                          .count(),
                           .cycles = stats.cycles,
                           .macs = stats.macs,
                           .bytes = bytes_moved_,
                           .jobs = stats.jobs,
                           .utilisation = stats.utilisation(device.info())});
    return stats;
}

} // namespace tpurt
