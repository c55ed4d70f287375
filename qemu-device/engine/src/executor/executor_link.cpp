// SPDX-License-Identifier: MIT
// The link instructions (spec 2.0, docs/hardware.md section 10). SEND cuts its message into
// packets of TPU_ICI_PACKET_BYTES and puts each into a free slot of the port's channel,
// waiting for a credit when the receiver's buffer is full; RECV takes the packets of the next
// message in order and stores or reduces each at its destination. Both wait without spinning
// and stop at once on an abort or when the link goes down. Time: a SEND keeps its port's
// sending side busy for the message's serialisation and stamps it with its start cycle; the
// RECV ends once the message has arrived — start of the SEND + hops x latency + bytes /
// bandwidth — and no sooner than its own start + the serialisation (the receiving side drains
// a message waiting in the buffer at line rate). Flow control stalls the emulation, never the
// modelled time. Nothing here depends on the engine mode.
#include <algorithm>
#include <cstring>

#include "executor/executor.hpp"
#include "fp_env.hpp"
#include "isa/decode_checks.hpp"
#include "link/link_cost.hpp"
#include "link/reduce.hpp"

namespace tpu::engine {
namespace {

uint32_t wait_status(LinkWait w) {
    switch (w) {
    case LinkWait::Down:
        return TPU_ERR_LINK_DOWN;
    case LinkWait::Cut:
        return TPU_ERR_LINK_PARTIAL;
    default:
        return TPU_ERR_ABORTED;
    }
}

// Wakes the other side of a channel, if it waits, when a SEND or RECV ends however it ends: the
// channel wakes it for batches of packets or credits only.
class KickOnExit {
  public:
    explicit KickOnExit(Channel &ch) : ch_(ch) {}
    ~KickOnExit() { ch_.kick(); }
    KickOnExit(const KickOnExit &) = delete;
    KickOnExit &operator=(const KickOnExit &) = delete;

