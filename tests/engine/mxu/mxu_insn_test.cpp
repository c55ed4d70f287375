// SPDX-License-Identifier: MIT
// The matrix unit's 1.1 instructions end to end in both engine modes: LOAD_W from the unified
// buffer or host memory, plain or transposed, for INT8, BF16 and FP32; FP32 MATMUL against the
// fmaf reference; and a 3x3 convolution (stride 1 and 2, zero padding, several channels) built
// from one row-group MATMUL per kernel tap, against a direct convolution.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "compare.hpp"
#include "rig.hpp"
#include "tpu_test/random_data.hpp"
#include "tpu_test/reference.hpp"

using namespace tpu::test;

namespace {

// Random operands of dtype as raw bytes (finite floats).
std::vector<uint8_t> operands(std::mt19937_64 &rng, uint8_t dt, uint64_t count) {
    std::vector<uint8_t> out;
    if (dt == TPU_DT_INT8) {
        std::vector<int8_t> v = random_int8(rng, count);
        out.assign(v.begin(), v.end());
    } else {
        std::vector<uint16_t> v = random_bf16(rng, count);
        if (dt == TPU_DT_BF16) {
            out.resize(2 * count);
            std::memcpy(out.data(), v.data(), out.size());
        } else {
            out.resize(4 * count);
            for (uint64_t i = 0; i < count; i++) {
                uint32_t w = uint32_t(v[i]) << 16 | uint32_t(rng() & 0xffff);
                std::memcpy(&out[4 * i], &w, 4);
            }
        }
    }
    return out;
}

uint32_t size_of(uint8_t dt) {
    return dt == TPU_DT_INT8 ? 1 : dt == TPU_DT_BF16 ? 2 : 4;
}

// C = A (m x k) x W (k x n) by the reference of the dtype, as raw 32-bit words.
std::vector<uint8_t> reference(uint8_t dt, const std::vector<uint8_t> &a,
                               const std::vector<uint8_t> &w, uint32_t m, uint32_t k, uint32_t n) {
    std::vector<uint8_t> out(uint64_t(m) * n * 4);
    if (dt == TPU_DT_INT8) {
        auto c = reference_matmul_int8(reinterpret_cast<const int8_t *>(a.data()),
                                       reinterpret_cast<const int8_t *>(w.data()), m, k, n);
        std::memcpy(out.data(), c.data(), out.size());
    } else if (dt == TPU_DT_BF16) {
        auto c = reference_matmul_bf16(reinterpret_cast<const uint16_t *>(a.data()),
                                       reinterpret_cast<const uint16_t *>(w.data()), m, k, n);
        std::memcpy(out.data(), c.data(), out.size());
    } else {
        auto c = reference_matmul_fp32(reinterpret_cast<const float *>(a.data()),
                                       reinterpret_cast<const float *>(w.data()), m, k, n);
        std::memcpy(out.data(), c.data(), out.size());
    }
    return out;
}

} // namespace

TEST_CASE("LOAD_W from the UB or host, plain or transposed, every MXU dtype", "[mxu_insn]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint8_t dt = GENERATE(uint8_t(TPU_DT_INT8), uint8_t(TPU_DT_BF16), uint8_t(TPU_DT_FP32));
    const bool host = GENERATE(false, true);
    const bool transposed = GENERATE(false, true);
    const bool dense = GENERATE(false, true); // host rows one after the other (one read)
    CAPTURE(mode, int(dt), host, transposed, dense);
    Rig rig(mode);
    std::mt19937_64 rng(dt * 4 + host * 2 + transposed);
    const uint32_t m = 37, k = 13, n = 11, es = size_of(dt);
    std::vector<uint8_t> a = operands(rng, dt, m * k), w = operands(rng, dt, k * n);
    // The source as the instruction expects it: W, or W transposed (n rows of k).
    std::vector<uint8_t> src(w.size());
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < n; j++)
            std::memcpy(&src[(transposed ? j * k + i : i * n + j) * es], &w[(i * n + j) * es], es);
    const uint32_t src_rows = transposed ? n : k, row_bytes = (transposed ? k : n) * es;
    const uint32_t host_stride = row_bytes + (dense ? 0 : 3); // any stride on the host side
    std::vector<uint8_t> staged(uint64_t(src_rows) * host_stride);
    for (uint32_t r = 0; r < src_rows; r++)
        std::memcpy(&staged[r * host_stride], &src[r * row_bytes], row_bytes);
    rig.put(0, a);
    rig.put(0x10000, staged);
    const uint16_t flags = transposed ? TPU_F_W_TRANSPOSE : 0;
    const uint32_t ub_stride = row_bytes + 4 * es;
    Program p{dma_in(dt, uint16_t(m), uint16_t(k), Rig::kHost, k * es, 0, k * es)};
    if (host) {
        p.push_back(
            load_w_host(dt, uint16_t(k), uint16_t(n), Rig::kHost + 0x10000, host_stride, flags));
    } else {
        p.push_back(dma_in(dt, uint16_t(src_rows), uint16_t(row_bytes / es), Rig::kHost + 0x10000,
                           host_stride, 0x8000, ub_stride));
        p.push_back(load_w(dt, uint16_t(k), uint16_t(n), 0x8000, ub_stride, flags));
    }
    p.push_back(matmul(dt, uint16_t(m), uint16_t(k), 0, k * es, 0, n * 4));
    p.push_back(dma_out_acc(dt == TPU_DT_INT8 ? uint8_t(TPU_DT_INT32) : uint8_t(TPU_DT_FP32),
                            uint16_t(m), uint16_t(n), Rig::kHost + 0x20000, n * 4, 0, n * 4));
    tpu_job_result r = rig.run(p);
    REQUIRE(r.status == TPU_ERR_NONE);
    CHECK(r.dma_read_bytes == a.size() + w.size());
    CHECK(r.macs == uint64_t(m) * k * n);
    CHECK((dt == TPU_DT_INT8   ? r.macs_int8
           : dt == TPU_DT_BF16 ? r.macs_bf16
                               : r.macs_fp32) == r.macs);
    std::vector<uint8_t> want = reference(dt, a, w, m, k, n);
    std::vector<uint8_t> got = rig.get<uint8_t>(0x20000, want.size());
    CHECK(first_difference(got.data(), want.data(), uint64_t(m) * n) == "");
}

