// SPDX-License-Identifier: MIT
// reference_collectives.cpp - the CPU golden model of the ring reductions
// (golden/reference_collectives.hpp), and of the bidirectional ring's and the torus's lanes,
// written from the documented order rather than from the programs.
#include "tpurt/golden/reference_collectives.hpp"

#include "collectives/lanes.hpp"
#include "tpurt/types/bf16.hpp"

#include <bit>
#include <cmath>

namespace tpurt {

namespace {

constexpr std::uint32_t quiet_nan_fp32 = 0x7fc00000u;
constexpr std::uint32_t quiet_nan_bf16 = 0x7fc0u;

float value_of(DType type, std::uint32_t raw) {
    return std::bit_cast<float>(type == DType::Fp32 ? raw : raw << 16);
}

// Element i (of n) reduced along the ring to its owner at ring position q, given the send
// values in ring order: v_q op (v_{q-1} op (... op (v_{q+2} op v_{q+1}))).
std::uint32_t ring_element(DType type, ReduceKind op, const std::vector<RawValues> &send,
                           std::span<const std::uint32_t> positions, std::uint32_t q,
                           std::size_t i) {
    const auto p = static_cast<std::uint32_t>(send.size());
    std::vector<std::uint32_t> rank_at(p);
    for (std::uint32_t r = 0; r < p; ++r)
        rank_at[positions[r]] = r;
    std::uint32_t acc = send[rank_at[(q + 1) % p]][i];
    for (std::uint32_t j = 2; j <= p; ++j)
        acc = reference_link_reduce(type, op, send[rank_at[(q + j) % p]][i], acc);
    return acc;
}

// Element i reduced by lane `lane` towards the card `owner` (collectives.hpp, "Determinism").
class LaneOrder {
  public:
    LaneOrder(DType type, ReduceKind op, const std::vector<RawValues> &send, const CommShape &shape)
        : type_(type), op_(op), send_(send), shape_(shape),
          rank_at_(shape.size[0] * shape.size[1]) {
        for (std::uint32_t r = 0; r < send.size(); ++r)
            rank_at_[shape.position[1][r] * shape.size[0] + shape.position[0][r]] = r;
    }

    std::uint32_t element(detail::LaneAxes lane, std::uint32_t owner, std::size_t i) const {
        const int f = lane.first, s = lane.second();
        const long d = lane.reverse ? -1 : 1;
        const long a = shape_.position[f][owner], b = shape_.position[s][owner];
        const auto line = [&](long at_s) {
            std::uint32_t acc = value(f, a + d, at_s, i);
            for (long j = 2; j <= static_cast<long>(shape_.size[f]); ++j)
                acc = reference_link_reduce(type_, op_, value(f, a + d * j, at_s, i), acc);
            return acc;
        };
        std::uint32_t acc = line(b + d);
        for (long j = 2; j <= static_cast<long>(shape_.size[s]); ++j)
            acc = reference_link_reduce(type_, op_, line(b + d * j), acc);
        return acc;
    }

  private:
    // Element i of the card at `at_f` along axis f and `at_s` along the other (mod the sizes).
    std::uint32_t value(int f, long at_f, long at_s, std::size_t i) const {
        long at[2];
        at[f] = at_f;
        at[1 - f] = at_s;
        const long x = wrap(at[0], shape_.size[0]), y = wrap(at[1], shape_.size[1]);
        return send_[rank_at_[y * shape_.size[0] + x]][i];
    }
    static long wrap(long v, long n) { return ((v % n) + n) % n; }

