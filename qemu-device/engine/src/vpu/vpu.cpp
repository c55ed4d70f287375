// SPDX-License-Identifier: MIT
// Vector unit execution: element loops over the unified buffer with the per-dtype arithmetic of
// vpu_math. Integer results saturate (INT8) or wrap (INT32); floating-point results that are
// NaN are stored as the canonical quiet NaN.
#include "vpu/vpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "isa/decode_checks.hpp"
#include "vpu/host_clones.hpp"
#include "vpu/vpu_math.hpp"
#include "vpu/vpu_split.hpp"

namespace tpu::engine::vpu {
namespace {

using namespace vpu_math;

template <class T> T load(const uint8_t *p) {
    T v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

template <class T> void store(uint8_t *p, T v) {
    std::memcpy(p, &v, sizeof(v));
}

// Address of element (r, c) of an extent holding elements of elem bytes.
uint8_t *at(uint8_t *buf, const Extent2D &e, uint64_t r, uint64_t c, uint32_t elem) {
    return buf + e.addr + r * e.stride + c * elem;
}

bool is_float(uint8_t dtype) {
    return dtype == TPU_DT_BF16 || dtype == TPU_DT_FP32;
}

float load_float(uint8_t dtype, const uint8_t *p) {
    return dtype == TPU_DT_BF16 ? from_bf16(load<uint16_t>(p)) : load<float>(p);
}

// float results of a BF16 / FP32 operation (bf16 rounded to nearest even).
void store_float(uint8_t dtype, uint8_t *p, float x) {
    if (dtype == TPU_DT_BF16)
        store(p, to_bf16(x));
    else
        store(p, to_fp32_bits(x));
}

int32_t load_int(uint8_t dtype, const uint8_t *p) {
    return dtype == TPU_DT_INT8 ? int32_t(load<int8_t>(p)) : load<int32_t>(p);
}

// Integer results: INT8 saturates, INT32 keeps the low 32 bits (the caller wrapped already).
void store_int(uint8_t dtype, uint8_t *p, int64_t x) {
    if (dtype == TPU_DT_INT8)
        store(p, int8_t(x < -128 ? -128 : (x > 127 ? 127 : x)));
    else
        store(p, int32_t(uint32_t(uint64_t(x))));
}

bool stop_requested(const std::atomic<bool> &abort) {
    return abort.load(std::memory_order_relaxed);
}

// Larger / smaller of a and b, a when they compare equal, NaN if either is NaN.
float max_of(float a, float b) {
    if (is_nan(a) || is_nan(b))
        return NAN;
    return b > a ? b : a;
}

float min_of(float a, float b) {
    if (is_nan(a) || is_nan(b))
        return NAN;
    return b < a ? b : a;
}

// INT8 operands give exact results (saturated on store); INT32 wraps modulo 2^32.
int64_t int_op(uint8_t dtype, uint8_t op, int32_t a, int32_t b) {
    const bool wrap = dtype == TPU_DT_INT32;
    const uint32_t ua = uint32_t(a), ub = uint32_t(b);
    switch (op) {
    case TPU_VOP_ADD:
        return wrap ? int32_t(ua + ub) : int64_t(a) + b;
    case TPU_VOP_SUB:
        return wrap ? int32_t(ua - ub) : int64_t(a) - b;
    case TPU_VOP_MUL:
        return wrap ? int32_t(ua * ub) : int64_t(a) * b;
    case TPU_VOP_MAX:
        return a > b ? a : b;
    case TPU_VOP_MIN:
        return a < b ? a : b;
    case TPU_VOP_DIV: // truncated toward zero; x / 0 = 0; INT32_MIN / -1 wraps
        if (b == 0)
            return 0;
        return wrap && b == -1 ? int32_t(0u - ua) : int64_t(a) / b;
    case TPU_VOP_GATE:
        return a > 0 ? b : 0;
    case TPU_VOP_GT:
        return a > b ? 1 : 0;
    default: // TPU_VOP_EQ
        return a == b ? 1 : 0;
    }
}

// f(op) with op the float operation of opcode `code` as a function object of its own type, so
// that each element loop below is compiled for one operation.
template <class F> bool with_float_op(uint8_t code, F f) {
    switch (code) {
    case TPU_VOP_ADD:
        return f([](float a, float b) { return a + b; });
    case TPU_VOP_SUB:
        return f([](float a, float b) { return a - b; });
    case TPU_VOP_MUL:
        return f([](float a, float b) { return a * b; });
    case TPU_VOP_DIV:
        return f([](float a, float b) { return a / b; });
    case TPU_VOP_MAX:
        return f([](float a, float b) { return max_of(a, b); });
    case TPU_VOP_MIN:
        return f([](float a, float b) { return min_of(a, b); });
    case TPU_VOP_GATE:
        return f([](float a, float b) { return a > 0.0f ? b : 0.0f; });
    case TPU_VOP_GT:
        return f([](float a, float b) { return a > b ? 1.0f : 0.0f; });
    default: // TPU_VOP_EQ
        return f([](float a, float b) { return a == b ? 1.0f : 0.0f; });
    }
}

// f(op) with op the INT32 operation of opcode `code` (int_op's, wrapping modulo 2^32) as a
// function object of its own type, as with_float_op does for floats.
template <class F> bool with_int32_op(uint8_t code, F f) {
    switch (code) {
    case TPU_VOP_ADD:
        return f([](int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); });
    case TPU_VOP_SUB:
        return f([](int32_t a, int32_t b) { return int32_t(uint32_t(a) - uint32_t(b)); });
    case TPU_VOP_MUL:
        return f([](int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); });
    case TPU_VOP_MAX:
        return f([](int32_t a, int32_t b) { return a > b ? a : b; });
    case TPU_VOP_MIN:
        return f([](int32_t a, int32_t b) { return a < b ? a : b; });
    case TPU_VOP_GATE:
        return f([](int32_t a, int32_t b) { return a > 0 ? b : 0; });
    case TPU_VOP_GT:
        return f([](int32_t a, int32_t b) { return int32_t(a > b); });
    case TPU_VOP_DIV: // int_op's edge cases: x / 0 = 0, INT32_MIN / -1 wraps
        return f(
            [](int32_t a, int32_t b) { return int32_t(int_op(TPU_DT_INT32, TPU_VOP_DIV, a, b)); });
    default: // TPU_VOP_EQ
        return f([](int32_t a, int32_t b) { return int32_t(a == b); });
    }
}

// FP32, BF16 and INT32 VECTOR rows go in chunks of this many elements: a chunk's operands are
// all loaded before any of its results is stored (a loop the compiler vectorises).
constexpr uint32_t kVectorChunk = 64;

// Whether the byte ranges [p, p + p_len) and [q, q + q_len) share no byte.
bool apart(uint64_t p, uint64_t p_len, uint64_t q, uint64_t q_len) {
    return p + p_len <= q || q + q_len <= p;
}

// Whether writing dst[0, len) a chunk at a time gives what writing it element by element does
// for an operand at src[0, src_len) (len, or one element read for every column): dst at or below
// a full-length operand (an element is then overwritten only after it was read), or apart from it.
bool chunk_safe(const uint8_t *dst, uint64_t len, const uint8_t *src, uint64_t src_len) {
    return (src_len == len && dst <= src) || apart(uintptr_t(dst), len, uintptr_t(src), src_len);
}

// An element of Dtype (FP32, BF16: as float; INT32) loaded and stored.
template <uint8_t Dtype> auto load_value(const uint8_t *p) {
    if constexpr (Dtype == TPU_DT_INT32)
        return load<int32_t>(p);
    else
        return load_float(Dtype, p);
}

template <uint8_t Dtype, class T> void store_value(uint8_t *p, T x) {
    if constexpr (Dtype == TPU_DT_INT32)
        store(p, x);
    else
        store_float(Dtype, p, x);
}

// dst[i] = op(a[i], b[i]) (b[0] for every i if b_scalar) over n <= kVectorChunk elements of
// Dtype (FP32, BF16 or INT32), all operands read before any result is stored.
template <uint8_t Dtype, class Op>
TPU_HOST_CLONES void chunk(const uint8_t *a, const uint8_t *b, bool b_scalar, uint8_t *dst,
                           uint32_t n, Op op) {
    constexpr uint32_t elem = Dtype == TPU_DT_BF16 ? 2 : 4;
    using T = decltype(load_value<Dtype>(nullptr));
    T x[kVectorChunk], y[kVectorChunk];
    for (size_t i = 0; i < n; i++)
        x[i] = load_value<Dtype>(a + elem * i);
    if (b_scalar) {
        const T v = load_value<Dtype>(b);
        for (size_t i = 0; i < n; i++)
            x[i] = op(x[i], v);
    } else {
        for (size_t i = 0; i < n; i++)
            y[i] = load_value<Dtype>(b + elem * i);
        for (size_t i = 0; i < n; i++)
            x[i] = op(x[i], y[i]);
    }
    for (size_t i = 0; i < n; i++)
        store_value<Dtype>(dst + elem * i, x[i]);
}

// Columns [c0, c1) of VECTOR's row r (of its rows as vector_rows counts them) a chunk at a time.
template <uint8_t Dtype, class Op>
void chunked_row(const VectorInsn &insn, uint8_t *ub, uint64_t r, uint64_t c0, uint64_t c1, Op op) {
    constexpr uint32_t elem = Dtype == TPU_DT_BF16 ? 2 : 4;
    const uint64_t b_step = insn.b_col ? 0 : elem;
    const uint8_t *a = at(ub, insn.a, r, 0, elem);
    const uint8_t *b = at(ub, insn.b, r, 0, elem);
    uint8_t *dst = at(ub, insn.dst, r, 0, elem);
    for (uint64_t c = c0; c < c1; c += kVectorChunk) {
        const auto n = uint32_t(std::min<uint64_t>(kVectorChunk, c1 - c));
        chunk<Dtype>(a + elem * c, b + b_step * c, insn.b_col, dst + elem * c, n, op);
    }
}

// Whether every element of dst is computed from the elements of src at its own place alone (src
// is dst, element for element, or apart from it; a one-column src must be apart), with dst's
// rows apart from each other.
bool own_elements(const Extent2D &dst, const Extent2D &src, bool one_column) {
    if (dst.rows > 1 && dst.stride < dst.row_bytes)
        return false;
    if (!one_column && src.addr == dst.addr && src.stride == dst.stride)
        return true;
    return apart(src.addr, src.end() - src.addr, dst.addr, dst.end() - dst.addr);
}

// VECTOR's element loop, row by row and in ascending columns (an operand may overlap the
// destination): Dtype TPU_DT_FP32 or TPU_DT_BF16 with op a float operation, TPU_DT_INT32 with op
// an INT32 one (with_int32_op), else (TPU_DT_INT8) integers with op an int_op. FP32, BF16 and
// INT32 rows whose operands cannot see a result of the same row (chunk_safe) go a chunk at a time.
//
// Split over pool (vpu_split.hpp) when large and every operand is the destination itself or
// apart from it, with the destination's rows apart: each result then depends on its own
// operands alone.
template <uint8_t Dtype, class Op>
bool vector_rows(const VectorInsn &insn, uint8_t *ub, const std::atomic<bool> &abort,
                 ThreadPool *pool, Op op) {
    constexpr bool kFloat = Dtype == TPU_DT_FP32 || Dtype == TPU_DT_BF16;
    constexpr bool kChunked = kFloat || Dtype == TPU_DT_INT32;
    const uint32_t elem = dtype_bytes(insn.dtype);
    const uint64_t b_step = insn.b_col ? 0 : elem;
    // Dense rows (b dense too, or one value for all) are one row: the same elements in the
    // same order.
    uint64_t rows = insn.rows, cols = insn.cols;
    const uint64_t row = elem * cols;
    if (rows > 1 && insn.a.stride == row && insn.dst.stride == row &&
        (insn.b_col ? insn.b.stride == 0 : insn.b.stride == row)) {
        cols *= rows;
        rows = 1;
    }
    if constexpr (kChunked) {
        if (worth_splitting(pool, rows, cols) && own_elements(insn.dst, insn.a, false) &&
            own_elements(insn.dst, insn.b, insn.b_col)) {
            return run_split(*pool, abort, rows, cols,
                             [&](uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) {
                                 for (uint64_t r = r0; r < r1; r++)
                                     chunked_row<Dtype>(insn, ub, r, c0, c1, op);
                             });
        }
    }
    for (uint64_t r = 0; r < rows; r++) {
        if (stop_requested(abort))
            return false;
        const uint8_t *a = at(ub, insn.a, r, 0, elem);
        const uint8_t *b = at(ub, insn.b, r, 0, elem);
        uint8_t *dst = at(ub, insn.dst, r, 0, elem);
        if constexpr (kChunked) {
            const uint64_t bytes = elem * cols;
            if (chunk_safe(dst, bytes, a, bytes) &&
                chunk_safe(dst, bytes, b, insn.b_col ? elem : bytes)) {
                chunked_row<Dtype>(insn, ub, r, 0, cols, op);
                continue;
            }
        }
        for (uint64_t c = 0; c < cols; c++, a += elem, b += b_step, dst += elem) {
            if constexpr (kChunked)
                store_value<Dtype>(dst, op(load_value<Dtype>(a), load_value<Dtype>(b)));
            else
                store_int(insn.dtype, dst, op(load_int(insn.dtype, a), load_int(insn.dtype, b)));
        }
    }
    return true;
}

// ACTIVATE goes a row at a time in chunks of this many values, each step one loop over the
// chunk (which the compiler vectorises): the accumulators converted to fp32, + bias, x scale,
// ReLU or none inline (any other function per value through vpu_math), conversion and store.
constexpr uint32_t kActivateChunk = 256;

template <bool Int32, bool Bias, uint8_t Func>
TPU_HOST_CLONES void activate_values(const uint8_t *src, const uint8_t *bias, float scale, float *x,
                                     uint32_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = Int32 ? float(load<int32_t>(src + 4 * i)) : load<float>(src + 4 * i);
        if constexpr (Bias)
            v = v + load<float>(bias + 4 * i);
        v = v * scale;
        // ReLU: NaN passes, -0 and below give +0 (one compare and select, so the loop
        // vectorises).
        if constexpr (Func == TPU_ACT_RELU)
            v = v <= 0.0f ? 0.0f : v;
        x[i] = v;
    }
}

