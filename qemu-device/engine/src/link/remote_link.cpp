// SPDX-License-Identifier: MIT
// A port linked to a card in another process over a byte stream (remote_link.hpp).
#include "link/remote_link.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "link/fabric.hpp"

namespace tpu::engine {
namespace {

// Output is made in chunks of about this much, so that one write moves many packets.
constexpr size_t kOutputChunk = 64 * 1024;

std::string shape(const wire::Hello &h) {
    const std::string topology = h.topology == TPU_ICI_TOPO_RING ? "ring "
                                 : h.topology == TPU_ICI_TOPO_TORUS2D
                                     ? "torus2d "
                                     : "topology " + std::to_string(h.topology) + " ";
    return topology + std::to_string(h.dim_x) + "x" + std::to_string(h.dim_y) + ", " +
           std::to_string(h.link_gbps) + " Gbit/s, " + std::to_string(h.hop_ns) + " ns a hop" +
           (h.topology == TPU_ICI_TOPO_TORUS2D
                ? " (y links " + std::to_string(h.y_link_gbps) + " Gbit/s, " +
                      std::to_string(h.y_hop_ns) + " ns)"
                : std::string()) +
           ", " + std::to_string(h.credits) + " credits, cards at " + std::to_string(h.clock_mhz) +
           " MHz";
}

std::string end(uint32_t x, uint32_t y, uint32_t port) {
    return "card " + std::to_string(x) + ":" + std::to_string(y) + " port " + std::to_string(port);
}

} // namespace

RemoteLink::RemoteLink(LinkEndpoint &ep, uint32_t port, Notify notify, void *opaque)
    : ep_(ep), port_(port), notify_(notify), opaque_(opaque), fabric_(ep.fabric()) {
    if (!fabric_)
        throw std::runtime_error("the card is not on a fabric");
    rx_ = std::make_shared<Channel>(fabric_->config().credits);
    if (const char *why = fabric_->bind_remote(&ep_, port_, this, rx_, &tx_))
        throw std::runtime_error(why);
    auto listener = [notify, opaque] { notify(opaque); };
    tx_->set_listener(listener);
    rx_->set_listener(listener);
}

RemoteLink::~RemoteLink() {
    down();
    tx_->set_listener({});
    rx_->set_listener({});
    fabric_->unbind_remote(&ep_, port_);
}

wire::Hello RemoteLink::mine() {
    tpu_link_info info;
    ep_.info(&info);
    return wire::Hello{info.topology, info.dim_x,   info.dim_y,       info.link_gbps,
                       info.hop_ns,   info.credits, ep_.clock_mhz(),  info.x,
                       info.y,        port_,        info.y_link_gbps, info.y_hop_ns};
}

void RemoteLink::down() {
    tx_->set_up(false);
    rx_->set_up(false);
}

void RemoteLink::open() {
    in_.clear();
    out_.clear();
    in_pos_ = out_pos_ = 0;
    seq_in_ = seq_out_ = 0;
    state_ = State::Hello;
    close_due_ = admin_down_;
    hello_due_ = !admin_down_;
    notify_(opaque_);
}

void RemoteLink::close() {
    if (state_ == State::Up) {
        PortCounters &c = ep_.counters(port_);
        c.errors++;
        c.error = true;
    }
    down();
    state_ = State::Closed;
    close_due_ = false;
    hello_due_ = false;
}

void RemoteLink::set_admin(bool up) {
    admin_down_ = !up;
    if (up || state_ == State::Closed)
        return;
    down();
    state_ = State::Failed;
    close_due_ = true;
    notify_(opaque_);
}

const char *RemoteLink::fail(std::string why) {
    if (state_ == State::Up) {
        PortCounters &c = ep_.counters(port_);
        c.errors++;
        c.error = true;
    }
    down();
    state_ = State::Failed;
    close_due_ = true;
    error_ = std::move(why);
    notify_(opaque_);
    return error_.c_str();
}

const char *RemoteLink::input(const uint8_t *data, size_t len) {
    if ((state_ != State::Hello && state_ != State::Up) || close_due_)
        return nullptr; // closing: what follows an error is not looked at
    in_.insert(in_.end(), data, data + len);
    const char *why = nullptr;
    while (!why && in_.size() - in_pos_ >= wire::kHeaderBytes) {
        const wire::Header h = wire::decode_header(in_.data() + in_pos_);
        if (const char *bad = wire::check_header(h)) {
            if (h.magic == wire::kMagic && h.version != wire::kVersion)
                return fail("the peer speaks version " + std::to_string(h.version) +
                            " of the link protocol, this QEMU version " +
                            std::to_string(wire::kVersion));
            return fail(bad);
        }
        if (h.seq != seq_in_ + 1)
            return fail("message " + std::to_string(h.seq) + " out of sequence (expected " +
                        std::to_string(seq_in_ + 1) + ")");
        if (in_.size() - in_pos_ < wire::kHeaderBytes + h.length)
            break;
        seq_in_++;
        why = handle(h, in_.data() + in_pos_ + wire::kHeaderBytes);
        in_pos_ += wire::kHeaderBytes + h.length;
    }
    if (why)
        return why;
    in_.erase(in_.begin(), in_.begin() + ptrdiff_t(in_pos_));
    in_pos_ = 0;
    return nullptr;
}

const char *RemoteLink::handle(const wire::Header &h, const uint8_t *body) {
    if (state_ == State::Hello && h.type != wire::kHello)
        return fail("a message before the hello");
    switch (h.type) {
    case wire::kHello:
        if (state_ == State::Up)
            return fail("a second hello");
        return hello(wire::decode_hello(body));
    case wire::kData:
        return data(h, body);
    case wire::kCredit: {
        const uint32_t count = uint32_t(wire::load(body, 4));
        if (count == 0 || !tx_->credit(count))
            return fail("credits returned for packets never sent");
        return nullptr;
    }
    default:
        rx_->cut(wire::load(body, 8));
        return nullptr;
    }
}

const char *RemoteLink::hello(const wire::Hello &peer) {
    const wire::Hello me = mine();
    if (peer.topology != me.topology || peer.dim_x != me.dim_x || peer.dim_y != me.dim_y ||
        peer.link_gbps != me.link_gbps || peer.hop_ns != me.hop_ns || peer.credits != me.credits ||
        peer.clock_mhz != me.clock_mhz || peer.y_link_gbps != me.y_link_gbps ||
        peer.y_hop_ns != me.y_hop_ns)
        return fail("the peer's fabric differs: " + shape(peer) + " there, " + shape(me) + " here");
    tpu_link_port_info info;
    ep_.port_info(port_, &info);
    if (peer.x != info.peer_x || peer.y != info.peer_y || peer.port != (port_ ^ 1))
        return fail("the peer is " + end(peer.x, peer.y, peer.port) + ", but " +
                    end(me.x, me.y, port_) + " leads to " +
                    end(info.peer_x, info.peer_y, port_ ^ 1));
    tx_->set_up(true);
    rx_->set_up(true);
    credited_ = rx_->consumed();
    state_ = State::Up;
    notify_(opaque_);
    return nullptr;
}

const char *RemoteLink::data(const wire::Header &h, const uint8_t *body) {
    const wire::DataBody d = wire::decode_data(body);
    const uint32_t bytes = h.length - uint32_t(wire::kDataBytes);
    if (d.msg_len == 0 || d.msg_len > TPU_ICI_MAX_BYTES || d.offset >= d.msg_len ||
        d.offset % TPU_ICI_PACKET_BYTES ||
        bytes != std::min<uint32_t>(d.msg_len - d.offset, TPU_ICI_PACKET_BYTES))
        return fail("a data message whose offset and length do not fit its message");
    Packet *packet = rx_->try_acquire();
    if (!packet)
        return fail("the peer sent more packets than it had credits");
    packet->hdr = PacketHeader{d.msg, h.tag, d.msg_len, d.offset, bytes, h.time};
    std::memcpy(packet->data.data(), body + wire::kDataBytes, bytes);
    rx_->publish(d.offset + bytes == d.msg_len);
    return nullptr;
}

void RemoteLink::fill() {
    if (close_due_)
        return;
    if (hello_due_) {
        wire::put_hello(out_, ++seq_out_, mine());
        hello_due_ = false;
    }
    if (state_ != State::Up)
        return;
    const uint64_t consumed = rx_->consumed();
    if (consumed != credited_) {
        wire::put_credit(out_, ++seq_out_, uint32_t(consumed - credited_));
        credited_ = consumed;
    }
    const Packet *packet;
    while (out_.size() < kOutputChunk && tx_->forward_peek(&packet)) {
        const PacketHeader &p = packet->hdr;
        wire::put_data(out_, ++seq_out_, p.tag, p.depart, wire::DataBody{p.msg, p.len, p.offset},
                       packet->data.data(), p.bytes);
        tx_->forward_done();
    }
    uint64_t msg;
    if (tx_->forward_cut(&msg))
        wire::put_cut(out_, ++seq_out_, msg);
}

size_t RemoteLink::output(const uint8_t **data) {
    if (out_pos_ == out_.size()) {
        out_.clear();
        out_pos_ = 0;
        fill();
    }
    *data = out_.data() + out_pos_;
    return out_.size() - out_pos_;
}

void RemoteLink::written(size_t n) {
    out_pos_ += std::min(n, out_.size() - out_pos_);
}

} // namespace tpu::engine
