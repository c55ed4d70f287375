// SPDX-License-Identifier: MIT
// program_schedule.cpp - the card's cycle model over a program's instructions and the greedy
// list schedule that reorders them (program_schedule.hpp).
#include "graph/program_schedule.hpp"

#include "tpurt/types/dtype.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace tpurt::detail {

namespace {

enum Unit : std::uint32_t { kDma = 1, kWeights = 2, kMxu = 4, kVpu = 8 };
constexpr std::uint64_t kLanes = 128; // the vector unit's elements a cycle

// Bytes [begin, end) of the unified buffer, the accumulators, the two weight slots or host
// memory (device addresses) that an instruction reads or writes.
enum class Space : std::uint8_t { Ub, Acc, Slot, Host };
struct Span {
    Space space = Space::Ub;
    bool write = false;
    std::uint64_t begin = 0, end = 0;
};

// What the schedule needs to know about one instruction.
struct Node {
    std::uint32_t units = 0;
    std::uint64_t cost = 1;
    bool fixed = false;          // keeps its place against every other instruction
    bool barrier = false;        // SYNC, TIMESTAMP: starts once every earlier one has finished
    bool mxu = false;            // LOAD_W or MATMUL: kept in order among themselves
    std::array<Span, 3> spans{}; // MATMUL, ACTIVATE and VECTOR have three, the others fewer
    unsigned span_count = 0;

    void add(Space space, bool write, std::uint64_t first, std::uint64_t rows, std::uint64_t stride,
             std::uint64_t row_bytes) {
        if (rows == 0 || row_bytes == 0)
            return;
        spans[span_count++] = {space, write, first, first + (rows - 1) * stride + row_bytes};
    }
};

std::uint64_t size_of(std::uint8_t dtype) {
    return element_size(static_cast<DType>(dtype));
}

std::uint64_t vpu_cycles(std::uint64_t elements) {
    return (elements + kLanes - 1) / kLanes;
}

class Decoder {
  public:
    explicit Decoder(const ScheduleTarget &t) : target_(t), tile_n_(t.limits.mxu_cols) {}

