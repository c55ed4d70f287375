// SPDX-License-Identifier: MIT
// RemoteLink: a card's port whose neighbour is a card in another QEMU process, reached over a
// byte stream (a QEMU socket chardev) in the wire format of wire.hpp (docs/hardware.md section
// 10, "Links to other processes"). It bridges the card's two channels of the link: it forwards
// the packets SENDs publish on the sending channel and frees their slots only as the remote
// receiver returns credits, so that the sender's credits are the remote buffer's; it deposits
// arriving packets in the card's receive buffer and returns a credit for each slot a RECV (or a
// reset) frees. Timestamps travel with the packets, so RECVs compute the same arrival as in
// one process.
//
// The link is up from a hello exchange that agrees on the protocol version, the fabric's shape,
// the cards' clock and the two ends' coordinates, until the connection closes, a message breaks
// the protocol (garbage, a wrong length, sequence or version, credits overrun) or it is taken
// down on demand; then both channels go down (packets waiting or in flight are lost, waiting jobs
// end LINK_DOWN), a failure is counted in the port's errors, and close_due() asks the owner to
// close the connection. A new connection brings the link up again with empty buffers.
//
// Every method runs on one thread (QEMU's main loop) and never blocks; notify(opaque) may be
// called from any thread, under a channel's lock, when there is something to send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "link/channel.hpp"
#include "link/wire.hpp"

namespace tpu::engine {

class Fabric;
class LinkEndpoint;

class RemoteLink {
  public:
    using Notify = void (*)(void *opaque);

    // Binds port of ep (on a fabric) to a peer elsewhere; throws std::runtime_error saying why
    // not, or std::bad_alloc. The link stays down until open() and the hellos.
    RemoteLink(LinkEndpoint &ep, uint32_t port, Notify notify, void *opaque);
    ~RemoteLink();
    RemoteLink(const RemoteLink &) = delete;
    RemoteLink &operator=(const RemoteLink &) = delete;

    // The connection opened (a hello is due) or closed (the link goes down).
    void open();
    void close();
    // Bytes that arrived; nullptr, or why the link went down (the connection is to be closed).
    const char *input(const uint8_t *data, size_t len);
    // Bytes to write now (more are made from the channels when none are left), and how many of
    // them were written.
    size_t output(const uint8_t **data);
    void written(size_t n);
    // The connection is to be closed (a protocol error, or the link taken down on demand).
    bool close_due() const { return close_due_; }
    bool up() const { return state_ == State::Up; }
    // Taken down on demand (the connection closes and the link stays down), or allowed up again
    // (with the next connection).
    void set_admin(bool up);

  private:
    enum class State { Closed, Hello, Up, Failed };

    const char *fail(std::string why);
    const char *handle(const wire::Header &h, const uint8_t *body);
    const char *hello(const wire::Hello &peer);
    const char *data(const wire::Header &h, const uint8_t *body);
    void down();
    void fill();
    wire::Hello mine();

    LinkEndpoint &ep_;
    const uint32_t port_;
    const Notify notify_;
    void *const opaque_;
    std::shared_ptr<Fabric> fabric_;
    std::shared_ptr<Channel> tx_; // the card's sending channel, forwarded
    std::shared_ptr<Channel> rx_; // the card's receive buffer, deposited into
    State state_ = State::Closed;
    bool admin_down_ = false;
    bool close_due_ = false;
    bool hello_due_ = false;
    uint64_t seq_in_ = 0, seq_out_ = 0;
    uint64_t credited_ = 0; // rx_->consumed() already returned as credits
    std::vector<uint8_t> in_, out_;
    size_t in_pos_ = 0, out_pos_ = 0;
    std::string error_;
};

} // namespace tpu::engine
