// SPDX-License-Identifier: MIT
// permute_compiler.cpp - permutations of a tensor's axes as card programs (see
// axis_compiler.hpp): the axes reduced to their canonical form, then 2-D blocks copied by DMA or
// TRANSPOSEd in the unified buffer.
#include "tpurt/codegen/axis_compiler.hpp"

#include "codegen/isa_limits.hpp"
#include "codegen/program_splitter.hpp"
#include "codegen/train_block.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace tpurt {

using namespace train_detail;

namespace {

// The permutation with axes of one element dropped and runs of input axes that stay adjacent
// and in order merged: extents of the input's axes and, per output axis, its input axis.
struct Canonical {
    std::vector<std::uint64_t> extent;
    std::vector<std::size_t> order;
};

Canonical canonical(const PermuteProblem &p) {
    const std::size_t rank = p.shape.size();
    std::vector<std::size_t> pos(rank);
    for (std::size_t i = 0; i < rank; ++i)
        pos[p.perm[i]] = i;
    // Kept input axes in input order, grouped while the next kept axis follows in the output.
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t k = 0; k < rank; ++k) {
        if (p.shape[k] == 1)
            continue;
        if (!groups.empty()) {
            const std::size_t prev = groups.back().back();
            // The next kept output axis after prev's position.
            std::size_t next = pos[prev] + 1;
            while (next < rank && p.shape[p.perm[next]] == 1)
                ++next;
            if (next < rank && p.perm[next] == k) {
                groups.back().push_back(k);
                continue;
            }
        }
        groups.push_back({k});
    }
    Canonical c;
    for (const std::vector<std::size_t> &g : groups) {
        std::uint64_t e = 1;
        for (std::size_t k : g)
            e *= p.shape[k];
        c.extent.push_back(e);
    }
    for (std::size_t i = 0; i < groups.size(); ++i)
        c.order.push_back(i);
    std::sort(c.order.begin(), c.order.end(), [&](std::size_t a, std::size_t b) {
        return pos[groups[a].front()] < pos[groups[b].front()];
    });
    return c;
}

// Densely packed strides (elements) of axes with these extents.
std::vector<std::uint64_t> dense_strides(const std::vector<std::uint64_t> &extent) {
    std::vector<std::uint64_t> s(extent.size(), 1);
    for (std::size_t i = extent.size(); i-- > 1;)
        s[i - 1] = s[i] * extent[i];
    return s;
}

void validate(const PermuteProblem &p) {
    std::vector<std::uint32_t> sorted = p.perm;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::uint32_t> identity(p.shape.size());
    std::iota(identity.begin(), identity.end(), 0u);
    if (p.shape.empty() || sorted != identity)
        throw Error(ErrorCode::InvalidArgument, "permute: perm must list each of the " +
                                                    std::to_string(p.shape.size()) + " axes once");
    for (std::uint32_t extent : p.shape)
        if (extent == 0)
            throw Error(ErrorCode::InvalidArgument, "permute: every extent must be non-zero");
}

// Rows of the kept last axis shorter than this go through swap_outer_axes().
constexpr std::uint64_t kShortRowBytes = 512;

// [A][B][C] -> [B][A][C] (canonical order {1, 0, 2}) with short rows of C: the general blocks
// (rows along one axis) would move every row of C to or from a host page of its own, on one
// side. Blocks of A' x B' x C instead, in as A' DMAs of B' C elements and out as B' DMAs of A'
// rows of C (B' C apart on chip): every DMA moves contiguous host bytes.
std::vector<Program> swap_outer_axes(const PermuteProblem &p, const Canonical &c, std::uint64_t e,
                                     const ArrayLimits &limits, std::size_t max_program_bytes) {
    const std::uint64_t na = c.extent[0], nb = c.extent[1], nc = c.extent[2];
    const std::uint64_t ub = limits.ub_bytes / e - 64;
    const std::uint64_t bb = std::min<std::uint64_t>({nb, max_dim / nc, ub / nc});
    const std::uint64_t ba = bb ? std::min<std::uint64_t>({na, max_dim, ub / (bb * nc)}) : 0;
    if (ba == 0)
        unsupported("permute", limits);
    const auto u32 = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
    ProgramSplitter programs(max_program_bytes);
    for (std::uint64_t a0 = 0; a0 < na; a0 += ba)
        for (std::uint64_t b0 = 0; b0 < nb; b0 += bb) {
            const std::uint64_t rows = std::min(ba, na - a0), cols = std::min(bb, nb - b0);
            const std::uint64_t row = cols * nc * e; // a block row on chip: B' rows of C
            ProgramBuilder b;
            b.dma_in({.type = p.type,
                      .host_addr = p.a_addr + (a0 * nb + b0) * nc * e,
                      .host_stride = nb * nc * e,
                      .local_addr = 0,
                      .local_stride = u32(row),
                      .rows = u32(rows),
                      .cols = u32(cols * nc)});
            for (std::uint64_t j = 0; j < cols; ++j)
                b.dma_out({.type = p.type,
                           .host_addr = p.dst_addr + ((b0 + j) * na + a0) * nc * e,
                           .host_stride = nc * e,
                           .local_addr = u32(j * nc * e),
                           .local_stride = u32(row),
                           .rows = u32(rows),
                           .cols = u32(nc)});
            programs.add(b.finish());
        }
    return programs.finish();
}

} // namespace