  private:
    Channel &ch_;
};

} // namespace

Fault Executor::link_error(uint32_t port, uint32_t status) {
    if (status != TPU_ERR_ABORTED && port < TPU_ICI_MAX_PORTS) {
        PortCounters &c = dev_.links.counters(port);
        c.errors++;
        c.error = true;
    }
    return make_fault(status);
}

Fault Executor::execute(const SendInsn &insn) {
    const std::shared_ptr<Channel> ch = dev_.links.tx(insn.port);
    const LinkEndpoint::Params params = dev_.links.params(insn.port);
    if (!ch || !ch->up() || params.link_gbps == 0)
        return link_error(insn.port, TPU_ERR_LINK_DOWN);

    Step step;
    step.units = link_tx_unit(insn.port);
    step.cost = cycles::link_serialise(insn.len, dev_.clock_mhz, params.link_gbps);
    if (!insn.host)
        step.add(Space::Ub, insn.addr, insn.addr + insn.len, false);
    const uint64_t depart = timeline_.start_of(step);

    PortCounters &counters = dev_.links.counters(insn.port);
    const KickOnExit kick(*ch);
    const uint64_t msg = ch->begin_message();
    for (uint32_t offset = 0; offset < insn.len;) {
        Packet *packet;
        const LinkWait w = ch->acquire(dev_.abort_requested, &packet);
        if (w != LinkWait::Ok) {
            ch->cut(msg);
            return link_error(insn.port, wait_status(w));
        }
        const uint32_t bytes = std::min<uint32_t>(insn.len - offset, TPU_ICI_PACKET_BYTES);
        if (insn.host) {
            uint64_t done;
            const Fault f = dev_.dma.read(insn.addr + offset, packet->data.data(), bytes, &done);
            if (!f.ok()) {
                ch->cut(msg);
                return f;
            }
            result_.dma_read_bytes += bytes;
        } else {
            std::memcpy(packet->data.data(), dev_.ub.data() + insn.addr + offset, bytes);
        }
        packet->hdr = PacketHeader{msg, insn.tag, insn.len, offset, bytes, depart};
        ch->publish(offset + bytes == insn.len);
        counters.tx_bytes += bytes;
        counters.tx_packets++;
        offset += bytes;
    }
    timeline_.schedule(step);
    result_.link_cycles += step.cost;
    result_.link_tx_bytes += insn.len;
    return kOk;
}

Fault Executor::receive_payload(const RecvInsn &insn, uint64_t offset, const uint8_t *data,
                                uint32_t bytes) {
    if (!insn.host) {
        uint8_t *dst = dev_.ub.data() + insn.addr + offset;
        if (insn.reduce == TPU_LINK_COPY) {
            std::memcpy(dst, data, bytes);
        } else {
            FpEnvGuard fp_env;
            link_reduce(insn.reduce, insn.dtype, dst, data, bytes);
        }
        return kOk;
    }
    if (insn.reduce == TPU_LINK_COPY) {
        const Fault f = dev_.dma.write(insn.addr + offset, data, bytes);
        if (f.ok())
            result_.dma_write_bytes += bytes;
        return f;
    }
    std::vector<uint8_t> &staging = dev_.link_staging;
    staging.resize(TPU_ICI_PACKET_BYTES);
    uint64_t done;
    Fault f = dev_.dma.read(insn.addr + offset, staging.data(), bytes, &done);
    if (!f.ok())
        return f;
    {
        FpEnvGuard fp_env;
        link_reduce(insn.reduce, insn.dtype, staging.data(), data, bytes);
    }
    f = dev_.dma.write(insn.addr + offset, staging.data(), bytes);
    if (f.ok()) {
        result_.dma_read_bytes += bytes;
        result_.dma_write_bytes += bytes;
    }
    return f;
}

Fault Executor::execute(const RecvInsn &insn) {
    const std::shared_ptr<Channel> ch = dev_.links.rx(insn.port);
    const LinkEndpoint::Params params = dev_.links.params(insn.port);
    if (!ch || !ch->up() || params.link_gbps == 0)
        return link_error(insn.port, TPU_ERR_LINK_DOWN);

    Step step;
    step.units = link_rx_unit(insn.port);
    if (!insn.host)
        step.add(Space::Ub, insn.addr, insn.addr + insn.len, true);
    const uint64_t start = timeline_.start_of(step);
    PortCounters &counters = dev_.links.counters(insn.port);
    const KickOnExit kick(*ch);

    // The message's first packet; the rest of one that an earlier RECV or a reset left behind
    // is dropped on the way, and with SKIP_STALE every message of another tag.
    const Packet *packet;
    for (;;) {
        const LinkWait w = ch->peek(dev_.abort_requested, 0, &packet);
        if (w != LinkWait::Ok)
            return link_error(insn.port, wait_status(w));
        if (packet->hdr.offset == 0 && (!insn.skip_stale || packet->hdr.tag == insn.tag))
            break;
        ch->pop();
        counters.rx_packets++;
    }
    if (packet->hdr.tag != insn.tag || packet->hdr.len != insn.len)
        return link_error(insn.port, TPU_ERR_LINK_MISMATCH);

    if (!insn.host)
        dev_.ub.mark_dirty(insn.addr, insn.addr + insn.len);
    const PacketHeader first = packet->hdr;
    for (uint64_t offset = 0; offset < insn.len;) {
        if (offset) {
            const LinkWait w = ch->peek(dev_.abort_requested, first.msg, &packet);
            if (w != LinkWait::Ok)
                return link_error(insn.port, wait_status(w));
            // Another message's start: the sender cut ours short (its SEND failed).
            if (packet->hdr.msg != first.msg || packet->hdr.offset != offset)
                return link_error(insn.port, TPU_ERR_LINK_PARTIAL);
        }
        const Fault f = receive_payload(insn, offset, packet->data.data(), packet->hdr.bytes);
        if (!f.ok()) {
            ch->pop(); // the rest of the message is dropped by the next RECV
            counters.rx_packets++;
            return f;
        }
        offset += packet->hdr.bytes;
        counters.rx_bytes += packet->hdr.bytes;
        counters.rx_packets++;
        ch->pop(offset == insn.len);
    }

    const uint64_t arrival = first.depart + cycles::link_transfer(1, insn.len, dev_.clock_mhz,
                                                                  params.link_gbps, params.hop_ns);
    const uint64_t drained =
        start + cycles::link_serialise(insn.len, dev_.clock_mhz, params.link_gbps);
    step.cost = std::max(arrival, drained) - start;
    timeline_.schedule(step);
    result_.link_cycles += step.cost;
    result_.link_rx_bytes += insn.len;
    return kOk;
}

} // namespace tpu::engine
