// SPDX-License-Identifier: MIT
// reference_collectives.hpp - the CPU golden model of the communicators' reductions
// (collectives.hpp): the card's receive-reduce of one element and the all-reduce and
// reduce-scatter of every rank's values in the documented order of each algorithm, and the
// all-to-all's exchange of blocks.
#pragma once

#include "tpurt/collectives.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace tpurt {

// Elements of `type` (fp32, bf16, int32) held raw in 32-bit words (bf16 in the low half).
using RawValues = std::vector<std::uint32_t>;

// dst op msg as a RECV with that reduce computes it (docs/hardware.md, "Receive-reduce").
std::uint32_t reference_link_reduce(DType type, ReduceKind op, std::uint32_t dst,
                                    std::uint32_t msg);

// Every rank's all-reduce result (the same for all) of send[r] (one RawValues per rank), rank
// k's chunk reduced along the ring ending at ring_positions[k].
RawValues reference_all_reduce(DType type, ReduceKind op, const std::vector<RawValues> &send,
                               std::span<const std::uint32_t> ring_positions);

// Rank `rank`'s reduce-scatter result: block `rank` of every send (count x nranks each).
RawValues reference_reduce_scatter(DType type, ReduceKind op, const std::vector<RawValues> &send,
                                   std::span<const std::uint32_t> ring_positions,
                                   std::uint32_t rank);

// The same by `algorithm` (not Auto) on a communicator of `shape` (Communicator::shape()): each
// lane's elements reduced along its first axis, then its second, ending at the card owning
// them (collectives.hpp, "Determinism").
RawValues reference_all_reduce(DType type, ReduceKind op, const std::vector<RawValues> &send,
                               CollectiveAlgorithm algorithm, const CommShape &shape);
RawValues reference_reduce_scatter(DType type, ReduceKind op, const std::vector<RawValues> &send,
                                   CollectiveAlgorithm algorithm, const CommShape &shape,
                                   std::uint32_t rank);

// Rank `rank`'s all-to-all result: block k (send[k].size() / nranks elements) is block `rank`
// of send[k].
RawValues reference_all_to_all(const std::vector<RawValues> &send, std::uint32_t rank);

} // namespace tpurt
