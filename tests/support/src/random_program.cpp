// SPDX-License-Identifier: MIT
// The random valid program generator: small random shapes placed at aligned offsets that fit,
// weights tracked so every MATMUL matches the last LOAD_W.
#include "tpu_test/random_program.hpp"

#include <algorithm>
#include <bit>

namespace tpu::test {
namespace {

uint32_t elem_bytes(uint8_t dtype) {
    return dtype == TPU_DT_INT8 ? 1 : dtype == TPU_DT_BF16 ? 2 : 4;
}

uint64_t round_up(uint64_t x, uint64_t align) {
    return (x + align - 1) / align * align;
}

// rows of row_bytes, stride apart, at addr.
struct Placement {
    uint32_t addr = 0;
    uint32_t stride = 0;
};

class Generator {
  public:
    Generator(Dice &dice, const ProgramLimits &lim) : d_(dice), lim_(lim) {}

    Program run() {
        const uint64_t count = 1 + d_.below(lim_.max_instructions);
        while (p_.size() < count)
            add_one();
        p_.push_back(dma_out(TPU_DT_INT32, 1, uint16_t(lim_.ub_bytes / 4), lim_.dump_va, 0, 0, 0));
        p_.push_back(dma_out_acc(TPU_DT_INT32, 1, uint16_t(lim_.acc_bytes / 4),
                                 lim_.dump_va + lim_.ub_bytes, 0, 0, 0));
        p_.push_back(halt());
        return p_;
    }

  private:
    uint16_t dim(uint64_t max) { return uint16_t(1 + d_.below(max)); }
    uint8_t dtype() { return uint8_t(d_.below(4)); }
    uint8_t mxu_dtype() {
        static constexpr uint8_t kTypes[] = {TPU_DT_INT8, TPU_DT_BF16, TPU_DT_FP32};
        return kTypes[d_.below(3)];
    }

    // A stride for rows of row_bytes: at least a row, or (overlap) anything below it, 0 too.
    uint32_t stride(uint64_t row_bytes, uint32_t align, bool overlap) {
        if (overlap && d_.chance(10))
            return uint32_t(align * d_.below(row_bytes / align));
        return uint32_t(round_up(row_bytes, align) + align * d_.below(3));
    }

    // Places rows x row_bytes (stride given) in a buffer of size bytes at an aligned offset;
    // false if it does not fit.
    bool place(uint64_t size, uint32_t align, uint32_t rows, uint64_t row_bytes, uint32_t stride,
               Placement *out) {
        uint64_t total = (rows - 1) * uint64_t(stride) + row_bytes;
        if (total > size)
            return false;
        *out = Placement{uint32_t(align * d_.below((size - total) / align + 1)), stride};
        return true;
    }

    bool place_ub(uint32_t elem, uint32_t rows, uint64_t row_bytes, bool overlap, Placement *out) {
        return place(lim_.ub_bytes, elem, rows, row_bytes, stride(row_bytes, elem, overlap), out);
    }

    // Host rows in [base, base + bytes).
    bool place_host(uint64_t base, uint64_t bytes, uint32_t rows, uint64_t row_bytes,
                    uint64_t *addr, uint32_t *host_stride) {
        *host_stride = uint32_t(row_bytes + d_.below(16));
        uint64_t total = (rows - 1) * uint64_t(*host_stride) + row_bytes;
        if (total > bytes)
            return false;
        *addr = base + d_.below(bytes - total + 1);
        return true;
    }

    void add(const tpu_insn &i) { p_.push_back(i); }

    void add_one() {
        switch (d_.below(14)) {
        case 0:
        case 1:
            return dma_in_one();
        case 2:
            return dma_out_one();
        case 3:
        case 4:
            return load_w_one();
        case 5:
        case 6:
            return matmul_one();
        case 7:
            return activate_one();
        case 8:
            return vector_one();
        case 9:
            return reduce_one();
        case 10:
            return pool_one();
        case 11:
            return transpose_one();
        case 12:
            return add(d_.chance(50) ? sync_insn() : nop());
        default: {
            const uint32_t tag = uint32_t(d_.next());
            return add(timestamp(tag, lim_.output_va + 8 * d_.below(lim_.output_bytes / 8 - 1)));
        }
        }
    }

