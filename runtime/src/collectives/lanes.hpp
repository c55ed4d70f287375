// SPDX-License-Identifier: MIT
// lanes.hpp - internal: how the bidirectional-ring and 2-D torus algorithms cut a collective's
// data (collectives.hpp, "Algorithms" and "Determinism"): the lanes of an algorithm, each
// lane's elements, and each card's segment of a lane. Shared by the programs' compiler and the
// golden reference, so that both cut the data alike. Pure functions.
#pragma once

#include "tpurt/collectives.hpp"

#include <cstdint>
#include <vector>

namespace tpurt::detail {

// A lane: its share of the data goes along axis `first` of the CommShape, then the other one,
// forward (+x, +y, or the ring's direction) or in reverse.
struct LaneAxes {
    int first = 0;
    bool reverse = false;
    int second() const { return 1 - first; }
};

// The lanes of `algorithm` (not Auto) on `shape`: Ring one, BidirectionalRing two, Torus2d
// four (two if the torus is not square).
std::vector<LaneAxes> lanes_of(CollectiveAlgorithm algorithm, const CommShape &shape);

// Elements [begin, end).
struct Span {
    std::uint64_t begin = 0, end = 0;
    std::uint64_t size() const { return end - begin; }
};

// Part i of `parts` of s, cut evenly: [begin + i m / parts, begin + (i + 1) m / parts).
Span part(Span s, std::uint64_t parts, std::uint64_t i);

// Lane l of `lanes`' elements. An all-reduce of n elements (blocks false): part l of [0, n).
// Blocks of `n` elements a rank (reduce-scatter, all-gather) laid out lane by lane: lane l
// holds the l-th part of every block, p x (size of that part) elements.
Span lane_span(bool blocks, std::uint64_t n, std::uint32_t p, std::size_t l, std::size_t lanes);

// The segment of lane `lane` (elements `span`) that the card of indices `index` (along axes 0
// and 1) owns: part index[first] of the span along the first axis, then part index[second].
Span segment(Span span, const CommShape &shape, LaneAxes lane, const std::uint32_t index[2]);

// The first-axis chunk of the card of indices `index`: part index[first] of the span.
Span first_chunk(Span span, const CommShape &shape, LaneAxes lane, const std::uint32_t index[2]);

} // namespace tpurt::detail
