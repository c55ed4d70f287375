// SPDX-License-Identifier: MIT
// Channel: one direction of one inter-chip link (docs/hardware.md section 10) — the receiving
// port's buffer of `credits` packet slots, filled by the sending card's SEND and emptied by the
// receiving card's RECV. A slot is a credit: a sender with none left waits (flow control, no
// packet is ever dropped for want of room); a receiver with nothing to take waits. Both waits
// block on a condition variable, never spin, and end when the link goes down or the waiting
// engine's abort flag is set (wake()). A side is woken only while it waits, and then for a batch
// of credits or packets, the end of a message or an event, not for every packet. One producer and
// one consumer at a time (a card runs one job): payloads are copied into and out of their slots
// without the lock, which guards only the indices, the link state and the cut mark.
// A link to a card in another QEMU process (remote_link.hpp) has a bridge on one side of each
// channel instead of a card: on the sending card's channel it forwards published packets and frees
// their slots only when the remote receiver returns their credits, so the sender's credits are the
// remote buffer's; on the receiving card's channel it deposits arriving packets without waiting.
// Its listener is told (under the channel's lock, so it must not block) of each change it acts on.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "tpu_hw.h"

namespace tpu::engine {

// What precedes a packet's payload: which message it belongs to and where.
struct PacketHeader {
    uint64_t msg = 0;    // message number on this channel, from 1
    uint32_t tag = 0;    // the SEND's tag
    uint32_t len = 0;    // the whole message's bytes
    uint32_t offset = 0; // of this payload in the message
    uint32_t bytes = 0;  // payload bytes in this packet
    uint64_t depart = 0; // the SEND's start cycle in the sender's job
};

struct Packet {
    PacketHeader hdr;
    std::array<uint8_t, TPU_ICI_PACKET_BYTES> data;
};

enum class LinkWait {
    Ok,
    Down,    // the link is down (or went down while waiting)
    Aborted, // the waiting engine's abort flag is set
    Cut,     // (receive) the message being read was cut short by its sender
};

class Channel {
  public:
    // Throws std::bad_alloc if the slots cannot be had.
    explicit Channel(uint32_t credits);

    // Sender: a new message number.
    uint64_t begin_message();
    // Sender: waits for a free slot (a credit) and returns it in *out, to be filled and then
    // published; Down or Aborted instead if the link goes down or abort is set first.
    LinkWait acquire(const std::atomic<bool> &abort, Packet **out);
    // last: the message's last packet. The receiver is woken once a batch of packets waits, or
    // at the end of a message.
    void publish(bool last);
    // Sender: message msg ends here, short of its length (the SEND failed or was aborted).
    void cut(uint64_t msg);

    // Receiver: waits for the next packet, or the end of message msg (Cut: the sender cut it
    // and nothing of it is left; 0 = none being read), Down or Aborted.
    LinkWait peek(const std::atomic<bool> &abort, uint64_t msg, const Packet **out);
    // Receiver: frees the slot peek() returned (returns its credit). A sender waiting for
    // credits is woken once a batch of them is free, or (last) at the end of a message.
    void pop(bool last = false);
    // Wakes a waiting sender or receiver whatever the batches: the end of a SEND or RECV, which
    // may leave the other side waiting for less than a batch.
    void kick();
    // Drops every packet waiting (the receiving card's reset); returns how many.
    uint32_t flush();

    // Link state: wired to cards at both ends. Going down drops what waits and wakes both sides.
    void set_up(bool up);
    bool up();
    // Wakes waiters so that they see an abort flag set before the call.
    void wake();
    // Packets waiting for the receiver (credits in use).
    uint32_t queued();
    uint32_t credits() const { return uint32_t(slots_.size()); }

    // The bridge's side (remote_link.hpp); none of these waits.
    // Called under the lock when a packet is published or a message cut (for a forwarding
    // bridge), or slots are freed (for a depositing one); an empty function for none.
    void set_listener(std::function<void()> listener);
    // Forwarding: the next published packet not yet forwarded, if any (the link up).
    bool forward_peek(const Packet **out);
    void forward_done();
    // Forwarding: a cut to send now, once every packet published before it is forwarded.
    bool forward_cut(uint64_t *msg);
    // Forwarding: the remote receiver freed count forwarded slots; false if more than are out.
    bool credit(uint32_t count);
    // Depositing: a free slot now, or null when the buffer is full or the link down.
    Packet *try_acquire();
    // Depositing: slots the receiver has freed since the channel was made (RECVs, flushes).
    uint64_t consumed();

  private:
    // Credits or packets that make a batch worth a wake-up (a futex call) of the other side.
    uint32_t batch() const { return slots_.size() / 4 ? uint32_t(slots_.size() / 4) : 1; }
    void notify_all();

    std::mutex m_;
    std::condition_variable tx_cv_; // a sender waits for credits
    std::condition_variable rx_cv_; // a receiver waits for packets
    uint32_t tx_waiting_ = 0;
    uint32_t rx_waiting_ = 0;
    std::vector<Packet> slots_;
    uint64_t head_ = 0; // next slot the receiver takes
    uint64_t tail_ = 0; // next slot the sender fills
    uint64_t next_msg_ = 1;
    uint64_t cut_ = 0; // the latest message cut short
    bool up_ = false;
    std::function<void()> listener_;
    uint64_t forwarded_ = 0;   // next slot a forwarding bridge sends (head_ <= it <= tail_)
    uint64_t cut_at_ = 0;      // tail_ when cut_ was set
    bool cut_pending_ = false; // cut_ not forwarded yet
    uint64_t freed_ = 0;       // slots freed by the receiver, ever
};

} // namespace tpu::engine
