// SPDX-License-Identifier: MIT
// Decoders of the vector unit's instructions (ACTIVATE, VECTOR, REDUCE, POOL, TRANSPOSE), called
// by decode() (decoder.hpp) with the same fault rules.
#pragma once

#include "isa/decoder.hpp"

namespace tpu::engine {

Fault decode_activate(const tpu_insn_act &a, const DecoderLimits &lim, Insn *out);
Fault decode_vector(const tpu_insn_vec &v, const DecoderLimits &lim, Insn *out);
Fault decode_reduce(const tpu_insn_vec &v, const DecoderLimits &lim, Insn *out);
Fault decode_pool(const tpu_insn_pool &p, const DecoderLimits &lim, Insn *out);
Fault decode_transpose(const tpu_insn_vec &v, const DecoderLimits &lim, Insn *out);

} // namespace tpu::engine
