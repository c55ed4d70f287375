// SPDX-License-Identifier: MIT
// program_schedule.hpp - internal: a program's instructions reordered so that the card's units
// overlap more (tpurt::Graph's joined programs, graph.cpp).
//
// The card issues in program order, one instruction a cycle, and an instruction waiting for its
// unit or for an earlier one it depends on holds up every later one (docs/hardware.md, "Cycle
// model"). A compiler's program that loads the next tile's operands only after computing the
// current one leaves the DMA idle while the vector unit or the matrix unit works, and the other
// way round. schedule_program() moves instructions earlier where nothing they touch forbids it
// and the cycle model says the program gets shorter: a greedy list schedule that picks, among
// the next instructions whose earlier dependencies are all placed, the one that would start
// first (the earliest in the program on a tie). Two instructions keep their order when either
// writes unified-buffer, accumulator or host-memory bytes the other touches (over each operand's
// span from its first to its last byte), when both are LOAD_W or MATMUL (the weight slots), and
// across NOP, HALT, SYNC, TIMESTAMP, SEND and RECV. Every instruction then
// reads and writes the same bytes with the same contents as in program order, so the results
// are the same bits; only a job that fails reports another error_pc.
#pragma once

#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"

#include <cstdint>
#include <vector>

namespace tpurt::detail {

struct ScheduleTarget {
    ArrayLimits limits;
    std::uint32_t clock_mhz = 700; // the card's clock and host DMA bandwidth, for the costs
    std::uint32_t dma_mbps = 44800;
    // Host addresses at Executable::placeholder(i) + offset stand for arg_bases[i] + offset
    // (the device addresses a graph's launches were captured with), so that two operands'
    // bytes are told apart exactly, aliases included; empty: the addresses are device addresses.
    std::vector<std::uint64_t> arg_bases;
};

// The program's modelled cycles by the card's cycle model.
std::uint64_t modelled_cycles(const Program &program, const ScheduleTarget &target);

// The program reordered as above, or as it is where that is not shorter by the cycle model.
Program schedule_program(const Program &program, const ScheduleTarget &target);

} // namespace tpurt::detail
