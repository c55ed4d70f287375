// SPDX-License-Identifier: MIT
// block_copy_compiler.cpp - block copies through the unified buffer as card programs (see
// block_copy.hpp).
#include "codegen/block_copy.hpp"

#include "codegen/isa_limits.hpp"
#include "codegen/program_splitter.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <string>

namespace tpurt::detail {

std::vector<Program> compile_block_copies(DType type, std::span<const BlockCopy> blocks,
                                          const ArrayLimits &limits,
                                          std::size_t max_program_bytes) {
    const std::uint64_t e = element_size(type);
    const std::size_t max_insns = max_program_bytes / TPU_INSN_SIZE;
    if (limits.ub_bytes < e || max_insns < 3)
        throw Error(ErrorCode::Unsupported, "block copy: no room for one element (unified buffer " +
                                                std::to_string(limits.ub_bytes) + " bytes)");
    ProgramSplitter programs(max_program_bytes);
    for (const BlockCopy &block : blocks) {
        const std::uint64_t cols =
            std::min<std::uint64_t>({block.cols, max_dim, limits.ub_bytes / e});
        const std::uint64_t rows =
            std::min<std::uint64_t>({block.rows, max_dim, limits.ub_bytes / (cols * e)});
        for (std::uint64_t c0 = 0; c0 < block.cols; c0 += cols)
            for (std::uint64_t r0 = 0; r0 < block.rows; r0 += rows) {
                const auto n = static_cast<std::uint32_t>(std::min(cols, block.cols - c0));
                const auto m = static_cast<std::uint32_t>(std::min(rows, block.rows - r0));
                const auto row = static_cast<std::uint32_t>(n * e);
                ProgramBuilder b;
                b.dma_in({.type = type,
                          .host_addr = block.src + r0 * block.src_stride + c0 * e,
                          .host_stride = block.src_stride,
                          .local_addr = 0,
                          .local_stride = row,
                          .rows = m,
                          .cols = n});
                b.dma_out({.type = type,
                           .host_addr = block.dst + r0 * block.dst_stride + c0 * e,
                           .host_stride = block.dst_stride,
                           .local_addr = 0,
                           .local_stride = row,
                           .rows = m,
                           .cols = n});
                programs.add(b.finish());
            }
    }
    return programs.finish();
}

} // namespace tpurt::detail
