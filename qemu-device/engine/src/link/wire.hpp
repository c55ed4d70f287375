// SPDX-License-Identifier: MIT
// The wire format of a link between cards in two QEMU processes (docs/hardware.md section 10,
// "Links to other processes"): each message is a 32-byte header and a body of `length` bytes,
// every field little-endian with an explicit size. One connection carries one link, both
// directions; each direction numbers its messages from 1 (seq).
//
//   header  0 u32 magic 'TICI'   4 u16 version   6 u8 type   7 u8 flags (0)
//           8 u32 length (body)  12 u32 tag (DATA, else 0)
//          16 u64 seq            24 u64 time: DATA, the sender's modelled send cycle, else 0
//   HELLO   u32 topology, dim_x, dim_y, link_gbps, hop_ns, credits, clock_mhz, x, y, port,
//           y_link_gbps, y_hop_ns (version 2, spec 2.4)
//   DATA    u64 msg, u32 msg_len, u32 offset, then the payload (1 .. 4096 bytes)
//   CREDIT  u32 count: packet slots the receiver freed
//   CUT     u64 msg: the sender cut message msg short
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tpu_hw.h"

namespace tpu::engine::wire {

inline constexpr uint32_t kMagic = 0x49434954; // "TICI" in memory order
inline constexpr uint16_t kVersion = 2;
inline constexpr size_t kHeaderBytes = 32;
inline constexpr size_t kHelloBytes = 48;
inline constexpr size_t kDataBytes = 16; // before the payload
inline constexpr size_t kCreditBytes = 4;
inline constexpr size_t kCutBytes = 8;
inline constexpr size_t kMaxBody = kDataBytes + TPU_ICI_PACKET_BYTES;

enum Type : uint8_t { kHello = 1, kData = 2, kCredit = 3, kCut = 4 };

struct Header {
    uint32_t magic = kMagic;
    uint16_t version = kVersion;
    uint8_t type = 0;
    uint8_t flags = 0;
    uint32_t length = 0;
    uint32_t tag = 0;
    uint64_t seq = 0;
    uint64_t time = 0;
};

struct Hello {
    uint32_t topology = 0, dim_x = 0, dim_y = 0, link_gbps = 0, hop_ns = 0, credits = 0,
             clock_mhz = 0, x = 0, y = 0, port = 0, y_link_gbps = 0, y_hop_ns = 0;
};

struct DataBody {
    uint64_t msg = 0;
    uint32_t msg_len = 0;
    uint32_t offset = 0;
};

// Little-endian loads and stores of explicit sizes.
uint64_t load(const uint8_t *p, size_t bytes);
void store(uint8_t *p, uint64_t v, size_t bytes);

Header decode_header(const uint8_t *p);
// nullptr if the header is one this version accepts (magic, version, type, flags, a body length
// that fits the type), else why not.
const char *check_header(const Header &h);
Hello decode_hello(const uint8_t *body);
DataBody decode_data(const uint8_t *body);

// Appends a whole message (header, body fields, payload) to out.
void put_hello(std::vector<uint8_t> &out, uint64_t seq, const Hello &h);
void put_data(std::vector<uint8_t> &out, uint64_t seq, uint32_t tag, uint64_t time,
              const DataBody &d, const uint8_t *payload, uint32_t bytes);
void put_credit(std::vector<uint8_t> &out, uint64_t seq, uint32_t count);
void put_cut(std::vector<uint8_t> &out, uint64_t seq, uint64_t msg);

} // namespace tpu::engine::wire
