// SPDX-License-Identifier: MIT
// SimdTile: the register tile of the vector MXU kernels, generic over the instruction set. Mac
// supplies the vector type, its lane count, masks for a partial last vector, loads and stores
// (masked when Partial), and the multiply-accumulate of one broadcast activation word:
//   Mac::Vec, Mac::Mask, Mac::kLanes, Mac::mask(lanes), Mac::zero(),
//   Mac::load<Partial>(mask, p), Mac::store<Partial>(p, mask, v), Mac::add(a, b),
//   Mac::mac(acc, const uint32_t *word, w), Mac::kOddFirst (walk the steps in pairs, the odd
//   step of each pair first: the card's bf16 order, docs/hardware.md Numerics)
// Include this header only inside a target region (GCC target / clang attribute pragma) of the
// matching instruction set, and instantiate it only with Mac types local to that file, so every
// instantiation is compiled for that set alone and stays private to it.
#pragma once

#include <cstdint>

#include "mxu_kernels_tiles.hpp"

namespace tpu::engine::tiles {

// R rows x V vectors of accumulators in registers over all steps (the TileFn contract).
template <class Mac, int R, int V> struct SimdTile {
    static void run(const uint32_t *a, uint32_t steps, const uint32_t *w, uint64_t ldw,
                    uint8_t *acc, uint64_t acc_stride, uint32_t cols, bool load_acc,
                    const int32_t *bias) {
        if (cols == uint32_t(V * Mac::kLanes))
            body<false>(a, steps, w, ldw, acc, acc_stride, cols, load_acc, bias);
        else
            body<true>(a, steps, w, ldw, acc, acc_stride, cols, load_acc, bias);
    }

    // One step: every accumulator takes its row's activation word at a times the weights at w.
    template <bool Partial>
    __attribute__((always_inline)) static inline void step(typename Mac::Vec (&c)[R][V],
                                                           const typename Mac::Mask (&mask)[V],
                                                           const uint32_t *a, const uint32_t *w) {
        typename Mac::Vec wv[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            wv[v] = Mac::template load<Partial>(mask[v], w + Mac::kLanes * v);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++)
#pragma GCC unroll 4
            for (int v = 0; v < V; v++)
                c[r][v] = Mac::mac(c[r][v], a + r * kStepChunk, wv[v]);
    }

    // Partial: the last vector is masked; otherwise every load and store is a full vector.
    template <bool Partial>
    static void body(const uint32_t *a, uint32_t steps, const uint32_t *w, uint64_t ldw,
                     uint8_t *acc, uint64_t acc_stride, uint32_t cols, bool load_acc,
                     const int32_t *bias) {
        using Vec = typename Mac::Vec;
        constexpr int kLanes = Mac::kLanes;
        typename Mac::Mask mask[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            mask[v] = Mac::mask(Partial ? cols - kLanes * v : kLanes);

        Vec c[R][V];
#pragma GCC unroll 8
        for (int r = 0; r < R; r++)
#pragma GCC unroll 4
            for (int v = 0; v < V; v++)
                c[r][v] = load_acc ? Mac::template load<Partial>(mask[v], acc + r * acc_stride +
                                                                              4 * kLanes * v)
                                   : Mac::zero();
        if (bias) {
#pragma GCC unroll 4
            for (int v = 0; v < V; v++) {
                Vec b = Mac::template load<Partial>(mask[v], bias + kLanes * v);
#pragma GCC unroll 8
                for (int r = 0; r < R; r++)
                    c[r][v] = Mac::add(c[r][v], b);
            }
        }

        if constexpr (Mac::kOddFirst) {
            // Pairs of steps, odd first (chunks start at even steps); a last odd step alone.
            uint32_t s = 0;
            for (; s + 2 <= steps; s += 2) {
                step<Partial>(c, mask, a + s + 1, w + (s + 1) * ldw);
                step<Partial>(c, mask, a + s, w + s * ldw);
            }
            if (s < steps)
                step<Partial>(c, mask, a + s, w + s * ldw);
        } else {
            for (uint32_t s = 0; s < steps; s++, a++, w += ldw)
                step<Partial>(c, mask, a, w);
        }

#pragma GCC unroll 8
        for (int r = 0; r < R; r++)
#pragma GCC unroll 4
            for (int v = 0; v < V; v++)
                Mac::template store<Partial>(acc + r * acc_stride + 4 * kLanes * v, mask[v],
                                             c[r][v]);
    }
};

} // namespace tpu::engine::tiles
