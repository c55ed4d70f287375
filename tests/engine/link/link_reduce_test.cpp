// SPDX-License-Identifier: MIT
// The receive-reduce of RECV (spec 2.0, docs/hardware.md section 10) against an independent
// reference: every reduce op and dtype over special values (NaN, infinities, signed zeros,
// subnormals, values that cancel or round), into the unified buffer and into host memory; and a
// ring reduce-scatter + all-gather on four cards, whose sums follow the documented order
// (chunk c: v[c], then v[c+1] + that, v[c+2] + that, ...) bit for bit, in both engine modes
// with identical results and cycles.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "compare.hpp"
#include "link_rig.hpp"

using namespace tpu::test;

namespace {

// ---- the reference: double arithmetic rounded once to the result type ----

uint32_t ref_fp32(uint8_t op, uint32_t a_bits, uint32_t b_bits) {
    const float a = std::bit_cast<float>(a_bits), b = std::bit_cast<float>(b_bits);
    if (std::isnan(a) || std::isnan(b))
        return 0x7fc00000u;
    float r;
    if (op == TPU_LINK_SUM)
        r = float(double(a) + double(b)); // exact in double, one rounding to binary32
    else if (op == TPU_LINK_MAX)
        r = b > a ? b : a;
    else
        r = b < a ? b : a;
    return std::isnan(r) ? 0x7fc00000u : std::bit_cast<uint32_t>(r);
}

uint16_t ref_round_bf16(uint32_t bits) {
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0;
    const uint32_t low = bits & 0xffffu;
    uint32_t high = bits >> 16;
    if (low > 0x8000u || (low == 0x8000u && (high & 1)))
        high++;
    return uint16_t(high);
}

uint16_t ref_bf16(uint8_t op, uint16_t a, uint16_t b) {
    return ref_round_bf16(ref_fp32(op, uint32_t(a) << 16, uint32_t(b) << 16));
}

uint32_t ref_int32(uint8_t op, uint32_t a, uint32_t b) {
    const int64_t x = int32_t(a), y = int32_t(b);
    if (op == TPU_LINK_SUM)
        return uint32_t(uint64_t(x + y) & 0xffffffffu);
    return uint32_t(int32_t(op == TPU_LINK_MAX ? std::max(x, y) : std::min(x, y)));
}

// Bit patterns: random ones mixed with the special values of each type.
std::vector<uint32_t> fp32_values(std::mt19937_64 &rng, size_t n) {
    static const uint32_t special[] = {0,           0x80000000u, 0x7f800000u, 0xff800000u,
                                       0x7fc00000u, 0x7fa00001u, 0xffc12345u, 0x00000001u,
                                       0x807fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu,
                                       0x3f800000u, 0xbf800000u, 0x33800000u, 0x4b800000u};
    std::vector<uint32_t> v(n);
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = rng();
        v[i] = r % 4 == 0 ? special[(r >> 8) % std::size(special)] : uint32_t(r >> 32);
        if (r % 4 == 1) // ordinary magnitudes, where additions round
            v[i] = (v[i] & 0x807fffffu) | (uint32_t(120 + (r >> 40) % 16) << 23);
    }
    return v;
}

std::vector<uint8_t> as_bytes(const std::vector<uint32_t> &v, uint8_t dtype) {
    std::vector<uint8_t> out;
    for (uint32_t x : v) {
        if (dtype == TPU_DT_BF16) {
            const uint16_t h = uint16_t(x >> 16);
            out.push_back(uint8_t(h));
            out.push_back(uint8_t(h >> 8));
        } else {
            for (int i = 0; i < 4; i++)
                out.push_back(uint8_t(x >> (8 * i)));
        }
    }
    return out;
}

std::vector<uint8_t> reference(uint8_t op, uint8_t dtype, const std::vector<uint8_t> &dst,
                               const std::vector<uint8_t> &msg) {
    std::vector<uint8_t> out(dst.size());
    const size_t elem = dtype == TPU_DT_BF16 ? 2 : 4;
    for (size_t i = 0; i < dst.size(); i += elem) {
        if (dtype == TPU_DT_BF16) {
            uint16_t a, b;
            std::memcpy(&a, &dst[i], 2);
            std::memcpy(&b, &msg[i], 2);
            const uint16_t r = ref_bf16(op, a, b);
            std::memcpy(&out[i], &r, 2);
        } else {
            uint32_t a, b;
            std::memcpy(&a, &dst[i], 4);
            std::memcpy(&b, &msg[i], 4);
            const uint32_t r = dtype == TPU_DT_FP32 ? ref_fp32(op, a, b) : ref_int32(op, a, b);
            std::memcpy(&out[i], &r, 4);
        }
    }
    return out;
}

} // namespace