std::vector<Program> compile_permute(const PermuteProblem &p, const ArrayLimits &limits,
                                     std::size_t max_program_bytes) {
    validate(p);
    const std::uint64_t e = element_size(p.type);
    Canonical c = canonical(p);
    if (c.extent.empty()) { // a single element
        c.extent = {1};
        c.order = {0};
    }
    const std::size_t rank = c.extent.size();
    if (rank == 3 && c.order == std::vector<std::size_t>{1, 0, 2} &&
        c.extent[2] * e < kShortRowBytes)
        return swap_outer_axes(p, c, e, limits, max_program_bytes);
    const std::vector<std::uint64_t> in_stride = dense_strides(c.extent);
    std::vector<std::uint64_t> out_extent(rank), out_stride(rank);
    for (std::size_t i = 0; i < rank; ++i)
        out_extent[i] = c.extent[c.order[i]];
    const std::vector<std::uint64_t> os = dense_strides(out_extent);
    for (std::size_t i = 0; i < rank; ++i)
        out_stride[c.order[i]] = os[i];
    // The block: rows along input axis `row`, columns along the input's last axis. A TRANSPOSE
    // turns the output's last axis into rows; a plain copy takes its rows along the longest
    // other axis (the fewest DMAs).
    const std::size_t col = rank - 1;
    const bool transpose = c.order[rank - 1] != col;
    std::size_t row = transpose ? c.order[rank - 1] : (rank > 1 ? c.order[rank - 2] : rank);
    if (!transpose)
        for (std::size_t k = 0; k + 1 < rank; ++k)
            if (c.extent[k] > c.extent[row])
                row = k;
    const std::uint64_t rows_total = row < rank ? c.extent[row] : 1;
    const std::uint64_t cols_total = c.extent[col];
    const std::uint64_t ub = limits.ub_bytes / (transpose ? 2 : 1) / e - 64;
    std::uint64_t bc = std::min<std::uint64_t>({cols_total, max_dim, ub});
    std::uint64_t br = std::min<std::uint64_t>({rows_total, max_dim, ub / bc});
    while (transpose && br * 2 < bc && br < rows_total) {
        bc = (bc + 1) / 2; // squarer blocks: fewer, longer TRANSPOSE rows
        br = std::min<std::uint64_t>({rows_total, max_dim, ub / bc});
    }
    if (br == 0)
        unsupported("permute", limits);
    std::vector<std::size_t> others;
    for (std::size_t k = 0; k < rank; ++k)
        if (k != row && k != col)
            others.push_back(k);
    std::vector<std::uint64_t> index(others.size(), 0);
    const auto block_dma = [&](std::uint64_t host, std::uint64_t host_stride, std::uint32_t local,
                               std::uint64_t rows, std::uint64_t cols) {
        return DmaTransfer{.type = p.type,
                           .host_addr = host,
                           .host_stride = host_stride * e,
                           .local_addr = local,
                           .local_stride = static_cast<std::uint32_t>(cols * e),
                           .rows = static_cast<std::uint32_t>(rows),
                           .cols = static_cast<std::uint32_t>(cols)};
    };
    const std::uint64_t row_in = row < rank ? in_stride[row] : 0;
    const std::uint64_t row_out = row < rank ? out_stride[row] : 0;
    const std::uint32_t tr = static_cast<std::uint32_t>((br * bc * e + 63) / 64 * 64);
    ProgramSplitter programs(max_program_bytes);
    for (;;) {
        std::uint64_t in_base = 0, out_base = 0;
        for (std::size_t i = 0; i < others.size(); ++i) {
            in_base += index[i] * in_stride[others[i]];
            out_base += index[i] * out_stride[others[i]];
        }
        for (std::uint64_t r0 = 0; r0 < rows_total; r0 += br) {
            for (std::uint64_t c0 = 0; c0 < cols_total; c0 += bc) {
                const std::uint64_t rows = std::min(br, rows_total - r0);
                const std::uint64_t cols = std::min(bc, cols_total - c0);
                const std::uint64_t from = p.a_addr + (in_base + r0 * row_in + c0) * e;
                ProgramBuilder b;
                b.dma_in(block_dma(from, row_in ? row_in : cols, 0, rows, cols));
                if (!transpose) {
                    const std::uint64_t to = p.dst_addr + (out_base + r0 * row_out + c0) * e;
                    b.dma_out(block_dma(to, row_out ? row_out : cols, 0, rows, cols));
                } else {
                    b.transpose({.type = p.type,
                                 .src_addr = 0,
                                 .src_stride = static_cast<std::uint32_t>(cols * e),
                                 .dst_addr = tr,
                                 .dst_stride = static_cast<std::uint32_t>(rows * e),
                                 .rows = static_cast<std::uint32_t>(rows),
                                 .cols = static_cast<std::uint32_t>(cols)});
                    const std::uint64_t to =
                        p.dst_addr + (out_base + c0 * out_stride[col] + r0) * e;
                    b.dma_out(block_dma(to, out_stride[col], tr, cols, rows));
                }
                programs.add(b.finish());
            }
        }
        std::size_t i = others.size();
        while (i > 0 && ++index[i - 1] == c.extent[others[i - 1]])
            index[--i] = 0;
        if (i == 0)
            break;
    }
    return programs.finish();
}

} // namespace tpurt
