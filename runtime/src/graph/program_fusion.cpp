// SPDX-License-Identifier: MIT
// program_fusion.cpp - joining a captured sequence's programs into few jobs, with a reset between
// two that share a job of the on-chip bytes the later one reads before it writes them and an
// earlier one may have written (program_fusion.hpp).
#include "graph/program_fusion.hpp"

#include "tpurt/error.hpp"

#include <algorithm>
#include <map>

namespace tpurt::detail {

namespace {

// Disjoint byte ranges [begin, end) of an on-chip memory.
class Ranges {
  public:
    bool empty() const { return ranges_.empty(); }
    const std::map<std::uint64_t, std::uint64_t> &ranges() const { return ranges_; }

    void add(std::uint64_t begin, std::uint64_t end) {
        if (begin >= end)
            return;
        auto it = ranges_.upper_bound(begin);
        if (it != ranges_.begin() && std::prev(it)->second >= begin)
            --it;
        while (it != ranges_.end() && it->first <= end) {
            begin = std::min(begin, it->first);
            end = std::max(end, it->second);
            it = ranges_.erase(it);
        }
        ranges_[begin] = end;
    }

    // Adds the parts of [begin, end) that `covered` does not hold.
    void add_uncovered(std::uint64_t begin, std::uint64_t end, const Ranges &covered) {
        auto it = covered.ranges_.upper_bound(begin);
        if (it != covered.ranges_.begin() && std::prev(it)->second > begin)
            --it;
        for (; begin < end; ++it) {
            if (it == covered.ranges_.end() || it->first >= end) {
                add(begin, end);
                return;
            }
            if (it->first > begin)
                add(begin, it->first);
            begin = std::max(begin, it->second);
        }
    }

    Ranges intersection(const Ranges &other) const {
        Ranges r;
        for (const auto &[begin, end] : ranges_) {
            auto it = other.ranges_.upper_bound(begin);
            if (it != other.ranges_.begin() && std::prev(it)->second > begin)
                --it;
            for (; it != other.ranges_.end() && it->first < end; ++it)
                r.add(std::max(begin, it->first), std::min(end, it->second));
        }
        return r;
    }

    void subtract(const Ranges &other) {
        Ranges r;
        for (const auto &[begin, end] : ranges_)
            r.add_uncovered(begin, end, other);
        *this = std::move(r);
    }

  private:
    std::map<std::uint64_t, std::uint64_t> ranges_;
};

// What one program does to one on-chip memory: the bytes it may write (every row's span from
// the first to the last, gaps included) and those it reads before it has surely written them
// (which must be zero when it starts, as in a job of its own).
struct Memory {
    Ranges written, needs_zero;
    Ranges surely_written; // so far in the program: whole rows, gaps excluded

