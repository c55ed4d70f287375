// SPDX-License-Identifier: MIT
// ring_program.cpp - one rank's part of a ring collective as SEND / RECV programs
// (ring_program.hpp). Every step cuts the chunk it sends and the chunk it receives into pieces
// of piece_bytes and alternates: SEND piece k, RECV piece k, so a neighbour's receive buffer
// never has to hold more than it can before this card receives.
#include "collectives/ring_program.hpp"

#include "tpurt/executable.hpp"

#include <algorithm>

namespace tpurt::detail {

namespace {

class Emitter {
  public:
    explicit Emitter(const RingCollective &c) : c_(c), p_(c.nranks) {}

    // The chunk of ring position j (mod p).
    std::uint64_t begin(long j) const { return c_.chunks[wrap(j)].at; }
    std::uint64_t bytes(long j) const { return c_.chunks[wrap(j)].bytes; }
    std::uint32_t size() const { return static_cast<std::uint32_t>(p_); }

    // One step: the chunk at [send_at, +send_bytes) out, the one at [recv_at, +recv_bytes) in.
    void step(std::uint64_t send_at, std::uint64_t send_bytes, std::uint64_t recv_at,
              std::uint64_t recv_bytes, LinkReduce reduce) {
        const std::uint64_t piece = c_.piece_bytes;
        const std::uint64_t pieces =
            std::max((send_bytes + piece - 1) / piece, (recv_bytes + piece - 1) / piece);
        for (std::uint64_t k = 0; k < pieces; ++k) {
            if (k * piece < send_bytes)
                send(send_at + k * piece, std::min(piece, send_bytes - k * piece));
            if (k * piece < recv_bytes)
                recv(recv_at + k * piece, std::min(piece, recv_bytes - k * piece), reduce);
        }
    }
    void send(std::uint64_t at, std::uint64_t bytes) {
        insns_.send({.port = c_.ports.send_port,
                     .tag = tag(sent_++),
                     .addr = Executable::placeholder(0) + at,
                     .bytes = static_cast<std::uint32_t>(bytes),
                     .host = true});
    }
    void recv(std::uint64_t at, std::uint64_t bytes, LinkReduce reduce) {
        const bool first = received_ == 0;
        insns_.recv({.port = c_.ports.recv_port,
                     .tag = tag(received_++),
                     .addr = Executable::placeholder(0) + at,
                     .bytes = static_cast<std::uint32_t>(bytes),
                     .host = true,
                     .reduce = reduce,
                     .type = c_.type,
                     .skip_stale = first && c_.skip_stale});
    }

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

  private:
    std::size_t wrap(long j) const {
        const long p = static_cast<long>(p_);
        return static_cast<std::size_t>(((j % p) + p) % p);
    }
    std::uint32_t tag(std::uint64_t n) const { return c_.tag_base << 16 | (n & 0xffff); }

    const RingCollective &c_;
    std::size_t p_;
    ProgramBuilder insns_;
    std::uint64_t sent_ = 0, received_ = 0;
};

// Reduce-scatter ending with position q holding chunk q: step s sends chunk q - s - 1 and
// reduces chunk q - s - 2 into place.
void reduce_scatter(Emitter &e, long q, LinkReduce reduce) {
    for (long s = 0; s + 1 < e.size(); ++s)
        e.step(e.begin(q - s - 1), e.bytes(q - s - 1), e.begin(q - s - 2), e.bytes(q - s - 2),
               reduce);
}

// All-gather from position q holding chunk q: step s sends chunk q - s, stores chunk q - s - 1.
void all_gather(Emitter &e, long q) {
    for (long s = 0; s + 1 < e.size(); ++s)
        e.step(e.begin(q - s), e.bytes(q - s), e.begin(q - s - 1), e.bytes(q - s - 1),
               LinkReduce::Copy);
}

// A pipeline along the ring from the root: each piece received, then passed on.
void broadcast(Emitter &e, const RingCollective &c) {
    const std::uint64_t first = c.chunks.front().at, total = c.chunks.front().bytes;
    const std::uint32_t d = (c.position + e.size() - c.root_position) % e.size();
    for (std::uint64_t at = 0; at < total; at += c.piece_bytes) {
        const std::uint64_t piece = std::min<std::uint64_t>(c.piece_bytes, total - at);
        if (d != 0)
            e.recv(first + at, piece, LinkReduce::Copy);
        if (d + 1 != e.size())
            e.send(first + at, piece);
    }
}

} // namespace

std::vector<Program> compile_ring_collective(const RingCollective &c) {
    Emitter e(c);
    if (e.size() < 2)
        return {};
    const long q = c.position;
    switch (c.kind) {
    case CollectiveKind::AllReduce:
        reduce_scatter(e, q, c.reduce);
        all_gather(e, q);
        break;
    case CollectiveKind::ReduceScatter:
        reduce_scatter(e, q, c.reduce);
        break;
    case CollectiveKind::AllGather:
        all_gather(e, q);
        break;
    case CollectiveKind::Broadcast:
        broadcast(e, c);
        break;
    }
    return e.programs();
}

} // namespace tpurt::detail
