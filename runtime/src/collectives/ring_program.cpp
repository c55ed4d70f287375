// SPDX-License-Identifier: MIT
// ring_program.cpp - one rank's part of a ring collective as SEND / RECV programs
// (ring_program.hpp). Every step cuts the chunk it sends and the chunk it receives into pieces
// of piece_bytes and alternates: SEND piece k, RECV piece k, so a neighbour's receive buffer
// never has to hold more than it can before this card receives; lanes side by side (the
// bidirectional ring, the torus) send every lane's piece k, then receive every lane's piece k,
// each lane on ports of its own, so that still holds. A step that sends what an
// earlier one received starts with a SYNC: the card's cycle model tracks dependencies in its UB
// and accumulators only (docs/hardware.md, "Cycle model"), not through host memory, so without
// it the modelled SEND would leave before the data it carries had arrived.
#include "collectives/ring_program.hpp"

#include "tpurt/executable.hpp"

#include <algorithm>
#include <array>

namespace tpurt::detail {

namespace {

// One lane's step: a chunk out on send_port, one in (reduced or stored) from recv_port.
struct Transfer {
    std::uint32_t send_port = 0, recv_port = 0;
    std::uint64_t send_at = 0, send_bytes = 0, recv_at = 0, recv_bytes = 0;
    LinkReduce reduce = LinkReduce::Copy;
};

class Emitter {
  public:
    explicit Emitter(const RingCollective &c) : c_(c), p_(c.nranks) {}

    // The chunk of ring position j (mod p).
    std::uint64_t begin(long j) const { return c_.chunks[wrap(j)].at; }
    std::uint64_t bytes(long j) const { return c_.chunks[wrap(j)].bytes; }
    std::uint32_t size() const { return static_cast<std::uint32_t>(p_); }

    // One step on the ring's ports: the chunk at [send_at, +send_bytes) out, the one at
    // [recv_at, +recv_bytes) in.
    void step(std::uint64_t send_at, std::uint64_t send_bytes, std::uint64_t recv_at,
              std::uint64_t recv_bytes, LinkReduce reduce) {
        steps({{c_.ports.send_port, c_.ports.recv_port, send_at, send_bytes, recv_at, recv_bytes,
                reduce}});
    }
    // The lanes' steps side by side, cut into pieces of piece_bytes: every lane's piece k out,
    // then every lane's piece k in.
    void steps(const std::vector<Transfer> &lanes) {
        const std::uint64_t piece = c_.piece_bytes;
        std::uint64_t pieces = 0;
        for (const Transfer &t : lanes)
            pieces = std::max(
                {pieces, (t.send_bytes + piece - 1) / piece, (t.recv_bytes + piece - 1) / piece});
        for (std::uint64_t k = 0; k < pieces; ++k) {
            for (const Transfer &t : lanes)
                if (k * piece < t.send_bytes)
                    send(t.send_port, t.send_at + k * piece,
                         std::min(piece, t.send_bytes - k * piece));
            for (const Transfer &t : lanes)
                if (k * piece < t.recv_bytes)
                    recv(t.recv_port, t.recv_at + k * piece,
                         std::min(piece, t.recv_bytes - k * piece), t.reduce);
        }
    }
    void send(std::uint64_t at, std::uint64_t bytes) { send(c_.ports.send_port, at, bytes); }
    void recv(std::uint64_t at, std::uint64_t bytes, LinkReduce reduce) {
        recv(c_.ports.recv_port, at, bytes, reduce);
    }
    // Waits for every earlier instruction: the next SEND forwards what they received.
    void sync() { insns_.sync(); }

    // The instructions cut into programs of at most max_program_insns, each ending with HALT.
    std::vector<Program> programs() {
        const Program all = insns_.finish();
        std::vector<Program> out;
        const std::size_t per = max_program_insns - 1;
        for (std::size_t first = 0; first < all.insns.size(); first += per) {
            Program part;
            const std::size_t last = std::min(all.insns.size(), first + per);
            part.insns.assign(all.insns.begin() + first, all.insns.begin() + last);
            out.push_back(ProgramBuilder().append(part).halt().finish());
        }
        return out;
    }

    std::size_t wrap(long j) const {
        const long p = static_cast<long>(p_);
        return static_cast<std::size_t>(((j % p) + p) % p);
    }

  private:
    // Messages are numbered on each link direction: a SEND's by its port, a RECV's by its.
    std::uint32_t tag(std::uint64_t n) const { return c_.tag_base << 16 | (n & 0xffff); }

    void send(std::uint32_t port, std::uint64_t at, std::uint64_t bytes) {
        insns_.send({.port = port,
                     .tag = tag(sent_[port]++),
                     .addr = Executable::placeholder(0) + at,
                     .bytes = static_cast<std::uint32_t>(bytes),
                     .host = true});
    }
    void recv(std::uint32_t port, std::uint64_t at, std::uint64_t bytes, LinkReduce reduce) {
        const bool first = received_[port] == 0;
        insns_.recv({.port = port,
                     .tag = tag(received_[port]++),
                     .addr = Executable::placeholder(0) + at,
                     .bytes = static_cast<std::uint32_t>(bytes),
                     .host = true,
                     .reduce = reduce,
                     .type = c_.type,
                     .skip_stale = first && c_.skip_stale});
    }