    static std::uint64_t end(std::uint64_t addr, std::uint64_t rows, std::uint64_t stride,
                             std::uint64_t row_bytes) {
        return addr + (rows - 1) * stride + row_bytes;
    }
    void read(std::uint64_t addr, std::uint64_t rows, std::uint64_t stride,
              std::uint64_t row_bytes) {
        if (rows != 0 && row_bytes != 0)
            needs_zero.add_uncovered(addr, end(addr, rows, stride, row_bytes), surely_written);
    }
    void write(std::uint64_t addr, std::uint64_t rows, std::uint64_t stride,
               std::uint64_t row_bytes) {
        if (rows == 0 || row_bytes == 0)
            return;
        written.add(addr, end(addr, rows, stride, row_bytes));
        if (stride <= row_bytes) // the rows touch or overlap: the span is written
            surely_written.add(addr, end(addr, rows, stride, row_bytes));
        else if (rows <= 64)
            for (std::uint64_t r = 0; r < rows; ++r)
                surely_written.add(addr + r * stride, addr + r * stride + row_bytes);
    }
};

struct Footprint {
    Memory ub, acc;
};

std::uint64_t size_of(std::uint8_t dtype) {
    return element_size(static_cast<DType>(dtype));
}

// Adds what `insn` reads, then what it writes, on chip; `weight_cols` is the loaded tile's N.
void add_access(const union tpu_insn &insn, std::uint64_t weight_cols, Footprint &f) {
    const std::uint64_t size = size_of(insn.hdr.dtype);
    const std::uint16_t flags = insn.hdr.flags;
    switch (insn.hdr.opcode) {
    case TPU_OP_DMA_IN:
        f.ub.write(insn.dma.local_addr, insn.dma.rows, insn.dma.local_stride, insn.dma.cols * size);
        break;
    case TPU_OP_DMA_OUT:
        ((flags & TPU_F_SRC_ACC) ? f.acc : f.ub)
            .read(insn.dma.local_addr, insn.dma.rows, insn.dma.local_stride, insn.dma.cols * size);
        break;
    case TPU_OP_LOAD_W:
        if (!(flags & TPU_F_W_HOST)) { // K rows of N, or N of K: the larger square covers both
            const std::uint64_t side = std::max(insn.mxu.rows, insn.mxu.cols);
            f.ub.read(insn.mxu.src_addr, side, insn.mxu.src_stride, side * size);
        }
        break;
    case TPU_OP_MATMUL: {
        const std::uint64_t m = insn.mxu.rows;
        const std::uint64_t g = insn.mxu.row_group ? insn.mxu.row_group : m;
        if (m != 0 && g != 0)
            f.ub.read(insn.mxu.src_addr, 1, 0,
                      ((m - 1) / g) * insn.mxu.group_stride +
                          (std::min(g, m) - 1) * insn.mxu.src_stride + insn.mxu.cols * size);
        if (flags & TPU_F_ACCUMULATE)
            f.acc.read(insn.mxu.acc_addr, m, insn.mxu.acc_stride, 4 * weight_cols);
        f.acc.write(insn.mxu.acc_addr, m, insn.mxu.acc_stride, 4 * weight_cols);
        break;
    }
    case TPU_OP_ACTIVATE:
        f.acc.read(insn.act.acc_addr, insn.act.rows, insn.act.acc_stride, insn.act.cols * 4);
        if (flags & TPU_F_ACT_BIAS)
            f.ub.read(insn.act.bias_addr, 1, 0, insn.act.cols * 4);
        f.ub.write(insn.act.dst_addr, insn.act.rows, insn.act.dst_stride, insn.act.cols * size);
        break;
    case TPU_OP_VECTOR:
        f.ub.read(insn.vec.a_addr, insn.vec.rows, insn.vec.a_stride, insn.vec.cols * size);
        f.ub.read(insn.vec.b_addr, insn.vec.rows, insn.vec.b_stride,
                  (flags & TPU_F_VEC_B_COL) ? size : insn.vec.cols * size);
        f.ub.write(insn.vec.dst_addr, insn.vec.rows, insn.vec.dst_stride, insn.vec.cols * size);
        break;
    case TPU_OP_REDUCE: // a SUM's elements are 4 bytes whatever the input type
        f.ub.read(insn.vec.a_addr, insn.vec.rows, insn.vec.a_stride, insn.vec.cols * size);
        f.ub.write(insn.vec.dst_addr, insn.vec.rows, insn.vec.dst_stride,
                   (flags & 0xf) == TPU_ROP_SUM ? 4 : size);
        break;
    case TPU_OP_TRANSPOSE:
        f.ub.read(insn.vec.a_addr, insn.vec.rows, insn.vec.a_stride, insn.vec.cols * size);
        f.ub.write(insn.vec.dst_addr, insn.vec.cols, insn.vec.dst_stride, insn.vec.rows * size);
        break;
    case TPU_OP_POOL: {
        const std::uint64_t in_rows =
            (std::uint64_t{insn.pool.rows} - 1) * insn.pool.stride_h + insn.pool.win_h;
        const std::uint64_t in_cols =
            (std::uint64_t{insn.pool.cols} - 1) * insn.pool.stride_w + insn.pool.win_w;
        if (insn.pool.rows != 0 && insn.pool.cols != 0)
            f.ub.read(insn.pool.src_addr, in_rows, insn.pool.src_row_stride,
                      in_cols * insn.pool.channels * size);
        f.ub.write(insn.pool.dst_addr, insn.pool.rows, insn.pool.dst_row_stride,
                   std::uint64_t{insn.pool.cols} * insn.pool.channels * size);
        break;
    }
    default: // DMA in from the host only writes; NOP, SYNC, TIMESTAMP touch nothing on chip
        break;
    }
}

// The instructions of one job's program up to its first HALT (nothing after it runs), and
// what they do on chip.
std::span<const union tpu_insn> body(const Program &program, std::size_t index, Footprint &f) {
    std::uint64_t weight_cols = 0;
    std::size_t n = 0;
    for (; n < program.insns.size(); ++n) {
        const union tpu_insn &insn = program.insns[n];
        const std::uint8_t op = insn.hdr.opcode;
        if (op == TPU_OP_HALT)
            break;
        if (op == TPU_OP_SEND || op == TPU_OP_RECV)
            throw Error(ErrorCode::Unsupported,
                        "captured program " + std::to_string(index) +
                            " sends or receives over a link: collectives cannot be captured "
                            "(queue them outside begin_capture() / end_capture())");
        if (op == TPU_OP_LOAD_W)
            weight_cols = (insn.hdr.flags & TPU_F_W_HOST) ? insn.dma.cols : insn.mxu.cols;
        add_access(insn, weight_cols, f);
    }
    return {program.insns.data(), n};
}

// Zeros over [begin, end) of the unified buffer (4-byte aligned): int32 x - x, which wraps, so
// it is 0 for every bit pattern, in rows of up to 16384 words (128 elements a cycle).
void clear_ub(ProgramBuilder &b, std::uint64_t begin, std::uint64_t end) {
    constexpr std::uint64_t row_words = 16384;
    while (begin < end) {
        const std::uint64_t words = (end - begin) / 4;
        const std::uint64_t cols = std::min(words, row_words);
        const std::uint64_t rows = std::min<std::uint64_t>(words / cols, 65535);
        const auto addr = static_cast<std::uint32_t>(begin);
        const auto stride = static_cast<std::uint32_t>(4 * cols);
        b.vector({.type = DType::Int32,
                  .op = VectorOp::Sub,
                  .a_addr = addr,
                  .a_stride = stride,
                  .b_addr = addr,
                  .b_stride = stride,
                  .dst_addr = addr,
                  .dst_stride = stride,
                  .rows = static_cast<std::uint32_t>(rows),
                  .cols = static_cast<std::uint32_t>(cols)});
        begin += rows * 4 * cols;
    }
}

// Zeros over [begin, end) of the accumulators (4-byte aligned): MATMULs of zero activations
// through a zero 1 x N tile, both read from the unified buffer at 0 (the caller makes
// [0, ub_zeros_needed()) zero first), one accumulator row of N per activation row.
struct AccClear {
    std::uint64_t n, rows;
};
std::vector<std::pair<std::uint64_t, AccClear>> plan_acc(std::uint64_t begin, std::uint64_t end,
                                                         const FusionTarget &t) {
    std::vector<std::pair<std::uint64_t, AccClear>> steps;
    while (begin < end) {
        const std::uint64_t words = (end - begin) / 4;
        const std::uint64_t n = std::min<std::uint64_t>(words, t.limits.mxu_cols);
        const std::uint64_t rows = std::min<std::uint64_t>(words / n, 65535);
        steps.push_back({begin, {n, rows}});
        begin += rows * 4 * n;
    }
    return steps;
}

void clear_acc(ProgramBuilder &b, const std::vector<std::pair<std::uint64_t, AccClear>> &steps,
               const FusionTarget &t) {
    const std::uint64_t size = element_size(t.zero_type);
    std::uint64_t loaded = 0;
    for (const auto &[at, s] : steps) {
        if (s.n != loaded)
            b.load_weights(WeightLoad{.type = t.zero_type,
                                      .src_addr = 0,
                                      .src_stride = static_cast<std::uint32_t>(s.n * size),
                                      .rows = 1,
                                      .cols = static_cast<std::uint32_t>(s.n)});
        loaded = s.n;
        b.matmul({.type = t.zero_type,
                  .src_addr = 0,
                  .src_stride = static_cast<std::uint32_t>(size),
                  .rows = static_cast<std::uint32_t>(s.rows),
                  .cols = 1,
                  .acc_addr = static_cast<std::uint32_t>(at),
                  .acc_stride = static_cast<std::uint32_t>(4 * s.n)});
    }
}

// `r` widened to 4-byte boundaries within [0, limit), ranges less than `gap` apart joined
// (zeroing more than needed is harmless: a job starts with every byte zero).
Ranges widened(const Ranges &r, std::uint64_t limit, std::uint64_t gap) {
    Ranges w;
    for (const auto &[begin, end] : r.ranges())
        w.add(begin & ~std::uint64_t{3}, std::min((end + 3) & ~std::uint64_t{3}, limit));
    Ranges joined;
    std::uint64_t b = 0, e = 0;
    for (const auto &[begin, end] : w.ranges()) {
        if (e != 0 && begin - e < gap) {
            e = end;
            continue;
        }
        joined.add(b, e);
        b = begin;
        e = end;
    }
    joined.add(b, e);
    return joined;
}

// The reset before a program that needs `next` zero, after programs that left `dirty`; updates
// `dirty` to what stays written.
Program reset(Footprint &dirty, const Footprint &next, const FusionTarget &t) {
    constexpr std::uint64_t gap = 4096;
    Ranges ub = widened(dirty.ub.written.intersection(next.ub.needs_zero), t.limits.ub_bytes, gap);
    const Ranges acc =
        widened(dirty.acc.written.intersection(next.acc.needs_zero), t.limits.acc_bytes, gap);
    std::vector<std::pair<std::uint64_t, AccClear>> acc_steps;
    for (const auto &[begin, end] : acc.ranges())
        for (const auto &step : plan_acc(begin, end, t))
            acc_steps.push_back(step);
    if (!acc_steps.empty()) { // the zero activations and tile the MATMULs read
        std::uint64_t area = 0;
        for (const auto &[at, s] : acc_steps)
            area = std::max(area, std::max(s.rows, s.n) * element_size(t.zero_type));
        Ranges read;
        read.add(0, area);
        const Ranges dirty_read =
            widened(dirty.ub.written.intersection(read), t.limits.ub_bytes, gap);
        for (const auto &[begin, end] : dirty_read.ranges())
            ub.add(begin, end);
    }
    ProgramBuilder b;
    b.sync();
    for (const auto &[begin, end] : ub.ranges())
        clear_ub(b, begin, end);
    clear_acc(b, acc_steps, t);
    dirty.ub.written.subtract(ub);
    dirty.acc.written.subtract(acc);
    return b.finish();
}

} // namespace

std::vector<Program> fuse_programs(std::span<const Program> programs, const FusionTarget &target) {
    const std::size_t max_insns = target.max_program_bytes / TPU_INSN_SIZE;
    const auto halt = [](Program &p) {
        union tpu_insn end = {};
        end.hdr.opcode = TPU_OP_HALT;
        p.insns.push_back(end);
    };
    std::vector<Program> jobs;
    Program current;
    Footprint dirty; // what the current job's programs may have left on chip
    for (std::size_t i = 0; i < programs.size(); ++i) {
        Footprint next;
        const std::span<const union tpu_insn> insns = body(programs[i], i, next);
        if (!current.insns.empty()) {
            Footprint after = dirty;
            const Program r = reset(after, next, target);
            // The reset, the program and a HALT must fit; else this program starts a job.
            if (current.insns.size() + r.insns.size() + insns.size() + 1 <= max_insns) {
                current.insns.insert(current.insns.end(), r.insns.begin(), r.insns.end());
                dirty = std::move(after);
            } else {
                halt(current);
                jobs.push_back(std::move(current));
                current = Program{};
                dirty = Footprint{};
            }
        }
        current.insns.insert(current.insns.end(), insns.begin(), insns.end());
        for (const auto &[begin, end] : next.ub.written.ranges())
            dirty.ub.written.add(begin, end);
        for (const auto &[begin, end] : next.acc.written.ranges())
            dirty.acc.written.add(begin, end);
    }
    if (!current.insns.empty() || jobs.empty()) {
        halt(current);
        jobs.push_back(std::move(current));
    }
    return jobs;
}

} // namespace tpurt::detail