using ActivateValues = void (*)(const uint8_t *, const uint8_t *, float, float *, uint32_t);

struct ActivateSteps {
    ActivateValues values;
    bool other_function; // neither NONE nor RELU: vpu_math::activate per value afterwards
};

template <bool Int32, bool Bias> ActivateSteps steps_for(uint8_t func) {
    if (func == TPU_ACT_RELU)
        return {activate_values<Int32, Bias, TPU_ACT_RELU>, false};
    return {activate_values<Int32, Bias, TPU_ACT_NONE>, func != TPU_ACT_NONE};
}

ActivateSteps activate_steps(const ActivateInsn &insn) {
    if (insn.src_int32)
        return insn.bias ? steps_for<true, true>(insn.func) : steps_for<true, false>(insn.func);
    return insn.bias ? steps_for<false, true>(insn.func) : steps_for<false, false>(insn.func);
}

TPU_HOST_CLONES void store_values(uint8_t dtype, const float *x, uint8_t *dst, uint32_t n) {
    switch (dtype) {
    case TPU_DT_INT8:
        for (size_t i = 0; i < n; i++)
            store(dst + i, to_int8(x[i]));
        break;
    case TPU_DT_INT32:
        for (size_t i = 0; i < n; i++)
            store(dst + 4 * i, to_int32(x[i]));
        break;
    case TPU_DT_BF16:
        for (size_t i = 0; i < n; i++)
            store(dst + 2 * i, to_bf16(x[i]));
        break;
    default:
        for (size_t i = 0; i < n; i++)
            store(dst + 4 * i, to_fp32_bits(x[i]));
        break;
    }
}