    const RingCollective &c_;
    std::size_t p_;
    ProgramBuilder insns_;
    std::array<std::uint64_t, TPU_ICI_MAX_PORTS> sent_{}, received_{};
};

// The steps of one ring of a lane (RingPhase). Reduce-scatter, ending with position q holding
// chunk q: step s sends chunk q - s - 1 and reduces chunk q - s - 2 into place. All-gather from
// position q holding chunk q: step s sends chunk q - s, stores chunk q - s - 1.
void phase_steps(const RingPhase &ring, LinkReduce reduce, std::vector<Transfer> &out) {
    const long p = ring.nranks, q = ring.position;
    const auto chunk = [&](long j) {
        return ring.chunks[static_cast<std::size_t>(((j % p) + p) % p)];
    };
    const long shift = ring.gather ? 0 : 1;
    for (long s = 0; s + 1 < p; ++s) {
        const RingPhase::Chunk out_chunk = chunk(q - s - shift),
                               in_chunk = chunk(q - s - shift - 1);
        out.push_back({ring.ports.send_port, ring.ports.recv_port, out_chunk.at, out_chunk.bytes,
                       in_chunk.at, in_chunk.bytes, ring.gather ? LinkReduce::Copy : reduce});
    }
}

// All-reduce, reduce-scatter, all-gather: the lanes' steps side by side, a SYNC between steps
// (the next step sends what the one before reduced or stored).
void lanes(Emitter &e, const RingCollective &c) {
    std::vector<std::vector<Transfer>> steps(c.lanes.size());
    std::size_t count = 0;
    for (std::size_t l = 0; l < c.lanes.size(); ++l) {
        for (const RingPhase &ring : c.lanes[l])
            phase_steps(ring, c.reduce, steps[l]);
        count = std::max(count, steps[l].size());
    }
    for (std::size_t t = 0; t < count; ++t) {
        if (t > 0)
            e.sync();
        std::vector<Transfer> side_by_side;
        for (const std::vector<Transfer> &lane : steps)
            if (t < lane.size())
                side_by_side.push_back(lane[t]);
        e.steps(side_by_side);
    }
}

// A pipeline along the ring from the root: each piece received, then passed on.
void broadcast(Emitter &e, const RingCollective &c) {
    const std::uint64_t first = c.chunks.front().at, total = c.chunks.front().bytes;
    const std::uint32_t d = (c.position + e.size() - c.root_position) % e.size();
    for (std::uint64_t at = 0; at < total; at += c.piece_bytes) {
        const std::uint64_t piece = std::min<std::uint64_t>(c.piece_bytes, total - at);
        if (d != 0)
            e.recv(first + at, piece, LinkReduce::Copy);
        if (d != 0 && d + 1 != e.size())
            e.sync(); // passes on the piece just received
        if (d + 1 != e.size())
            e.send(first + at, piece);
    }
}

// All-to-all by relay along the ring: at step s = 1 .. p - 1 position q sends the p - s blocks
// destined to q + 1 .. q + p - s (step 1: its own; later: those it received the step before)
// and receives the p - s blocks that position q - s sent to q, q + 1, ..., keeping the first
// and staging the others for the next step (two staging areas, alternately).
void all_to_all(Emitter &e, long q) {
    const long p = e.size();
    const std::uint64_t block = e.bytes(0);
    const std::uint64_t received = p * block; // block j: from position j
    const auto staging = [&](long s, long i) {
        return received + p * block + ((s % 2) * (p - 1) + i) * block;
    };
    for (long s = 1; s < p; ++s) {
        if (s > 1)
            e.sync(); // passes on the blocks the step before received
        for (long i = 0; i < p - s; ++i) {
            const std::uint64_t from = s == 1 ? e.begin(q + 1 + i) : staging(s - 1, i);
            const std::uint64_t to = i == 0 ? received + e.wrap(q - s) * block : staging(s, i - 1);
            e.step(from, block, to, block, LinkReduce::Copy);
        }
    }
}

// Point to point: chunk 0 out on ports.send_port and chunk 1 in on ports.recv_port (either may
// be empty), in alternating pieces.
void exchange(Emitter &e, const RingCollective &c) {
    const RingCollective::Chunk out = c.chunks[0], in = c.chunks[1];
    e.step(out.at, out.bytes, in.at, in.bytes, LinkReduce::Copy);
}

} // namespace

std::vector<Program> compile_ring_collective(const RingCollective &c) {
    Emitter e(c);
    if (c.kind == CollectiveKind::SendRecv) {
        exchange(e, c);
        return e.programs();
    }
    if (e.size() < 2)
        return {};
    const long q = c.position;
    switch (c.kind) {
    case CollectiveKind::AllReduce:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather:
        lanes(e, c);
        break;
    case CollectiveKind::Broadcast:
        broadcast(e, c);
        break;
    case CollectiveKind::AllToAll:
        all_to_all(e, q);
        break;
    case CollectiveKind::SendRecv:
        break;
    }
    return e.programs();
}

} // namespace tpurt::detail
