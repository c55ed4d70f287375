// SPDX-License-Identifier: MIT
// Decoder of the link instructions SEND and RECV (spec 2.0, docs/hardware.md section 10),
// called by decode() (decoder.hpp) with the same fault rules.
#pragma once

#include "isa/decoder.hpp"

namespace tpu::engine {

Fault decode_link(const tpu_insn_link &l, const DecoderLimits &lim, Insn *out);

} // namespace tpu::engine