// dst (c, r) = a (r, c) for elements of type T, rows [r0, r1) and columns [c0, c1).
template <class T>
TPU_HOST_CLONES void transpose_block(const TransposeInsn &insn, uint8_t *ub, uint64_t r0,
                                     uint64_t r1, uint64_t c0, uint64_t c1) {
    for (uint64_t c = c0; c < c1; c++) {
        uint8_t *out = at(ub, insn.dst, c, r0, sizeof(T));
        for (uint64_t r = r0; r < r1; r++, out += sizeof(T))
            store(out, load<T>(at(ub, insn.a, r, c, sizeof(T))));
    }
}

// dst (c, r) = a (r, c) for elements of type T, a block of rows at a time (an abort stops it
// between blocks; a large one is split over pool, vpu_split.hpp); a and dst apart.
template <class T>
bool transpose_apart(const TransposeInsn &insn, uint8_t *ub, const std::atomic<bool> &abort,
                     ThreadPool *pool) {
    constexpr uint32_t kBlock = 16;
    // Two rows into dense pairs (how libtpurt widens bf16 to fp32: a row of zeros and a row of
    // values) in one interleaving loop, kBlock * kBlock pairs between abort checks.
    if (insn.rows == 2 && insn.dst.stride == 2 * sizeof(T)) {
        const uint8_t *lo = at(ub, insn.a, 0, 0, sizeof(T)), *hi = at(ub, insn.a, 1, 0, sizeof(T));
        uint8_t *out = at(ub, insn.dst, 0, 0, sizeof(T));
        for (uint32_t c0 = 0; c0 < insn.cols; c0 += kBlock * kBlock) {
            if (stop_requested(abort))
                return false;
            const uint32_t c1 = std::min(insn.cols, c0 + kBlock * kBlock);
            for (uint32_t c = c0; c < c1; c++) {
                store(out + 2 * sizeof(T) * c, load<T>(lo + sizeof(T) * c));
                store(out + 2 * sizeof(T) * c + sizeof(T), load<T>(hi + sizeof(T) * c));
            }
        }
        return true;
    }
    auto blocks = [&](uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) {
        for (uint64_t r = r0; r < r1; r += kBlock)
            transpose_block<T>(insn, ub, r, std::min<uint64_t>(r1, r + kBlock), c0, c1);
    };
    if (worth_splitting(pool, insn.rows, insn.cols))
        return run_split(*pool, abort, insn.rows, insn.cols, blocks);
    for (uint32_t r0 = 0; r0 < insn.rows; r0 += kBlock) {
        if (stop_requested(abort))
            return false;
        blocks(r0, std::min(insn.rows, r0 + kBlock), 0, insn.cols);
    }
    return true;
}

