// SPDX-License-Identifier: MIT
// Encoding and checking the messages of a link between QEMU processes (wire.hpp).
#include "link/wire.hpp"

#include <algorithm>

namespace tpu::engine::wire {
namespace {

void put_header(std::vector<uint8_t> &out, uint8_t type, uint32_t length, uint32_t tag,
                uint64_t seq, uint64_t time) {
    const size_t at = out.size();
    out.resize(at + kHeaderBytes);
    uint8_t *p = out.data() + at;
    store(p, kMagic, 4);
    store(p + 4, kVersion, 2);
    store(p + 6, type, 1);
    store(p + 7, 0, 1);
    store(p + 8, length, 4);
    store(p + 12, tag, 4);
    store(p + 16, seq, 8);
    store(p + 24, time, 8);
}

uint8_t *grow(std::vector<uint8_t> &out, size_t bytes) {
    const size_t at = out.size();
    out.resize(at + bytes);
    return out.data() + at;
}

} // namespace

uint64_t load(const uint8_t *p, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = bytes; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

void store(uint8_t *p, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; i++, v >>= 8)
        p[i] = uint8_t(v);
}

Header decode_header(const uint8_t *p) {
    Header h;
    h.magic = uint32_t(load(p, 4));
    h.version = uint16_t(load(p + 4, 2));
    h.type = p[6];
    h.flags = p[7];
    h.length = uint32_t(load(p + 8, 4));
    h.tag = uint32_t(load(p + 12, 4));
    h.seq = load(p + 16, 8);
    h.time = load(p + 24, 8);
    return h;
}

const char *check_header(const Header &h) {
    if (h.magic != kMagic)
        return "not a tpu-ici message (bad magic)";
    if (h.version != kVersion)
        return "the peer speaks another version of the link protocol";
    if (h.flags)
        return "unknown flags in a message header";
    switch (h.type) {
    case kHello:
        return h.length == kHelloBytes ? nullptr : "a hello of the wrong length";
    case kData:
        return h.length > kDataBytes && h.length <= kMaxBody ? nullptr
                                                             : "a data message of the wrong length";
    case kCredit:
        return h.length == kCreditBytes ? nullptr : "a credit message of the wrong length";
    case kCut:
        return h.length == kCutBytes ? nullptr : "a cut message of the wrong length";
    default:
        return "an unknown message type";
    }
}

Hello decode_hello(const uint8_t *b) {
    Hello h;
    uint32_t *fields[] = {&h.topology, &h.dim_x,   &h.dim_y,       &h.link_gbps,
                          &h.hop_ns,   &h.credits, &h.clock_mhz,   &h.x,
                          &h.y,        &h.port,    &h.y_link_gbps, &h.y_hop_ns};
    for (uint32_t *f : fields) {
        *f = uint32_t(load(b, 4));
        b += 4;
    }
    return h;
}

DataBody decode_data(const uint8_t *b) {
    return DataBody{load(b, 8), uint32_t(load(b + 8, 4)), uint32_t(load(b + 12, 4))};
}

void put_hello(std::vector<uint8_t> &out, uint64_t seq, const Hello &h) {
    put_header(out, kHello, kHelloBytes, 0, seq, 0);
    uint8_t *b = grow(out, kHelloBytes);
    for (uint32_t f : {h.topology, h.dim_x, h.dim_y, h.link_gbps, h.hop_ns, h.credits, h.clock_mhz,
                       h.x, h.y, h.port, h.y_link_gbps, h.y_hop_ns}) {
        store(b, f, 4);
        b += 4;
    }
}

void put_data(std::vector<uint8_t> &out, uint64_t seq, uint32_t tag, uint64_t time,
              const DataBody &d, const uint8_t *payload, uint32_t bytes) {
    put_header(out, kData, uint32_t(kDataBytes + bytes), tag, seq, time);
    uint8_t *b = grow(out, kDataBytes + bytes);
    store(b, d.msg, 8);
    store(b + 8, d.msg_len, 4);
    store(b + 12, d.offset, 4);
    std::copy(payload, payload + bytes, b + kDataBytes);
}

void put_credit(std::vector<uint8_t> &out, uint64_t seq, uint32_t count) {
    put_header(out, kCredit, kCreditBytes, 0, seq, 0);
    store(grow(out, kCreditBytes), count, 4);
}

void put_cut(std::vector<uint8_t> &out, uint64_t seq, uint64_t msg) {
    put_header(out, kCut, kCutBytes, 0, seq, 0);
    store(grow(out, kCutBytes), msg, 8);
}

} // namespace tpu::engine::wire