TEST_CASE("link: RECV reduces bit-exactly like the reference", "[link]") {
    const uint8_t dtype = GENERATE(TPU_DT_FP32, TPU_DT_BF16, TPU_DT_INT32);
    const uint8_t op = GENERATE(TPU_LINK_SUM, TPU_LINK_MAX, TPU_LINK_MIN);
    const bool host = GENERATE(false, true);
    INFO("dtype " << int(dtype) << ", op " << int(op) << (host ? ", host" : ", UB"));
    constexpr size_t kElems = 10000; // several packets, the last one short
    std::mt19937_64 rng(dtype * 16 + op);
    const std::vector<uint8_t> dst = as_bytes(fp32_values(rng, kElems), dtype);
    const std::vector<uint8_t> msg = as_bytes(fp32_values(rng, kElems), dtype);
    const uint32_t bytes = uint32_t(dst.size());
    const uint16_t rows = uint16_t(bytes / 1000);

    LinkRig rig(LinkRig::ring(2), TPU_ENGINE_FAST);
    rig.space(0).write(LinkRig::kHost, msg.data(), bytes);
    rig.space(1).write(LinkRig::kHost, dst.data(), bytes);
    constexpr uint64_t kOut = LinkRig::kHost + (1u << 20);
    const Program sender = {dma_in(TPU_DT_INT8, rows, 1000, LinkRig::kHost, 1000, 0, 1000),
                            send(0, 9, 0, bytes), halt()};
    const Program receiver =
        host ? Program{recv(1, 9, LinkRig::kHost, bytes, op, dtype, TPU_F_LINK_HOST), halt()}
             : Program{dma_in(TPU_DT_INT8, rows, 1000, LinkRig::kHost, 1000, 64, 1000),
                       recv(1, 9, 64, bytes, op, dtype),
                       dma_out(TPU_DT_INT8, rows, 1000, kOut, 1000, 64, 1000), halt()};
    const auto results = rig.run_all({sender, receiver});
    REQUIRE(results[0].status == TPU_ERR_NONE);
    REQUIRE(results[1].status == TPU_ERR_NONE);
    std::vector<uint8_t> got(bytes);
    rig.space(1).read(host ? LinkRig::kHost : kOut, got.data(), bytes);
    const std::vector<uint8_t> want = reference(op, dtype, dst, msg);
    CHECK(first_difference(got.data(), want.data(), bytes / 4) == "");
}

namespace {

// One card's program of a ring reduce-scatter then all-gather (fp32 sums) of p chunks of
// chunk bytes at UB 0, sending on port 0 (+x) and receiving on port 1 (-x).
Program ring_allreduce(uint32_t r, uint32_t p, uint32_t chunk, uint8_t dtype) {
    const uint16_t cols = uint16_t(chunk / 4);
    Program prog = {dma_in(TPU_DT_FP32, uint16_t(p), cols, LinkRig::kHost, chunk, 0, chunk)};
    auto at = [&](int64_t c) { return uint32_t(((c % p) + p) % p) * chunk; };
    for (uint32_t s = 0; s + 1 < p; s++) {
        prog.push_back(send(0, s, at(int64_t(r) - s), chunk));
        prog.push_back(recv(1, s, at(int64_t(r) - s - 1), chunk, TPU_LINK_SUM, dtype));
    }
    for (uint32_t s = 0; s + 1 < p; s++) {
        prog.push_back(send(0, 100 + s, at(int64_t(r) + 1 - s), chunk));
        prog.push_back(recv(1, 100 + s, at(int64_t(r) - s), chunk));
    }
    prog.push_back(dma_out(TPU_DT_FP32, uint16_t(p), cols, LinkRig::kHost, chunk, 0, chunk));
    prog.push_back(halt());
    return prog;
}

} // namespace

TEST_CASE("link: a ring all-reduce on four cards sums in the documented order, both modes alike",
          "[link]") {
    const uint8_t dtype = GENERATE(TPU_DT_FP32, TPU_DT_BF16);
    constexpr uint32_t kCards = 4;
    constexpr uint32_t kChunk = 64 * 1024;
    const size_t elem = dtype == TPU_DT_BF16 ? 2 : 4;
    const size_t count = kCards * kChunk / elem;

    std::vector<std::vector<uint8_t>> inputs;
    std::mt19937_64 rng(42 + dtype);
    for (uint32_t r = 0; r < kCards; r++) {
        std::vector<uint32_t> v(count);
        for (uint32_t &x : v) // values of mixed magnitudes: the order of the sums shows
            x = std::bit_cast<uint32_t>(
                float(std::ldexp(double(rng() % 2000001) - 1e6, int(rng() % 40) - 20)));
        inputs.push_back(as_bytes(v, dtype));
        inputs.back().resize(kCards * kChunk);
    }
    // Chunk c: v[c], then v[c+1] + that, v[c+2] + that, ... (dst + msg at each hop).
    std::vector<uint8_t> want(kCards * kChunk);
    for (uint32_t c = 0; c < kCards; c++) {
        std::vector<uint8_t> acc(inputs[c].begin() + c * kChunk,
                                 inputs[c].begin() + (c + 1) * kChunk);
        for (uint32_t k = 1; k < kCards; k++) {
            const auto &v = inputs[(c + k) % kCards];
            acc = reference(
                TPU_LINK_SUM, dtype,
                std::vector<uint8_t>(v.begin() + c * kChunk, v.begin() + (c + 1) * kChunk), acc);
        }
        std::memcpy(&want[c * kChunk], acc.data(), kChunk);
    }

    std::vector<uint64_t> cycles;
    for (uint32_t mode : {TPU_ENGINE_FAST, TPU_ENGINE_CYCLE_ACCURATE}) {
        LinkRig rig(LinkRig::ring(kCards), mode);
        std::vector<Program> programs;
        for (uint32_t r = 0; r < kCards; r++) {
            rig.space(r).write(LinkRig::kHost, inputs[r].data(), kCards * kChunk);
            programs.push_back(ring_allreduce(r, kCards, kChunk, dtype));
        }
        const auto results = rig.run_all(programs);
        for (uint32_t r = 0; r < kCards; r++) {
            INFO("mode " << mode << ", card " << r);
            REQUIRE(results[r].status == TPU_ERR_NONE);
            std::vector<uint8_t> got(kCards * kChunk);
            rig.space(r).read(LinkRig::kHost, got.data(), got.size());
            CHECK(first_difference(got.data(), want.data(), got.size() / 4) == "");
            CHECK(results[r].link_tx_bytes == 2 * (kCards - 1) * uint64_t(kChunk));
            cycles.push_back(results[r].cycles);
        }
    }
    for (uint32_t r = 0; r < kCards; r++)
        CHECK(cycles[r] == cycles[kCards + r]);
}