    void dma_in_one() {
        uint8_t dt = dtype();
        uint32_t e = elem_bytes(dt);
        uint16_t rows = dim(8), cols = dim(32);
        Placement ub;
        uint64_t host;
        uint32_t hs;
        if (place_ub(e, rows, cols * e, true, &ub) &&
            place_host(lim_.input_va, lim_.input_bytes, rows, cols * e, &host, &hs))
            add(dma_in(dt, rows, cols, host, hs, ub.addr, ub.stride));
    }

    void dma_out_one() {
        bool from_acc = d_.chance(40);
        uint8_t dt = from_acc ? uint8_t(d_.chance(50) ? TPU_DT_INT32 : TPU_DT_FP32) : dtype();
        uint32_t e = elem_bytes(dt);
        uint16_t rows = dim(8), cols = dim(32);
        Placement local;
        uint64_t host;
        uint32_t hs;
        uint64_t size = from_acc ? lim_.acc_bytes : lim_.ub_bytes;
        if (place(size, e, rows, cols * e, stride(cols * e, e, true), &local) &&
            place_host(lim_.output_va, lim_.output_bytes, rows, cols * e, &host, &hs))
            add(from_acc ? dma_out_acc(dt, rows, cols, host, hs, local.addr, local.stride)
                         : dma_out(dt, rows, cols, host, hs, local.addr, local.stride));
    }

    void load_w_one() {
        uint8_t dt = mxu_dtype();
        uint32_t e = elem_bytes(dt);
        uint16_t k = dim(lim_.mxu_rows), n = dim(lim_.mxu_cols);
        uint16_t flags = d_.chance(30) ? TPU_F_W_TRANSPOSE : 0;
        uint32_t rows = flags ? n : k;
        uint64_t row_bytes = uint64_t(flags ? k : n) * e;
        if (d_.chance(30)) {
            uint64_t host;
            uint32_t hs;
            if (!place_host(lim_.input_va, lim_.input_bytes, rows, row_bytes, &host, &hs))
                return;
            add(load_w_host(dt, k, n, host, hs, flags));
        } else {
            Placement ub;
            if (!place_ub(e, rows, row_bytes, true, &ub))
                return;
            add(load_w(dt, k, n, ub.addr, ub.stride, flags));
        }
        weights_ = true;
        w_dtype_ = dt;
        w_k_ = k;
        w_n_ = n;
    }

    void matmul_one() {
        if (!weights_)
            return load_w_one();
        const uint32_t e = elem_bytes(w_dtype_);
        const uint16_t m = dim(12);
        const uint16_t group = d_.chance(40) ? dim(m) : 0;
        const uint32_t ss = w_k_ * e + e * uint32_t(d_.below(2));
        uint32_t gs = 0;
        if (group)
            gs = d_.chance(20) ? e * uint32_t(d_.below(4)) : group * ss + e * uint32_t(d_.below(3));
        // One past the last byte read, from offset 0, group by group.
        const uint32_t g = group ? group : m;
        uint64_t span = 0;
        for (uint32_t first = 0; first < m; first += g)
            span = std::max(span, uint64_t(first / g) * gs +
                                      (std::min<uint32_t>(g, m - first) - 1) * uint64_t(ss) +
                                      w_k_ * e);
        if (span > lim_.ub_bytes)
            return;
        uint32_t src = uint32_t(e * d_.below((lim_.ub_bytes - span) / e + 1));
        Placement acc;
        if (!place(lim_.acc_bytes, 4, m, 4 * w_n_, stride(4 * w_n_, 4, true), &acc))
            return;
        uint16_t flags = d_.chance(50) ? TPU_F_ACCUMULATE : 0;
        add(matmul_grouped(w_dtype_, m, w_k_, src, ss, group, gs, acc.addr, acc.stride, flags));
    }

    float scale() {
        static constexpr float kScales[] = {1.0f, 0.5f, -2.0f, 1.0f / 64, 3.0e-3f, 100.0f};
        return kScales[d_.below(6)];
    }

