// SPDX-License-Identifier: MIT
// matmul_tiling.cpp - chooses the tiles of a matmul from the card's array and memory sizes and
// its cost model (see matmul_compiler.hpp for how the tiles are used).
#include "codegen/isa_limits.hpp"
#include "tpurt/codegen/matmul_compiler.hpp"
#include "tpurt/error.hpp"

#include <tpu_hw.h>

#include <algorithm>
#include <optional>
#include <string>

namespace tpurt {

namespace {

constexpr double dma_bytes_per_cycle = 64.0; // the card's host interface (docs/hardware.md)

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
    return (a + b - 1) / b;
}

[[noreturn]] void too_small(const std::string &what) {
    throw Error(ErrorCode::Unsupported, "matmul does not fit the card: " + what);
}

void check_request(DType type, std::uint32_t m, std::uint32_t k, std::uint32_t n,
                   const ArrayLimits &limits, std::size_t max_program_bytes) {
    if (!is_matmul_input(type))
        throw Error(ErrorCode::InvalidArgument,
                    std::string("matmul inputs are int8, bf16 or fp32, not ") + dtype_name(type));
    if (m == 0 || k == 0 || n == 0)
        throw Error(ErrorCode::InvalidArgument,
                    "matmul dimensions must be non-zero (M=" + std::to_string(m) +
                        " K=" + std::to_string(k) + " N=" + std::to_string(n) + ")");
    if (max_program_bytes % TPU_INSN_SIZE != 0 || max_program_bytes > TPU_PROGRAM_MAX_BYTES ||
        max_program_bytes < 8 * TPU_INSN_SIZE)
        throw Error(ErrorCode::InvalidArgument,
                    "program size limit " + std::to_string(max_program_bytes) +
                        " is not a multiple of 32 bytes in [256, TPU_PROGRAM_MAX_BYTES]");
    if (limits.mxu_rows == 0 || limits.mxu_cols == 0)
        too_small("the card reports an empty matrix unit");
}

// The shape of the problem and the fixed tile sizes the block candidates share.
struct TileContext {
    std::uint64_t m, k, n;
    std::uint64_t elem, acc_elem;
    std::uint64_t tile_k, tile_n;
    std::uint64_t k_tiles, n_tiles;
    std::uint64_t ub_rows;   // rows of A that fit the unified buffer next to a weight tile
    std::uint64_t max_insns; // per program, HALT included
};

struct Candidate {
    std::uint64_t group_n, block_m, tile_m;
    double cycles;
};

// Instructions of one block: per k tile, per column tile a weight DMA + LOAD_W and per A tile a
// MATMUL plus its DMA (once per k tile when the block's A is resident); then one DMA_OUT.
std::uint64_t block_insns(const TileContext &c, std::uint64_t group_n, std::uint64_t a_tiles) {
    const std::uint64_t per_k = a_tiles == 1 ? 1 + 3 * group_n : group_n * (2 + 2 * a_tiles);
    return c.k_tiles * per_k + 1;
}

// Modelled cycles of the whole matmul with this block shape, without the C write-back (the
// same for every shape) and the instruction issue cycles (negligible).
double modelled_cycles(const TileContext &c, std::uint64_t group_n, std::uint64_t block_m,
                       std::uint64_t tile_m) {
    const std::uint64_t m_blocks = ceil_div(c.m, block_m);
    const std::uint64_t a_tiles = ceil_div(block_m, tile_m);
    const std::uint64_t a_loads = a_tiles == 1 ? ceil_div(c.n_tiles, group_n) : c.n_tiles;
    const auto f = [](std::uint64_t v) { return static_cast<double>(v); };
    const double a_bytes = f(c.m) * f(c.k) * f(c.elem) * f(a_loads);
    const double w_bytes = f(c.k) * f(c.n) * f(c.elem) * f(m_blocks);
    const double load_w = f(c.k) * f(c.n_tiles) * f(m_blocks);
    const double matmuls = f(m_blocks) * f(a_tiles) * f(c.n_tiles) * f(c.k_tiles);
    const double mxu = f(c.m) * f(c.k_tiles) * f(c.n_tiles) + matmuls * f(c.tile_k + c.tile_n - 1);
    return (a_bytes + w_bytes) / dma_bytes_per_cycle + load_w + mxu;
}

// The block of group_n column tiles, A resident or streamed, that fits memories and program.
std::optional<Candidate> candidate(const TileContext &c, std::uint64_t group_n, bool resident,
                                   std::uint64_t acc_bytes) {
    const std::uint64_t acc_rows = acc_bytes / (group_n * c.tile_n * c.acc_elem);
    std::uint64_t block_m = std::min({c.m, max_dim, acc_rows});
    if (resident)
        block_m = std::min(block_m, c.ub_rows);
    if (block_m == 0)
        return std::nullopt;
    const std::uint64_t tile_m = std::min(c.ub_rows, block_m);
    if (block_m < c.m) // several blocks: keep them whole multiples of the A tiles
        block_m = block_m / tile_m * tile_m;
    std::uint64_t a_tiles = ceil_div(block_m, tile_m);
    if (block_insns(c, group_n, a_tiles) + 1 > c.max_insns) {
        if (a_tiles == 1)
            return std::nullopt;
        const std::uint64_t per_tile_budget = (c.max_insns - 2) / c.k_tiles / group_n;
        if (per_tile_budget < 4)
            return std::nullopt;
        a_tiles = (per_tile_budget - 2) / 2;
        block_m = a_tiles * tile_m;
        if (block_insns(c, group_n, ceil_div(block_m, tile_m)) + 1 > c.max_insns)
            return std::nullopt;
    }
    return Candidate{group_n, block_m, tile_m, modelled_cycles(c, group_n, block_m, tile_m)};
}

} // namespace