// POOL of FP32 or BF16 with source and destination apart, so the order of output elements
// cannot matter: an output pixel's channels kPoolChunk at a time, each step one loop over them
// (which the compiler vectorises), each channel's window still in row-major order. An abort is
// seen between chunks.
constexpr uint32_t kPoolChunk = 64;

template <uint8_t Dtype>
TPU_HOST_CLONES bool pool_channels(const PoolInsn &insn, uint8_t *ub,
                                   const std::atomic<bool> &abort) {
    constexpr uint32_t elem = Dtype == TPU_DT_BF16 ? 2 : 4;
    const float count = float(insn.win_h * insn.win_w);
    float acc[kPoolChunk];
    for (uint64_t oy = 0; oy < insn.out_h; oy++) {
        for (uint64_t ox = 0; ox < insn.out_w; ox++) {
            uint8_t *dst = at(ub, insn.dst, oy, ox * insn.channels, elem);
            for (uint64_t c0 = 0; c0 < insn.channels; c0 += kPoolChunk) {
                if (stop_requested(abort))
                    return false;
                const auto n = uint32_t(std::min<uint64_t>(kPoolChunk, insn.channels - c0));
                auto in = [&](uint64_t i, uint64_t j) {
                    return at(ub, insn.src, oy * insn.stride_h + i,
                              (ox * insn.stride_w + j) * insn.channels + c0, elem);
                };
                const uint8_t *first = in(0, 0);
                for (size_t k = 0; k < n; k++)
                    acc[k] = load_value<Dtype>(first + elem * k);
                for (uint64_t i = 0; i < insn.win_h; i++) {
                    for (uint64_t j = i == 0 ? 1 : 0; j < insn.win_w; j++) {
                        const uint8_t *p = in(i, j);
                        if (insn.average)
                            for (size_t k = 0; k < n; k++)
                                acc[k] = acc[k] + load_value<Dtype>(p + elem * k);
                        else
                            for (size_t k = 0; k < n; k++)
                                acc[k] = max_of(acc[k], load_value<Dtype>(p + elem * k));
                    }
                }
                if (insn.average)
                    for (size_t k = 0; k < n; k++)
                        acc[k] = acc[k] / count;
                for (size_t k = 0; k < n; k++)
                    store_value<Dtype>(dst + elem * (c0 + k), acc[k]);
            }
        }
    }
    return true;
}

} // namespace