    void activate_one() {
        uint8_t dt = dtype();
        uint32_t e = elem_bytes(dt);
        uint16_t rows = dim(8), cols = dim(16);
        uint16_t flags = uint16_t(d_.below(TPU_ACT_ERF + 1));
        if (d_.chance(50))
            flags |= TPU_F_ACT_SRC_INT32;
        Placement acc, dst, bias{};
        if (!place(lim_.acc_bytes, 4, rows, 4 * cols, stride(4 * cols, 4, false), &acc) ||
            !place_ub(e, rows, cols * e, false, &dst))
            return;
        if (d_.chance(50)) {
            if (!place(lim_.ub_bytes, 4, 1, 4 * cols, 0, &bias))
                return;
            flags |= TPU_F_ACT_BIAS;
        }
        add(activate(dt, flags, rows, cols, acc.addr, acc.stride, dst.addr, dst.stride, bias.addr,
                     scale()));
    }

    void vector_one() {
        uint8_t dt = dtype();
        uint32_t e = elem_bytes(dt);
        uint16_t rows = dim(8), cols = dim(16);
        Placement a, b, dst;
        if (!place_ub(e, rows, cols * e, true, &a) || !place_ub(e, rows, cols * e, true, &b) ||
            !place_ub(e, rows, cols * e, true, &dst))
            return;
        uint16_t flags = uint16_t(d_.below(TPU_VOP_EQ + 1));
        if (d_.chance(25))
            flags |= TPU_F_VEC_B_COL; // b's first column: within b's placement
        add(vector(dt, flags, rows, cols, a.addr, a.stride, b.addr, b.stride, dst.addr,
                   dst.stride));
    }

    void reduce_one() {
        uint8_t dt = dtype();
        uint32_t e = elem_bytes(dt);
        uint16_t op = uint16_t(d_.below(2));
        uint32_t out = op == TPU_ROP_SUM ? 4 : e;
        uint16_t rows = dim(8), cols = dim(32);
        Placement a, dst;
        if (!place_ub(e, rows, cols * e, true, &a) || !place_ub(out, rows, out, true, &dst))
            return;
        add(reduce(dt, op, rows, cols, a.addr, a.stride, dst.addr, dst.stride));
    }

    void pool_one() {
        uint8_t dt = dtype();
        uint32_t e = elem_bytes(dt);
        PoolShape s;
        s.out_h = dim(4);
        s.out_w = dim(4);
        s.channels = dim(3);
        s.win_h = uint8_t(dim(3));
        s.win_w = uint8_t(dim(3));
        s.stride_h = uint8_t(dim(2));
        s.stride_w = uint8_t(dim(2));
        uint32_t in_h = (s.out_h - 1) * s.stride_h + s.win_h;
        uint32_t in_w = (s.out_w - 1) * s.stride_w + s.win_w;
        Placement src, dst;
        if (!place_ub(e, in_h, uint64_t(in_w) * s.channels * e, false, &src) ||
            !place_ub(e, s.out_h, uint64_t(s.out_w) * s.channels * e, true, &dst))
            return;
        add(pool(dt, uint16_t(d_.below(2)), s, src.addr, src.stride, dst.addr, dst.stride));
    }

    void transpose_one() {
        uint8_t dt = dtype();
        uint32_t e = elem_bytes(dt);
        uint16_t rows = dim(8), cols = dim(8);
        Placement a, dst;
        if (!place_ub(e, rows, cols * e, true, &a) || !place_ub(e, cols, rows * e, true, &dst))
            return;
        add(transpose(dt, rows, cols, a.addr, a.stride, dst.addr, dst.stride));
    }

    Dice &d_;
    const ProgramLimits &lim_;
    Program p_;
    bool weights_ = false;
    uint8_t w_dtype_ = 0;
    uint16_t w_k_ = 0, w_n_ = 0;
};

} // namespace

uint64_t ByteDice::next() {
    uint64_t v = 0;
    for (int i = 0; i < 2 && pos_ < size_; i++)
        v = v << 8 | data_[pos_++];
    return v;
}

Program random_program(Dice &dice, const ProgramLimits &limits) {
    return Generator(dice, limits).run();
}

Program random_program(uint64_t seed, const ProgramLimits &limits) {
    SeededDice dice(seed);
    return random_program(dice, limits);
}

} // namespace tpu::test