    // In program order: MATMUL's accumulator span depends on the last LOAD_W's N.
    Node decode(const tpu_insn &insn) {
        Node n;
        switch (insn.hdr.opcode) {
        case TPU_OP_DMA_IN:
        case TPU_OP_DMA_OUT: {
            const tpu_insn_dma &d = insn.dma;
            const std::uint64_t row = std::uint64_t{d.cols} * size_of(d.dtype);
            const bool out = d.opcode == TPU_OP_DMA_OUT;
            n.units = kDma;
            n.cost = dma_cycles(row * d.rows);
            n.add(out && (d.flags & TPU_F_SRC_ACC) ? Space::Acc : Space::Ub, !out, d.local_addr,
                  d.rows, d.local_stride, row);
            n.add(Space::Host, out, host(d.host_addr), d.rows, d.host_stride, row);
            return n;
        }
        case TPU_OP_LOAD_W: {
            n.mxu = true;
            n.units = kWeights;
            slot_ = loads_++ % 2;
            n.add(Space::Slot, true, slot_, 1, 0, 1);
            if (insn.hdr.flags & TPU_F_W_HOST) {
                const tpu_insn_dma &d = insn.dma;
                const bool transposed = d.flags & TPU_F_W_TRANSPOSE;
                const std::uint64_t size = size_of(d.dtype);
                tile_n_ = d.cols;
                n.units |= kDma;
                n.cost = d.rows + dma_cycles(std::uint64_t{d.rows} * d.cols * size);
                n.add(Space::Host, false, host(d.host_addr), transposed ? d.cols : d.rows,
                      d.host_stride, (transposed ? d.rows : d.cols) * size);
                return n;
            }
            const tpu_insn_mxu &m = insn.mxu;
            tile_n_ = m.cols;
            const bool transposed = m.flags & TPU_F_W_TRANSPOSE;
            const std::uint64_t size = size_of(m.dtype);
            n.cost = m.rows;
            n.add(Space::Ub, false, m.src_addr, transposed ? m.cols : m.rows, m.src_stride,
                  (transposed ? m.rows : m.cols) * size);
            return n;
        }
        case TPU_OP_MATMUL: {
            const tpu_insn_mxu &m = insn.mxu;
            const std::uint64_t group = m.row_group ? m.row_group : m.rows;
            const bool overlap = m.rows > 1 && m.acc_stride < 4 * tile_n_;
            n.mxu = true;
            n.units = kMxu;
            n.cost = overlap ? std::uint64_t{m.rows} * (m.cols + tile_n_)
                             : std::uint64_t{m.rows} + m.cols + tile_n_ - 1;
            const std::uint64_t last = (m.rows - 1) / group * m.group_stride +
                                       (std::min<std::uint64_t>(group, m.rows) - 1) * m.src_stride;
            n.add(Space::Ub, false, m.src_addr, 1, 0,
                  last + std::uint64_t{m.cols} * size_of(m.dtype));
            n.add(Space::Acc, true, m.acc_addr, m.rows, m.acc_stride, 4 * tile_n_);
            n.add(Space::Slot, false, slot_, 1, 0, 1);
            return n;
        }
        case TPU_OP_ACTIVATE: {
            const tpu_insn_act &a = insn.act;
            n.units = kVpu;
            n.cost = vpu_cycles(std::uint64_t{a.rows} * a.cols);
            n.add(Space::Acc, false, a.acc_addr, a.rows, a.acc_stride, 4ull * a.cols);
            n.add(Space::Ub, true, a.dst_addr, a.rows, a.dst_stride, a.cols * size_of(a.dtype));
            if (a.flags & TPU_F_ACT_BIAS)
                n.add(Space::Ub, false, a.bias_addr, 1, 0, 4ull * a.cols);
            return n;
        }
        case TPU_OP_VECTOR:
        case TPU_OP_REDUCE:
        case TPU_OP_TRANSPOSE: {
            const tpu_insn_vec &v = insn.vec;
            const std::uint64_t size = size_of(v.dtype), row = v.cols * size;
            n.units = kVpu;
            n.cost = vpu_cycles(std::uint64_t{v.rows} * v.cols);
            n.add(Space::Ub, false, v.a_addr, v.rows, v.a_stride, row);
            if (v.opcode == TPU_OP_VECTOR) {
                n.add(Space::Ub, false, v.b_addr, v.rows, v.b_stride,
                      (v.flags & TPU_F_VEC_B_COL) ? size : row);
                n.add(Space::Ub, true, v.dst_addr, v.rows, v.dst_stride, row);
            } else if (v.opcode == TPU_OP_REDUCE) {
                n.add(Space::Ub, true, v.dst_addr, v.rows, v.dst_stride, 4); // SUM's 4-byte rows
            } else {
                n.add(Space::Ub, true, v.dst_addr, v.cols, v.dst_stride, v.rows * size);
            }
            return n;
        }
        case TPU_OP_POOL: {
            const tpu_insn_pool &p = insn.pool;
            const std::uint64_t size = size_of(p.dtype), c = p.channels;
            n.units = kVpu;
            n.cost = vpu_cycles(std::uint64_t{p.rows} * p.cols * c * p.win_h * p.win_w);
            n.add(Space::Ub, false, p.src_addr, (p.rows - 1ull) * p.stride_h + p.win_h,
                  p.src_row_stride, ((p.cols - 1ull) * p.stride_w + p.win_w) * c * size);
            n.add(Space::Ub, true, p.dst_addr, p.rows, p.dst_row_stride, p.cols * c * size);
            return n;
        }
        default: // NOP, HALT, SYNC, TIMESTAMP, SEND, RECV
            n.fixed = true;
            n.barrier = insn.hdr.opcode == TPU_OP_SYNC || insn.hdr.opcode == TPU_OP_TIMESTAMP;
            return n;
        }
    }

  private:
    // The device address a program's host address stands for.
    std::uint64_t host(std::uint64_t addr) const {
        const std::uint64_t arg = addr >> 48;
        if (target_.arg_bases.empty() || arg == 0 || arg > target_.arg_bases.size())
            return addr;
        return target_.arg_bases[arg - 1] + (addr & ((std::uint64_t{1} << 48) - 1));
    }

    std::uint64_t dma_cycles(std::uint64_t bytes) const {
        return (bytes * target_.clock_mhz + target_.dma_mbps - 1) / target_.dma_mbps;
    }