bool activate(const ActivateInsn &insn, const uint8_t *acc, uint8_t *ub,
              const std::atomic<bool> &abort, ThreadPool *pool) {
    const uint32_t elem = dtype_bytes(insn.dtype);
    const ActivateSteps steps = activate_steps(insn);
    const uint8_t *bias = insn.bias ? ub + insn.bias_addr : nullptr;
    // Rows dense on both sides (no bias) are one row; a bias the results overwrite is read
    // value by value, as the order of the steps defines.
    uint64_t rows = insn.rows, cols = insn.cols;
    if (!insn.bias && rows > 1 && insn.acc.stride == 4 * cols && insn.dst.stride == elem * cols) {
        cols *= rows;
        rows = 1;
    }
    const bool bias_overwritten = insn.bias && insn.bias_addr < insn.dst.end() &&
                                  insn.dst.addr < insn.bias_addr + 4 * uint64_t(insn.cols);
    const uint32_t chunk = bias_overwritten ? 1 : kActivateChunk;
    // Values [n0, n1) of row m, chunk at a time.
    auto run = [&](uint64_t m, uint64_t n0, uint64_t n1) {
        float x[kActivateChunk];
        const uint8_t *src = acc + insn.acc.addr + m * insn.acc.stride;
        uint8_t *dst = at(ub, insn.dst, m, 0, elem);
        for (; n0 < n1; n0 += chunk) {
            const auto n = uint32_t(std::min<uint64_t>(chunk, n1 - n0));
            steps.values(src + 4 * n0, bias ? bias + 4 * n0 : nullptr, insn.scale, x, n);
            if (steps.other_function)
                for (size_t i = 0; i < n; i++)
                    x[i] = vpu_math::activate(insn.func, x[i]);
            store_values(insn.dtype, x, dst + n0 * elem, n);
        }
    };
    // The accumulators and the unified buffer are apart: with the destination's rows apart and
    // the bias not overwritten, each result depends on its own operands alone.
    if (!bias_overwritten && (rows == 1 || insn.dst.stride >= insn.dst.row_bytes) &&
        worth_splitting(pool, rows, cols))
        return run_split(*pool, abort, rows, cols,
                         [&](uint64_t m0, uint64_t m1, uint64_t n0, uint64_t n1) {
                             for (uint64_t m = m0; m < m1; m++)
                                 run(m, n0, n1);
                         });
    for (uint64_t m = 0; m < rows; m++) {
        for (uint64_t n0 = 0; n0 < cols; n0 += chunk) {
            if (stop_requested(abort))
                return false;
            run(m, n0, std::min<uint64_t>(cols, n0 + chunk));
        }
    }
    return true;
}

