// SPDX-License-Identifier: MIT
// lanes.cpp - the lanes of the collective algorithms and the segments they cut (lanes.hpp).
#include "collectives/lanes.hpp"

namespace tpurt::detail {

std::vector<LaneAxes> lanes_of(CollectiveAlgorithm algorithm, const CommShape &shape) {
    switch (algorithm) {
    case CollectiveAlgorithm::BidirectionalRing:
        return {{0, false}, {0, true}};
    case CollectiveAlgorithm::Torus2d:
        if (shape.size[0] != shape.size[1])
            return {{0, false}, {0, true}};
        return {{0, false}, {0, true}, {1, false}, {1, true}};
    case CollectiveAlgorithm::Hierarchical:
        return {{0, false}, {0, true}};
    case CollectiveAlgorithm::Auto:
    case CollectiveAlgorithm::Ring:
        break;
    }
    return {{0, false}};
}

Span part(Span s, std::uint64_t parts, std::uint64_t i) {
    const std::uint64_t m = s.size();
    return {s.begin + i * m / parts, s.begin + (i + 1) * m / parts};
}

Span lane_span(bool blocks, std::uint64_t n, std::uint32_t p, std::size_t l, std::size_t lanes) {
    const Span lane = part({0, n}, lanes, l);
    return blocks ? Span{p * lane.begin, p * lane.end} : lane;
}

Span first_chunk(Span span, const CommShape &shape, LaneAxes lane, const std::uint32_t index[2]) {
    return part(span, shape.size[lane.first], index[lane.first]);
}

Span segment(Span span, const CommShape &shape, LaneAxes lane, const std::uint32_t index[2]) {
    return part(first_chunk(span, shape, lane, index), shape.size[lane.second()],
                index[lane.second()]);
}

} // namespace tpurt::detail
