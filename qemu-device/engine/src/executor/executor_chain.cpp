// SPDX-License-Identifier: MIT
// K-chain fusion (fast mode): a run of LOAD_W (from the UB) / MATMUL pairs in which every MATMUL
// after the first accumulates into the same accumulator rows — a matmul tiled along k — is
// computed as one MATMUL against the tiles concatenated along k, instead of one pass over the
// accumulators per tile. The result is the same: int8 sums are exact modulo 2^32, for
// fp32 every output element still runs one chain of steps in ascending k across the tiles (the
// accumulators only carry it from one MATMUL to the next), and bf16 the same blocks of 32 k as
// long as every tile but the last has a K that is a multiple of 32.
// Everything architectural is as if the instructions ran one by one: only pairs that would
// succeed join a chain (the instruction that would fault is then executed on its own), each
// instruction still goes through the counters and the timeline in order, and the last LOAD_W's
// tile is left loaded. Instructions are fetched exactly as the run loop would fetch them.
#include <algorithm>
#include <cstring>
#include <variant>

#include "executor/executor.hpp"
#include "mxu/bf16_numerics.hpp"

namespace tpu::engine {

bool Executor::peek(uint64_t program_addr, uint32_t count, uint32_t pc, Insn *insn) {
    if (pc == count)
        return false;
    // Every instruction before pc would have run, so the run loop would fetch here too.
    if (pc == window_end_ && (!fetch_fault_.ok() || !fetch(program_addr, count, pc_).ok()))
        return false;
    return decode(window_[pc - window_begin_], dev_.limits, insn).ok();
}

bool Executor::chains_with(const LoadWInsn &load, const MatmulInsn &matmul, uint32_t links,
                           uint32_t depth) const {
    Extent2D acc;
    // Tiles of a few k (the 1 x 1 constants of the training programs) gain nothing from a chain
    // and would have every row's activations gathered a few bytes at a time.
    if (load.from_host || load.k < kMinChainTileK ||
        !check_matmul(matmul, true, load.type, load.k, load.n, &acc).ok())
        return false;
    if (depth + load.k > kMaxChainDepth || !dev_.chain_weights.fits(depth + load.k, load.n))
        return false;
    if (links == 0) {
        // Overlapping accumulator rows are defined to run one after the other, each over the
        // MATMUL's k only.
        return matmul.m == 1 || matmul.acc_stride >= 4 * uint64_t(load.n);
    }
    const ChainLink &first = chain_[0];
    const MatmulInsn &m0 = first.matmul;
    // bf16 is computed in blocks of 32 k from the start of each tile: the concatenated tiles
    // have the same blocks only if every tile but the last is whole blocks.
    if (load.type == MxuType::Bf16 && chain_[links - 1].load.k % bf16::kBlock != 0)
        return false;
    return load.type == first.load.type && load.n == first.load.n && matmul.accumulate &&
           matmul.m == m0.m && matmul.acc_addr == m0.acc_addr &&
           matmul.acc_stride == m0.acc_stride && matmul.row_group == m0.row_group &&
           matmul.group_stride == m0.group_stride;
}

uint32_t Executor::pair_links(uint64_t program_addr, uint32_t count, uint32_t max_links,
                              JoinsLinks joins) {
    uint32_t links = 0;
    uint32_t depth = 0;
    for (uint32_t pc = pc_; links < max_links; pc += 2) {
        Insn load, matmul;
        // The MATMUL is looked at only once its LOAD_W is known to run.
        if (!peek(program_addr, count, pc, &load))
            break;
        const LoadWInsn *w = std::get_if<LoadWInsn>(&load);
        if (!w || !peek(program_addr, count, pc + 1, &matmul))
            break;
        const MatmulInsn *m = std::get_if<MatmulInsn>(&matmul);
        if (!m || !(this->*joins)(*w, *m, links, depth))
            break;
        chain_[links++] = ChainLink{*w, *m};
        depth += w->k;
    }
    return links >= 2 ? links : 0;
}

bool Executor::run_gathered(uint32_t links, uint32_t depth, const MatmulArgs &args) {
    const uint64_t elem = mxu_elem_bytes(chain_[0].load.type);
    const uint64_t row_bytes = depth * elem;
    const uint32_t block = uint32_t(std::min<uint64_t>(args.rows, kChainSrcBytes / row_bytes));
    for (uint32_t m0 = 0; m0 < args.rows; m0 += block) {
        const uint32_t rows = std::min(block, args.rows - m0);
        for (uint32_t i = 0, k0 = 0; i < links; k0 += chain_[i++].matmul.k) {
            MatmulArgs link = args;
            link.src = dev_.ub.data() + chain_[i].matmul.src_addr;
            link.src_stride = chain_[i].matmul.src_stride;
            for (uint32_t r = 0; r < rows; r++)
                std::memcpy(dev_.chain_src.data() + r * row_bytes + k0 * elem, link.src_row(m0 + r),
                            chain_[i].matmul.k * elem);
        }
        MatmulArgs part = args;
        part.src = dev_.chain_src.data();
        part.src_stride = row_bytes;
        part.row_group = 0;
        part.group_stride = 0;
        part.acc = args.acc + m0 * args.acc_stride;
        part.rows = rows;
        if (!dev_.mxu.run(dev_.chain_weights, part, dev_.abort_requested))
            return false;
    }
    return true;
}

Fault Executor::execute_chain(uint32_t links) {
    const LoadWInsn &first_load = chain_[0].load;
    const MatmulInsn &first = chain_[0].matmul;
    const uint64_t elem = mxu_elem_bytes(first_load.type);
    const uint32_t n = first_load.n;

    // The tiles one after the other along k; the activations of the MATMULs are one row
    // already when each starts where the previous one's end.
    WeightTile &tile = dev_.chain_weights;
    uint32_t depth = 0;
    bool contiguous = true;
    for (uint32_t i = 0; i < links; i++) {
        const MatmulInsn &matmul = chain_[i].matmul;
        contiguous &= matmul.src_addr == first.src_addr + depth * elem &&
                      matmul.src_stride == first.src_stride;
        depth += matmul.k;
    }
    tile.begin_load(first_load.type, depth, n, false);
    // Rows [c0, c1) of the concatenated tiles from the LOAD_Ws whose k they take.
    load_in_chunks(dev_.pool, tile, [&](uint32_t c0, uint32_t c1) {
        for (uint32_t i = 0, k0 = 0; i < links && k0 < c1; k0 += chain_[i++].load.k) {
            const LoadWInsn &load = chain_[i].load;
            const uint32_t lo = std::max(c0, k0), hi = std::min(c1, k0 + load.k);
            if (lo >= hi)
                continue;
            // Row lo - k0 of this tile: a source row, or an element of each when transposed.
            const uint64_t skip = uint64_t(lo - k0) * (load.transposed ? elem : load.src.stride);
            tile.load_rows(lo, hi - lo, dev_.ub.data() + load.src.addr + skip, load.src.stride,
                           load.transposed);
        }
    });

    Extent2D acc{first.acc_addr, first.acc_stride, first.m, 4 * uint64_t(n)};
    dev_.acc.mark_dirty(acc.addr, acc.end());
    const MatmulArgs args = matmul_args(first, acc);
    const bool done = contiguous ? run_fast(tile, args) : run_gathered(links, depth, args);
    if (!done) {
        // Stopped in the first MATMUL, its LOAD_W done.
        schedule_load_w(first_load);
        stage_ub_weights(first_load);
        pc_++;
        return make_fault(TPU_ERR_ABORTED);
    }
    for (uint32_t i = 0; i < links; i++) {
        const MatmulInsn &matmul = chain_[i].matmul;
        schedule_load_w(chain_[i].load);
        finish_matmul(matmul, n, acc, fast_matmul_cycles(args, matmul.k, n));
    }
    stage_ub_weights(chain_[links - 1].load);
    pc_ += 2 * links - 1;
    return kOk;
}

} // namespace tpu::engine
