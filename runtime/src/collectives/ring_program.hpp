// SPDX-License-Identifier: MIT
// ring_program.hpp - internal: the compiler of one rank's part of a ring collective into card
// programs of SEND and RECV (LINK_HOST) over one buffer, argument 0 at Executable::placeholder(0)
// (collectives.hpp: the order of the steps and so of the reduction). A pure function.
#pragma once

#include "collectives/ring.hpp"
#include "tpurt/codegen/program_builder.hpp"

#include <cstdint>
#include <vector>

namespace tpurt::detail {

enum class CollectiveKind : std::uint8_t {
    AllReduce,
    ReduceScatter,
    AllGather,
    Broadcast,
    AllToAll,
    SendRecv, // chunk 0 to a neighbour on ports.send_port, chunk 1 from one on ports.recv_port
};

// One ring of an all-reduce, reduce-scatter or all-gather lane (collectives.hpp, "Algorithms"):
// a reduce-scatter or an all-gather of `chunks`, one per position on this ring (chunk j is the
// bytes [at, at + bytes) of the buffer), this rank at `position` of `nranks`, sending to the
// next position on ports.send_port and receiving from the previous on ports.recv_port.
struct RingPhase {
    bool gather = false;
    std::uint32_t nranks = 1;
    std::uint32_t position = 0;
    RingPorts ports;
    struct Chunk {
        std::uint64_t at = 0, bytes = 0;
    };
    std::vector<Chunk> chunks;
};

struct RingCollective {
    CollectiveKind kind = CollectiveKind::AllReduce;
    LinkReduce reduce = LinkReduce::Sum; // reduce-scatter and all-reduce
    DType type = DType::Fp32;
    std::uint32_t nranks = 1;
    // The buffer's chunks, one per ring position: chunk j is the bytes [at, at + bytes) of
    // chunks[j] (broadcast: one chunk, the whole buffer; send-recv: what goes out, what comes
    // in, either empty). All-to-all: chunk j is
    // the block this rank sends to position j, in the buffer's first p blocks (all of one size);
    // the buffer goes on with the blocks received from each position (j at p + j), then two
    // staging areas of p - 1 blocks each for the blocks passing through.
    using Chunk = RingPhase::Chunk;
    std::vector<Chunk> chunks;
    // All-reduce, reduce-scatter, all-gather (instead of chunks, position and ports): each
    // lane's rings one after the other, the lanes side by side, step by step (a lane's step t
    // beside the others' step t), their pieces alternating; the lanes send on distinct ports
    // at every step.
    std::vector<std::vector<RingPhase>> lanes;
    std::uint32_t position = 0;      // this rank's place on the ring
    std::uint32_t root_position = 0; // broadcast
    RingPorts ports;
    std::uint32_t piece_bytes = 0; // at most ICI_CREDITS x 4 KiB, a multiple of 4
    std::uint32_t tag_base = 0;    // high 16 bits of every tag
    // Each port's first RECV drops messages of other tags left on its port by a failed collective
    // (spec 2.2 cards: TPU_F_LINK_SKIP_STALE).
    bool skip_stale = false;
};

// The rank's programs (several if one would exceed TPU_PROGRAM_MAX_BYTES); none for a ring of
// one card.
std::vector<Program> compile_ring_collective(const RingCollective &c);

} // namespace tpurt::detail