    const ScheduleTarget &target_;
    std::uint64_t tile_n_;
    std::uint64_t loads_ = 0, slot_ = 0; // LOAD_Ws so far, the weight slot of the last one
};

std::vector<Node> decode_all(const Program &program, const ScheduleTarget &target) {
    Decoder decoder(target);
    std::vector<Node> nodes;
    nodes.reserve(program.insns.size());
    for (const tpu_insn &insn : program.insns)
        nodes.push_back(decoder.decode(insn));
    return nodes;
}

// Whether a and b touch bytes (or a weight slot) of which one of them writes some; host memory
// only if `host`.
bool overlap(const Node &a, const Node &b, bool host) {
    for (unsigned i = 0; i < a.span_count; ++i)
        for (unsigned j = 0; j < b.span_count; ++j) {
            const Span &x = a.spans[i], &y = b.spans[j];
            if (x.space == y.space && (host || x.space != Space::Host) && (x.write || y.write) &&
                x.begin < y.end && y.begin < x.end)
                return true;
        }
    return false;
}

// Whether a and b must keep their order.
bool depends(const Node &a, const Node &b) {
    return a.fixed || b.fixed || (a.mxu && b.mxu) || overlap(a, b, true);
}

// When each instruction runs (docs/hardware.md, "Cycle model"): in order, one issued a cycle,
// each unit running one at a time, after the earlier ones it overlaps (overlap()) and, for a
// barrier, after every earlier one.
class Timeline {
  public:
    std::uint64_t start_of(const Node &n) const {
        std::uint64_t start = next_issue_;
        if (n.barrier)
            start = std::max(start, end_);
        for (unsigned u = 0; u < 4; ++u)
            if (n.units & (1u << u))
                start = std::max(start, unit_free_[u]);
        for (const auto &[other, finish] : in_flight_)
            if (finish > start && overlap(n, *other, false))
                start = finish;
        return start;
    }

    void schedule(const Node &n) {
        const std::uint64_t start = start_of(n), finish = start + n.cost;
        for (unsigned u = 0; u < 4; ++u)
            if (n.units & (1u << u))
                unit_free_[u] = finish;
        end_ = std::max(end_, finish);
        next_issue_ = start + 1;
        std::erase_if(in_flight_, [&](const auto &f) { return f.second <= next_issue_; });
        if (finish > next_issue_)
            in_flight_.emplace_back(&n, finish);
    }

    std::uint64_t cycles() const { return end_; }
    std::uint64_t next_issue() const { return next_issue_; }

  private:
    std::uint64_t next_issue_ = 0, end_ = 0;
    std::array<std::uint64_t, 4> unit_free_{};
    std::vector<std::pair<const Node *, std::uint64_t>> in_flight_;
};

} // namespace

std::uint64_t modelled_cycles(const Program &program, const ScheduleTarget &target) {
    const std::vector<Node> nodes = decode_all(program, target);
    Timeline t;
    for (const Node &n : nodes)
        t.schedule(n);
    return t.cycles();
}

Program schedule_program(const Program &program, const ScheduleTarget &target) {
    constexpr std::size_t window = 64; // the next unplaced instructions considered
    const std::vector<Node> nodes = decode_all(program, target);
    std::vector<std::size_t> order;
    order.reserve(nodes.size());
    std::vector<std::size_t> pending; // unplaced, in program order, the first `window` of them
    std::size_t next = 0;
    Timeline t;
    while (order.size() < nodes.size()) {
        while (pending.size() < window && next < nodes.size())
            pending.push_back(next++);
        std::size_t best = pending.size();
        std::uint64_t best_start = 0;
        for (std::size_t c = 0; c < pending.size(); ++c) {
            const Node &n = nodes[pending[c]];
            bool ready = true;
            for (std::size_t e = 0; e < c && ready; ++e)
                ready = !depends(nodes[pending[e]], n);
            if (!ready)
                continue;
            const std::uint64_t start = t.start_of(n);
            if (best == pending.size() || start < best_start) {
                best = c;
                best_start = start;
            }
            if (n.fixed || start == t.next_issue())
                break; // nothing moves before a fixed one; nothing starts earlier
        }
        t.schedule(nodes[pending[best]]);
        order.push_back(pending[best]);
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(best));
    }
    Program scheduled;
    scheduled.insns.reserve(program.insns.size());
    for (std::size_t i : order)
        scheduled.insns.push_back(program.insns[i]);
    return t.cycles() < modelled_cycles(program, target) ? scheduled : program;
}

} // namespace tpurt::detail
