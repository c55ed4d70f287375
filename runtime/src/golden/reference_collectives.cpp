// SPDX-License-Identifier: MIT
// reference_collectives.cpp - the CPU golden model of the ring reductions
// (golden/reference_collectives.hpp).
#include "tpurt/golden/reference_collectives.hpp"

#include "tpurt/bf16.hpp"

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

RawValues reference_all_to_all(const std::vector<RawValues> &send, std::uint32_t rank) {
    const std::size_t block = send.at(0).size() / send.size();
    RawValues out;
    for (const RawValues &from : send)
        out.insert(out.end(), from.begin() + rank * block, from.begin() + (rank + 1) * block);
    return out;
}

} // namespace tpurt