TEST_CASE("FP32 MATMUL tiled over K with ACCUMULATE equals one fmaf chain", "[mxu_insn]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    Rig rig(mode);
    std::mt19937_64 rng(77);
    const uint32_t m = 20, k = 40, n = 16; // K in three tiles of the 16-row array
    std::vector<uint8_t> a = operands(rng, TPU_DT_FP32, m * k),
                         w = operands(rng, TPU_DT_FP32, k * n);
    rig.put(0, a);
    rig.put(0x10000, w);
    Program p{dma_in(TPU_DT_FP32, m, k, Rig::kHost, k * 4, 0, k * 4)};
    for (uint32_t k0 = 0; k0 < k; k0 += 16) {
        uint16_t kk = uint16_t(std::min(16u, k - k0));
        p.push_back(load_w_host(TPU_DT_FP32, kk, n, Rig::kHost + 0x10000 + k0 * n * 4, n * 4));
        p.push_back(matmul(TPU_DT_FP32, m, kk, k0 * 4, k * 4, 0, n * 4, k0 ? TPU_F_ACCUMULATE : 0));
    }
    p.push_back(dma_out_acc(TPU_DT_FP32, m, n, Rig::kHost + 0x20000, n * 4, 0, n * 4));
    REQUIRE(rig.run(p).status == TPU_ERR_NONE);
    std::vector<uint8_t> want = reference(TPU_DT_FP32, a, w, m, k, n);
    std::vector<uint8_t> got = rig.get<uint8_t>(0x20000, want.size());
    CHECK(first_difference(got.data(), want.data(), uint64_t(m) * n) == "");
}

namespace {

// A convolution of an H x W x C int8 or bf16 image with a 3x3 x C x F kernel, zero padding 1,
// stride s, as a program: the image goes into a zeroed (H + 2) x (W + 2) x C frame in the UB;
// each tap (ky, kx) is a LOAD_W of its C x F weights and one MATMUL whose rows walk the output
// pixels: group = output width, src_stride = s pixels, group_stride = s padded rows.
struct Conv {
    uint8_t dt;
    uint32_t h, w, c, f, stride;
    uint32_t oh() const { return (h + 2 - 3) / stride + 1; }
    uint32_t ow() const { return (w + 2 - 3) / stride + 1; }
};

std::vector<uint8_t> conv_reference(const Conv &cv, const std::vector<uint8_t> &img,
                                    const std::vector<uint8_t> &ker) {
    // out[p][f] = sum over taps in (ky, kx) order, then channels, of img * ker — the order the
    // program accumulates in (tap after tap, each a K = C chain: int8 wrapping, bf16 the card's
    // pairs of channels).
    const uint32_t es = size_of(cv.dt);
    std::vector<uint8_t> out(uint64_t(cv.oh()) * cv.ow() * cv.f * 4);
    for (uint32_t oy = 0; oy < cv.oh(); oy++)
        for (uint32_t ox = 0; ox < cv.ow(); ox++)
            for (uint32_t f = 0; f < cv.f; f++) {
                int32_t iacc = 0;
                float facc = 0.0f;
                for (uint32_t t = 0; t < 9; t++) {
                    std::vector<uint16_t> ta(cv.c, 0), tw(cv.c);
                    for (uint32_t ch = 0; ch < cv.c; ch++) {
                        int y = int(oy * cv.stride + t / 3) - 1,
                            x = int(ox * cv.stride + t % 3) - 1;
                        bool pad = y < 0 || x < 0 || y >= int(cv.h) || x >= int(cv.w);
                        uint64_t ii = (uint64_t(y) * cv.w + x) * cv.c + ch;
                        uint64_t ki = (uint64_t(t) * cv.c + ch) * cv.f + f;
                        if (cv.dt == TPU_DT_INT8) {
                            int32_t a = pad ? 0 : int8_t(img[ii]);
                            iacc = int32_t(uint32_t(iacc) + uint32_t(a * int8_t(ker[ki])));
                        } else {
                            if (!pad)
                                std::memcpy(&ta[ch], &img[ii * es], 2);
                            std::memcpy(&tw[ch], &ker[ki * es], 2);
                        }
                    }
                    if (cv.dt != TPU_DT_INT8)
                        facc = reference_bf16_chain(facc, ta.data(), 1, tw.data(), 1, cv.c);
                }
                uint8_t *o = &out[((uint64_t(oy) * cv.ow() + ox) * cv.f + f) * 4];
                if (cv.dt == TPU_DT_INT8)
                    std::memcpy(o, &iacc, 4);
                else
                    std::memcpy(o, &facc, 4);
            }
    return out;
}

} // namespace