    DType type_;
    ReduceKind op_;
    const std::vector<RawValues> &send_;
    const CommShape &shape_;
    std::vector<std::uint32_t> rank_at_;
};

} // namespace

std::uint32_t reference_link_reduce(DType type, ReduceKind op, std::uint32_t dst,
                                    std::uint32_t msg) {
    if (type == DType::Int32) {
        const auto a = static_cast<std::int32_t>(dst), b = static_cast<std::int32_t>(msg);
        if (op == ReduceKind::Sum)
            return dst + msg;
        return (op == ReduceKind::Max ? b > a : b < a) ? msg : dst;
    }
    const float a = value_of(type, dst), b = value_of(type, msg);
    const std::uint32_t nan = type == DType::Fp32 ? quiet_nan_fp32 : quiet_nan_bf16;
    if (op != ReduceKind::Sum) {
        if (std::isnan(a) || std::isnan(b))
            return nan;
        return (op == ReduceKind::Max ? b > a : b < a) ? msg : dst;
    }
    const float sum = a + b;
    if (std::isnan(sum))
        return nan;
    return type == DType::Fp32 ? std::bit_cast<std::uint32_t>(sum) : Bf16::from_float(sum).bits;
}

RawValues reference_all_reduce(DType type, ReduceKind op, const std::vector<RawValues> &send,
                               std::span<const std::uint32_t> ring_positions) {
    const auto p = static_cast<std::uint32_t>(send.size());
    const std::size_t n = send.at(0).size();
    RawValues out(n);
    for (std::uint32_t k = 0; k < p; ++k)
        for (std::size_t i = k * n / p; i < (k + 1) * n / p; ++i)
            out[i] = ring_element(type, op, send, ring_positions, ring_positions[k], i);
    return out;
}

RawValues reference_reduce_scatter(DType type, ReduceKind op, const std::vector<RawValues> &send,
                                   std::span<const std::uint32_t> ring_positions,
                                   std::uint32_t rank) {
    const std::size_t count = send.at(0).size() / send.size();
    RawValues out(count);
    for (std::size_t i = 0; i < count; ++i)
        out[i] =
            ring_element(type, op, send, ring_positions, ring_positions[rank], rank * count + i);
    return out;
}

RawValues reference_all_reduce(DType type, ReduceKind op, const std::vector<RawValues> &send,
                               CollectiveAlgorithm algorithm, const CommShape &shape) {
    const auto p = static_cast<std::uint32_t>(send.size());
    const std::size_t n = send.at(0).size();
    const std::vector<detail::LaneAxes> lanes = detail::lanes_of(algorithm, shape);
    const LaneOrder order(type, op, send, shape);
    RawValues out(n);
    for (std::size_t l = 0; l < lanes.size(); ++l)
        for (std::uint32_t k = 0; k < p; ++k) {
            const std::uint32_t index[2] = {shape.index[0][k], shape.index[1][k]};
            const detail::Span seg = detail::segment(
                detail::lane_span(false, n, p, l, lanes.size()), shape, lanes[l], index);
            for (std::size_t i = seg.begin; i < seg.end; ++i)
                out[i] = order.element(lanes[l], k, i);
        }
    return out;
}

RawValues reference_reduce_scatter(DType type, ReduceKind op, const std::vector<RawValues> &send,
                                   CollectiveAlgorithm algorithm, const CommShape &shape,
                                   std::uint32_t rank) {
    const std::size_t count = send.at(0).size() / send.size();
    const std::vector<detail::LaneAxes> lanes = detail::lanes_of(algorithm, shape);
    const LaneOrder order(type, op, send, shape);
    RawValues out(count);
    for (std::size_t l = 0; l < lanes.size(); ++l) {
        const detail::Span part = detail::part({0, count}, lanes.size(), l);
        for (std::size_t i = part.begin; i < part.end; ++i)
            out[i] = order.element(lanes[l], rank, rank * count + i);
    }
    return out;
}

RawValues reference_all_to_all(const std::vector<RawValues> &send, std::uint32_t rank) {
    const std::size_t block = send.at(0).size() / send.size();
    RawValues out;
    for (const RawValues &from : send)
        out.insert(out.end(), from.begin() + rank * block, from.begin() + (rank + 1) * block);
    return out;
}

} // namespace tpurt