bool vector(const VectorInsn &insn, uint8_t *ub, const std::atomic<bool> &abort, ThreadPool *pool) {
    switch (insn.dtype) {
    case TPU_DT_FP32:
        return with_float_op(
            insn.op, [&](auto op) { return vector_rows<TPU_DT_FP32>(insn, ub, abort, pool, op); });
    case TPU_DT_BF16:
        return with_float_op(
            insn.op, [&](auto op) { return vector_rows<TPU_DT_BF16>(insn, ub, abort, pool, op); });
    case TPU_DT_INT32:
        return with_int32_op(
            insn.op, [&](auto op) { return vector_rows<TPU_DT_INT32>(insn, ub, abort, pool, op); });
    default:
        return vector_rows<TPU_DT_INT8>(insn, ub, abort, pool, [&](int32_t a, int32_t b) {
            return int_op(insn.dtype, insn.op, a, b);
        });
    }
}

bool reduce(const ReduceInsn &insn, uint8_t *ub, const std::atomic<bool> &abort) {
    const uint32_t elem = dtype_bytes(insn.dtype);
    for (uint64_t r = 0; r < insn.rows; r++) {
        if (stop_requested(abort))
            return false;
        uint8_t *dst = at(ub, insn.dst, r, 0, 0);
        if (is_float(insn.dtype)) {
            float acc = load_float(insn.dtype, at(ub, insn.a, r, 0, elem));
            for (uint64_t c = 1; c < insn.cols; c++) {
                float x = load_float(insn.dtype, at(ub, insn.a, r, c, elem));
                acc = insn.op == TPU_ROP_SUM ? acc + x : max_of(acc, x);
            }
            if (insn.op == TPU_ROP_SUM)
                store(dst, to_fp32_bits(acc));
            else
                store_float(insn.dtype, dst, acc);
        } else {
            int32_t acc = load_int(insn.dtype, at(ub, insn.a, r, 0, elem));
            for (uint64_t c = 1; c < insn.cols; c++) {
                int32_t x = load_int(insn.dtype, at(ub, insn.a, r, c, elem));
                acc = insn.op == TPU_ROP_SUM ? int32_t(uint32_t(acc) + uint32_t(x))
                                             : (x > acc ? x : acc);
            }
            if (insn.op == TPU_ROP_SUM)
                store(dst, acc);
            else
                store_int(insn.dtype, dst, acc);
        }
    }
    return true;
}

