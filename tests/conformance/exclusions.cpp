// SPDX-License-Identifier: MIT
// exclusions.cpp - registered ops the conformance table leaves out, each with its reason. Empty:
// every registered op has cases. An op that cannot run on one card (a collective) goes here.
#include "conformance.hpp"

namespace conformance {

std::span<const Exclusion> exclusions() {
    return {};
}

} // namespace conformance