TEST_CASE("3x3 convolution from row-group MATMULs equals a direct convolution", "[mxu_insn]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint8_t dt = GENERATE(uint8_t(TPU_DT_INT8), uint8_t(TPU_DT_BF16));
    const uint32_t stride = GENERATE(1u, 2u);
    const Conv cv{dt, 9, 7, 5, 6, stride};
    CAPTURE(mode, int(dt), stride);
    Rig rig(mode);
    std::mt19937_64 rng(stride * 10 + dt);
    const uint32_t es = size_of(dt);
    std::vector<uint8_t> img = operands(rng, dt, cv.h * cv.w * cv.c);
    std::vector<uint8_t> ker = operands(rng, dt, 9 * cv.c * cv.f);
    rig.put(0, img);
    rig.put(0x10000, ker);

    const uint32_t pixel = cv.c * es, padded_row = (cv.w + 2) * pixel;
    const uint32_t frame = 0, weights = 0x8000;
    const uint32_t m = cv.oh() * cv.ow();
    Program p{dma_in(dt, uint16_t(cv.h), uint16_t(cv.w * cv.c), Rig::kHost, cv.w * pixel,
                     frame + padded_row + pixel, padded_row),
              dma_in(dt, uint16_t(9 * cv.c), uint16_t(cv.f), Rig::kHost + 0x10000, cv.f * es,
                     weights, cv.f * es)};
    for (uint32_t t = 0; t < 9; t++) {
        uint32_t ky = t / 3, kx = t % 3;
        p.push_back(
            load_w(dt, uint16_t(cv.c), uint16_t(cv.f), weights + t * cv.c * cv.f * es, cv.f * es));
        p.push_back(matmul_grouped(dt, uint16_t(m), uint16_t(cv.c),
                                   frame + ky * padded_row + kx * pixel, cv.stride * pixel,
                                   uint16_t(cv.ow()), cv.stride * padded_row, 0, cv.f * 4,
                                   t ? TPU_F_ACCUMULATE : 0));
    }
    p.push_back(dma_out_acc(dt == TPU_DT_INT8 ? uint8_t(TPU_DT_INT32) : uint8_t(TPU_DT_FP32),
                            uint16_t(m), uint16_t(cv.f), Rig::kHost + 0x20000, cv.f * 4, 0,
                            cv.f * 4));
    tpu_job_result r = rig.run(p);
    REQUIRE(r.status == TPU_ERR_NONE);
    CHECK(r.macs == 9ull * m * cv.c * cv.f);
    std::vector<uint8_t> want = conv_reference(cv, img, ker);
    std::vector<uint8_t> got = rig.get<uint8_t>(0x20000, want.size());
    CHECK(first_difference(got.data(), want.data(), uint64_t(m) * cv.f) == "");
}

TEST_CASE("TIMESTAMP writes the cycle when everything before it has finished", "[mxu_insn]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    Rig rig(mode);
    // Start .. finish of each instruction in the cycle model.
    Program p{dma_in(TPU_DT_INT8, 16, 16, Rig::kHost, 16, 0, 16), // 0 .. 6 (256 bytes)
              load_w(TPU_DT_INT8, 16, 16, 0, 16),                 // 6 .. 22 (waits for the DMA)
              timestamp(0xabcd, Rig::kHost + 0x1000),             // 22 .. 23
              matmul(TPU_DT_INT8, 4, 16, 0, 16, 0, 64),           // 23 .. 58 (4 + 16 + 16 - 1)
              sync_insn(),                                        // 58 .. 59
              timestamp(7, Rig::kHost + 0x1010)};                 // 59 .. 60
    tpu_job_result r = rig.run(p);
    REQUIRE(r.status == TPU_ERR_NONE);
    std::vector<tpu_timestamp> ts = rig.get<tpu_timestamp>(0x1000, 2);
    CHECK(ts[0].cycle == 22);
    CHECK(ts[0].tag == 0xabcd);
    CHECK(ts[0].pc == 2);
    CHECK(ts[1].cycle == 59);
    CHECK(ts[1].tag == 7);
    CHECK(ts[1].pc == 5);
    CHECK(r.cycles == 60);
    CHECK(r.dma_write_bytes == 2 * sizeof(tpu_timestamp));
}
