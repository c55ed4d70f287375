// SPDX-License-Identifier: MIT
// Timeline: when each instruction of a job runs in the cycle model (docs/hardware.md, "Cycle
// model"), shared by both engine modes. Instructions issue in program order, one per cycle, to
// units — DMA, weight loader, MXU, VPU, and each link port's two directions (spec 2.0) — that
// each run one instruction at a time. An
// instruction starts once it has issued, its units are free, and every earlier instruction it
// depends on has finished: a dependency is an overlapping byte span in the unified buffer or
// the accumulators that either of the two writes (RAW, WAR, WAW), or a weight slot (LOAD_W
// writes one of two slots in turn, MATMUL reads the last one written). Barriers (SYNC,
// TIMESTAMP) wait for every earlier instruction.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace tpu::engine {

enum class Space : uint8_t { Ub, Acc, WeightSlot };

// Bytes [begin, end) of a space that an instruction reads or writes.
struct Span {
    Space space = Space::Ub;
    uint64_t begin = 0;
    uint64_t end = 0;
    bool write = false;
};

enum Unit : uint32_t {
    kUnitDma = 1 << 0,
    kUnitWeights = 1 << 1,
    kUnitMxu = 1 << 2,
    kUnitVpu = 1 << 3,
};

// Spec 2.0: each link direction is a unit of its own — port p's sending side (SEND) and its
// receiving side (RECV), for p < TPU_ICI_MAX_PORTS (8).
inline constexpr unsigned kLinkPorts = 8;
inline constexpr uint32_t link_tx_unit(unsigned port) {
    return 1u << (4 + port);
}
inline constexpr uint32_t link_rx_unit(unsigned port) {
    return 1u << (4 + kLinkPorts + port);
}

// What the timeline needs to know about one instruction.
struct Step {
    static constexpr unsigned kMaxSpans = 3;

    uint32_t units = 0; // Unit bits, all busy for cost cycles; 0 = issue only
    uint64_t cost = 1;
    bool barrier = false; // waits for every earlier instruction
    std::array<Span, kMaxSpans> spans{};
    unsigned span_count = 0;

    Step &add(Space space, uint64_t begin, uint64_t end, bool write) {
        spans[span_count++] = Span{space, begin, end, write};
        return *this;
    }
};

class Timeline {
  public:
    Timeline() { in_flight_.reserve(kUnits); }

    // The cycle a step would start at if scheduled now.
    uint64_t start_of(const Step &step) const;
    // Schedules the next instruction; returns its start cycle.
    uint64_t schedule(const Step &step);

    // Finish of the last instruction to finish: the job's cycles.
    uint64_t cycles() const { return end_; }
    // Sum over instructions of the cycles between issue and start.
    uint64_t stall_cycles() const { return stall_; }

  private:
    static constexpr unsigned kUnits = 4 + 2 * kLinkPorts;

    struct InFlight {
        Step step;
        uint64_t finish;
    };

    static bool conflict(const Step &a, const Step &b);

    uint64_t next_issue_ = 0; // the earliest cycle the next instruction can start
    uint64_t end_ = 0;
    uint64_t stall_ = 0;
    std::array<uint64_t, kUnits> unit_free_{};
    // Instructions that may still be running at next_issue_ (at most one per unit).
    std::vector<InFlight> in_flight_;
};

} // namespace tpu::engine
