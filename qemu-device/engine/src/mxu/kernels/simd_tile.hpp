// SPDX-License-Identifier: MIT
// SimdTile: the register tile of the vector MXU kernels, generic over the instruction set. Mac
// supplies the vector type, its lane count, masks for a partial last vector, loads and stores
// (masked when Partial), and the multiply-accumulate of one broadcast activation word:
//   Mac::Vec, Mac::Mask, Mac::kLanes, Mac::mask(lanes), Mac::zero(),
//   Mac::load<Partial>(mask, p), Mac::store<Partial>(p, mask, v) (floats: NaN stored as the
//   canonical NaN), Mac::store_raw<Partial>(p, mask, v) (bf16 blocks: as is), Mac::add(a, b),
//   Mac::mac(acc, const uint32_t *word, w), Mac::kBlockSteps (0: one chain per output over all
//   steps; otherwise the card's bf16 blocks, docs/hardware.md Numerics: steps alternate between
//   an even and an odd chain, both from +0, and every kBlockSteps steps (from step 0 of the
//   tile) the block is added to the accumulator as acc = add(acc, add(E, O)), where Mac::add
//   must compute the card's add(): the caller runs with MXCSR FTZ|DAZ)
// Include this header only inside a target region (GCC target / clang attribute pragma) of the
// matching instruction set, and instantiate it only with Mac types local to that file, so every
// instantiation is compiled for that set alone and stays private to it.
#pragma once

#include <cstdint>

#include "mxu/kernels/tiles.hpp"

namespace tpu::engine::tiles {

// R rows x V vectors of accumulators in registers over all steps (the TileFn contract).
template <class Mac, int R, int V> struct SimdTile {
    static void run(const uint32_t *a, uint64_t a_stride, uint32_t steps, const uint32_t *w,
                    uint64_t ldw, uint8_t *acc, uint64_t acc_stride, uint32_t cols, bool load_acc,
                    const int32_t *bias) {
        if (cols == uint32_t(V * Mac::kLanes))
            body<false>(a, a_stride, steps, w, ldw, acc, acc_stride, cols, load_acc, bias);
        else
            body<true>(a, a_stride, steps, w, ldw, acc, acc_stride, cols, load_acc, bias);
    }

    // One step: every accumulator takes its row's activation word at a times the weights at w.
    template <bool Partial>
    __attribute__((always_inline)) static inline void
    step(typename Mac::Vec (&c)[R][V], const typename Mac::Mask (&mask)[V], const uint32_t *a,
         uint64_t a_stride, const uint32_t *w) {
        typename Mac::Vec wv[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            wv[v] = Mac::template load<Partial>(mask[v], w + Mac::kLanes * v);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++)
#pragma GCC unroll 4
            for (int v = 0; v < V; v++)
                c[r][v] = Mac::mac(c[r][v], a + r * a_stride, wv[v]);
    }

    // bf16 blocks: the chains in registers, the accumulators in memory between blocks (exact:
    // fp32 loads and stores do not round). Blocks start at step 0 of the tile.
    template <bool Partial>
    static void blocks(const typename Mac::Mask (&mask)[V], const uint32_t *a, uint64_t a_stride,
                       uint32_t steps, const uint32_t *w, uint64_t ldw, uint8_t *acc,
                       uint64_t acc_stride, bool load_acc) {
        using Vec = typename Mac::Vec;
        constexpr int kLanes = Mac::kLanes;
        for (uint32_t b = 0; b < steps; b += Mac::kBlockSteps) {
            const uint32_t end = b + Mac::kBlockSteps < steps ? b + Mac::kBlockSteps : steps;
            Vec even[R][V], odd[R][V];
#pragma GCC unroll 8
            for (int r = 0; r < R; r++)
#pragma GCC unroll 4
                for (int v = 0; v < V; v++)
                    even[r][v] = odd[r][v] = Mac::zero();
            uint32_t s = b;
            for (; s + 2 <= end; s += 2) {
                step<Partial>(even, mask, a + s, a_stride, w + s * ldw);
                step<Partial>(odd, mask, a + s + 1, a_stride, w + (s + 1) * ldw);
            }
            if (s < end)
                step<Partial>(even, mask, a + s, a_stride, w + s * ldw);
            const bool from_memory = load_acc || b > 0;
            // Only the call's last block stores NaN as the canonical NaN: the others are read
            // back by the next block, where any NaN stays NaN.
            const bool last = end == steps;
#pragma GCC unroll 8
            for (int r = 0; r < R; r++)
#pragma GCC unroll 4
                for (int v = 0; v < V; v++) {
                    uint8_t *p = acc + r * acc_stride + 4 * kLanes * v;
                    const Vec old =
                        from_memory ? Mac::template load<Partial>(mask[v], p) : Mac::zero();
                    const Vec sum = Mac::add(old, Mac::add(even[r][v], odd[r][v]));
                    if (last)
                        Mac::template store<Partial>(p, mask[v], sum);
                    else
                        Mac::template store_raw<Partial>(p, mask[v], sum);
                }
        }
    }

    // Partial: the last vector is masked; otherwise every load and store is a full vector.
    template <bool Partial>
    static void body(const uint32_t *a, uint64_t a_stride, uint32_t steps, const uint32_t *w,
                     uint64_t ldw, uint8_t *acc, uint64_t acc_stride, uint32_t cols, bool load_acc,
                     const int32_t *bias) {
        using Vec = typename Mac::Vec;
        constexpr int kLanes = Mac::kLanes;
        typename Mac::Mask mask[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            mask[v] = Mac::mask(Partial ? cols - kLanes * v : kLanes);

        if constexpr (Mac::kBlockSteps != 0) {
            blocks<Partial>(mask, a, a_stride, steps, w, ldw, acc, acc_stride, load_acc);
            return;
        }

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

        for (uint32_t s = 0; s < steps; s++, a++, w += ldw)
            step<Partial>(c, mask, a, a_stride, w);

#pragma GCC unroll 8
        for (int r = 0; r < R; r++)
#pragma GCC unroll 4
            for (int v = 0; v < V; v++)
                Mac::template store<Partial>(acc + r * acc_stride + 4 * kLanes * v, mask[v],
                                             c[r][v]);
    }
};

} // namespace tpu::engine::tiles