MatmulTiling choose_matmul_tiling(DType type, std::uint32_t m, std::uint32_t k, std::uint32_t n,
                                  const ArrayLimits &limits, std::size_t max_program_bytes) {
    check_request(type, m, k, n, limits, max_program_bytes);
    TileContext c{};
    c.m = m;
    c.k = k;
    c.n = n;
    c.elem = element_size(type);
    c.acc_elem = element_size(accumulator_type(type));
    c.max_insns = max_program_bytes / TPU_INSN_SIZE;
    c.tile_k = std::min<std::uint64_t>({k, limits.mxu_rows, max_dim});
    c.tile_n =
        std::min<std::uint64_t>({n, limits.mxu_cols, max_dim, limits.acc_bytes / c.acc_elem});
    if (c.tile_n == 0)
        too_small("accumulator memory of " + std::to_string(limits.acc_bytes) + " bytes");

    // The weight tile plus one row of A must fit the unified buffer: halve the larger side.
    while (c.tile_k * c.elem * (c.tile_n + 1) > limits.ub_bytes) {
        if (c.tile_k == 1 && c.tile_n == 1)
            too_small("unified buffer of " + std::to_string(limits.ub_bytes) + " bytes");
        if (c.tile_k >= c.tile_n)
            c.tile_k = ceil_div(c.tile_k, 2);
        else
            c.tile_n = ceil_div(c.tile_n, 2);
    }
    // bf16 sums k in blocks of 32: every K tile but the last must be whole blocks for the
    // tiled result to equal the untiled one (docs/hardware.md, Numerics).
    if (type == DType::Bf16 && c.tile_k < k) {
        if (c.tile_k < TPU_BF16_BLOCK_K)
            too_small((c.tile_k < limits.mxu_rows
                           ? "unified buffer of " + std::to_string(limits.ub_bytes) + " bytes"
                           : "matrix unit of " + std::to_string(limits.mxu_rows) + " rows") +
                      " for bf16 K tiles of " + std::to_string(TPU_BF16_BLOCK_K));
        c.tile_k -= c.tile_k % TPU_BF16_BLOCK_K;
    }
    const std::uint64_t weight_bytes = c.tile_k * c.tile_n * c.elem;
    c.ub_rows = (limits.ub_bytes - weight_bytes) / (c.tile_k * c.elem);
    c.k_tiles = ceil_div(k, c.tile_k);
    c.n_tiles = ceil_div(n, c.tile_n);

    std::optional<Candidate> best;
    const std::uint64_t max_group = std::min(c.n_tiles, max_dim / c.tile_n);
    for (std::uint64_t group_n = 1; group_n <= max_group; ++group_n) {
        if (group_n * c.tile_n * c.acc_elem > limits.acc_bytes)
            break;
        for (const bool resident : {true, false}) {
            const auto option = candidate(c, group_n, resident, limits.acc_bytes);
            if (option && (!best || option->cycles < best->cycles))
                best = option;
        }
    }
    if (!best)
        too_small("K=" + std::to_string(k) + " needs " + std::to_string(c.k_tiles) +
                  " weight tiles, more than one program of " + std::to_string(c.max_insns) +
                  " instructions can chain through the accumulators");

    MatmulTiling tiling;
    tiling.tile_k = static_cast<std::uint32_t>(c.tile_k);
    tiling.tile_n = static_cast<std::uint32_t>(c.tile_n);
    tiling.group_n = static_cast<std::uint32_t>(best->group_n);
    tiling.block_m = static_cast<std::uint32_t>(best->block_m);
    tiling.tile_m = static_cast<std::uint32_t>(best->tile_m);
    tiling.ub_a_offset = static_cast<std::uint32_t>(weight_bytes);
    tiling.acc_stride = static_cast<std::uint32_t>(best->group_n * c.tile_n * c.acc_elem);
    return tiling;
}

} // namespace tpurt