bool pool(const PoolInsn &insn, uint8_t *ub, const std::atomic<bool> &abort) {
    const uint32_t elem = dtype_bytes(insn.dtype);
    if (is_float(insn.dtype) && apart(insn.src.addr, insn.src.end() - insn.src.addr, insn.dst.addr,
                                      insn.dst.end() - insn.dst.addr))
        return insn.dtype == TPU_DT_BF16 ? pool_channels<TPU_DT_BF16>(insn, ub, abort)
                                         : pool_channels<TPU_DT_FP32>(insn, ub, abort);
    const float count = float(insn.win_h * insn.win_w);
    for (uint64_t oy = 0; oy < insn.out_h; oy++) {
        for (uint64_t ox = 0; ox < insn.out_w; ox++) {
            for (uint64_t c = 0; c < insn.channels; c++) {
                if (stop_requested(abort))
                    return false;
                // Window element (i, j) of this output element, read in row-major order.
                auto in = [&](uint64_t i, uint64_t j) {
                    uint64_t x = ox * insn.stride_w + j;
                    return at(ub, insn.src, oy * insn.stride_h + i, x * insn.channels + c, elem);
                };
                uint8_t *dst = at(ub, insn.dst, oy, ox * insn.channels + c, elem);
                if (is_float(insn.dtype)) {
                    float acc = load_float(insn.dtype, in(0, 0));
                    for (uint64_t i = 0; i < insn.win_h; i++)
                        for (uint64_t j = i == 0 ? 1 : 0; j < insn.win_w; j++) {
                            float x = load_float(insn.dtype, in(i, j));
                            acc = insn.average ? acc + x : max_of(acc, x);
                        }
                    store_float(insn.dtype, dst, insn.average ? acc / count : acc);
                } else {
                    int32_t acc = load_int(insn.dtype, in(0, 0));
                    for (uint64_t i = 0; i < insn.win_h; i++)
                        for (uint64_t j = i == 0 ? 1 : 0; j < insn.win_w; j++) {
                            int32_t x = load_int(insn.dtype, in(i, j));
                            acc = insn.average ? int32_t(uint32_t(acc) + uint32_t(x))
                                               : (x > acc ? x : acc);
                        }
                    if (!insn.average)
                        store_int(insn.dtype, dst, acc);
                    else if (insn.dtype == TPU_DT_INT8)
                        store(dst, to_int8(float(acc) / count));
                    else
                        store(dst, to_int32(float(acc) / count));
                }
            }
        }
    }
    return true;
}

bool transpose(const TransposeInsn &insn, uint8_t *ub, const std::atomic<bool> &abort,
               ThreadPool *pool) {
    const uint32_t elem = dtype_bytes(insn.dtype);
    // Source and destination apart, and every destination element written once (rows apart):
    // the order of the copies cannot matter.
    if (apart(insn.a.addr, insn.a.end() - insn.a.addr, insn.dst.addr,
              insn.dst.end() - insn.dst.addr) &&
        (insn.cols == 1 || insn.dst.stride >= insn.dst.row_bytes)) {
        if (elem == 4)
            return transpose_apart<uint32_t>(insn, ub, abort, pool);
        if (elem == 2)
            return transpose_apart<uint16_t>(insn, ub, abort, pool);
        return transpose_apart<uint8_t>(insn, ub, abort, pool);
    }
    for (uint64_t r = 0; r < insn.rows; r++) {
        if (stop_requested(abort))
            return false;
        for (uint64_t c = 0; c < insn.cols; c++)
            std::memmove(at(ub, insn.dst, c, r, elem), at(ub, insn.a, r, c, elem), elem);
    }
    return true;
}

} // namespace tpu::engine::vpu
