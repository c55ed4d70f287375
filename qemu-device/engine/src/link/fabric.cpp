// SPDX-License-Identifier: MIT
// The fabric's wiring of cards and ports, and a card's endpoint on it (fabric.hpp).
#include "link/fabric.hpp"

#include <cstring>

#include "link/remote_link.hpp"

namespace tpu::engine {

tpu_fabric_config Fabric::with_y_figures(tpu_fabric_config cfg) {
    if (cfg.y_link_gbps == 0)
        cfg.y_link_gbps = cfg.link_gbps;
    if (cfg.y_hop_ns == 0)
        cfg.y_hop_ns = cfg.hop_ns;
    return cfg;
}

const char *Fabric::config_error(const tpu_fabric_config &cfg) {
    if (cfg.topology != TPU_ICI_TOPO_RING && cfg.topology != TPU_ICI_TOPO_TORUS2D)
        return "topology must be a ring or a 2-D torus";
    if (cfg.dim_x < 2 || cfg.dim_x > TPU_ICI_MAX_DIM)
        return "the x dimension must be 2..64";
    if (cfg.topology == TPU_ICI_TOPO_RING ? cfg.dim_y != 1
                                          : cfg.dim_y < 2 || cfg.dim_y > TPU_ICI_MAX_DIM)
        return "a ring has one dimension (dim_y 1), a 2-D torus a y dimension of 2..64";
    if (cfg.link_gbps == 0 || cfg.link_gbps > 1000000)
        return "link bandwidth must be 1..1000000 Gbit/s";
    if (cfg.hop_ns > 1000000000)
        return "hop latency must be at most 1 s";
    if (cfg.credits < 2 || cfg.credits > 65536)
        return "credits must be 2..65536 packets";
    if ((cfg.y_link_gbps || cfg.y_hop_ns) && cfg.topology != TPU_ICI_TOPO_TORUS2D)
        return "only a 2-D torus has y links of their own";
    if (cfg.y_link_gbps > 1000000)
        return "the y links' bandwidth must be 1..1000000 Gbit/s";
    if (cfg.y_hop_ns > 1000000000)
        return "the y links' hop latency must be at most 1 s";
    return nullptr;
}

Fabric::Fabric(const tpu_fabric_config &cfg)
    : cfg_(with_y_figures(cfg)), cards_(size_t(cfg.dim_x) * cfg.dim_y, nullptr),
      remote_(size_t(cfg.dim_x) * cfg.dim_y, 0) {}

void Fabric::neighbour(uint32_t x, uint32_t y, uint32_t port, uint32_t *nx, uint32_t *ny) const {
    *nx = x;
    *ny = y;
    switch (port) {
    case 0:
        *nx = (x + 1) % cfg_.dim_x;
        break;
    case 1:
        *nx = (x + cfg_.dim_x - 1) % cfg_.dim_x;
        break;
    case 2:
        *ny = (y + 1) % cfg_.dim_y;
        break;
    default:
        *ny = (y + cfg_.dim_y - 1) % cfg_.dim_y;
        break;
    }
}

const char *Fabric::attach(const std::shared_ptr<Fabric> &self, LinkEndpoint *ep, uint32_t x,
                           uint32_t y) {
    std::lock_guard lock(m_);
    if (x >= cfg_.dim_x || y >= cfg_.dim_y)
        return "the coordinate lies outside the fabric";
    if (cards_[index(x, y)])
        return "another card already has that coordinate";
    if (remote_[index(x, y)])
        return "a card of another process, linked by a chardev, has that coordinate";
    if (attached_ && ep->clock_mhz() != clock_mhz_)
        return "the card's clock differs from the other cards' on the fabric";

    // Every channel first (the only step that may fail), then the wiring. The fabric's lock
    // keeps attach and detach apart; one endpoint's lock is held at a time.
    std::array<LinkEndpoint::Port, TPU_ICI_MAX_PORTS> ports{};
    for (uint32_t p = 0; p < this->ports(); p++)
        ports[p].tx = std::make_shared<Channel>(cfg_.credits);
    for (uint32_t p = 0; p < this->ports(); p++) {
        LinkEndpoint::Port &port = ports[p];
        neighbour(x, y, p, &port.peer_x, &port.peer_y);
        LinkEndpoint *peer = cards_[index(port.peer_x, port.peer_y)];
        if (!peer)
            continue;
        std::lock_guard peer_lock(peer->m_);
        LinkEndpoint::Port &back = peer->ports_[p ^ 1];
        port.rx = back.tx;
        back.rx = port.tx;
    }
    {
        std::lock_guard ep_lock(ep->m_);
        ep->fabric_ = self;
        ep->x_ = x;
        ep->y_ = y;
        ep->ports_ = ports;
    }
    for (const LinkEndpoint::Port &port : ports) {
        if (port.tx && port.rx) {
            port.tx->set_up(true);
            port.rx->set_up(true);
        }
    }
    cards_[index(x, y)] = ep;
    clock_mhz_ = ep->clock_mhz();
    attached_++;
    return nullptr;
}

void Fabric::detach(LinkEndpoint *ep) {
    std::lock_guard lock(m_);
    std::array<LinkEndpoint::Port, TPU_ICI_MAX_PORTS> ports;
    {
        std::lock_guard ep_lock(ep->m_);
        if (cards_[index(ep->x_, ep->y_)] != ep)
            return;
        cards_[index(ep->x_, ep->y_)] = nullptr;
        ports = ep->ports_;
        ep->ports_ = {};
    }
    attached_--;
    for (uint32_t p = 0; p < this->ports(); p++) {
        const LinkEndpoint::Port &port = ports[p];
        if (port.tx)
            port.tx->set_up(false);
        if (port.rx)
            port.rx->set_up(false);
        if (port.remote)
            remote_[index(port.peer_x, port.peer_y)]--;
        LinkEndpoint *peer = cards_[index(port.peer_x, port.peer_y)];
        if (peer) {
            std::lock_guard peer_lock(peer->m_);
            peer->ports_[p ^ 1].rx.reset();
        }
    }
}

const char *Fabric::bind_remote(LinkEndpoint *ep, uint32_t port, RemoteLink *link,
                                const std::shared_ptr<Channel> &rx, std::shared_ptr<Channel> *tx) {
    std::lock_guard lock(m_);
    std::lock_guard ep_lock(ep->m_);
    if (cards_[index(ep->x_, ep->y_)] != ep)
        return "the card is not on the fabric";
    if (port >= ports())
        return cfg_.topology == TPU_ICI_TOPO_RING ? "a card on a ring has ports 0 and 1"
                                                  : "a card on a 2-D torus has ports 0..3";
    LinkEndpoint::Port &p = ep->ports_[port];
    if (p.remote)
        return "the port is bound to a chardev already";
    if (cards_[index(p.peer_x, p.peer_y)])
        return "the port's neighbour is a card of this process";
    remote_[index(p.peer_x, p.peer_y)]++;
    p.remote = link;
    p.rx = rx;
    *tx = p.tx;
    return nullptr;
}

void Fabric::unbind_remote(LinkEndpoint *ep, uint32_t port) {
    std::lock_guard lock(m_);
    std::lock_guard ep_lock(ep->m_);
    LinkEndpoint::Port &p = ep->ports_[port];
    if (!p.remote)
        return;
    remote_[index(p.peer_x, p.peer_y)]--;
    p.remote = nullptr;
    p.rx.reset();
}

const char *Fabric::set_link(uint32_t x, uint32_t y, uint32_t port, bool up) {
    std::lock_guard lock(m_);
    if (x >= cfg_.dim_x || y >= cfg_.dim_y || !cards_[index(x, y)])
        return "no card of this process has that coordinate";
    if (port >= ports())
        return "the card has no such port";
    LinkEndpoint *ep = cards_[index(x, y)];
    std::lock_guard ep_lock(ep->m_);
    LinkEndpoint::Port &p = ep->ports_[port];
    if (p.remote) {
        p.remote->set_admin(up);
        return nullptr;
    }
    if (!p.tx || !p.rx)
        return up ? "no card sits at the link's other end" : nullptr;
    p.tx->set_up(up);
    p.rx->set_up(up);
    return nullptr;
}

const char *LinkEndpoint::attach(const std::shared_ptr<Fabric> &fabric, uint32_t x, uint32_t y) {
    {
        std::lock_guard lock(m_);
        if (fabric_)
            return "the card is already on a fabric";
    }
    return fabric->attach(fabric, this, x, y);
}

void LinkEndpoint::detach() {
    std::shared_ptr<Fabric> fabric;
    {
        std::lock_guard lock(m_);
        fabric = fabric_;
    }
    if (!fabric)
        return;
    fabric->detach(this);
    std::lock_guard lock(m_);
    fabric_.reset();
}

std::shared_ptr<Channel> LinkEndpoint::tx(uint32_t port) {
    std::lock_guard lock(m_);
    return port < TPU_ICI_MAX_PORTS ? ports_[port].tx : nullptr;
}

std::shared_ptr<Channel> LinkEndpoint::rx(uint32_t port) {
    std::lock_guard lock(m_);
    return port < TPU_ICI_MAX_PORTS ? ports_[port].rx : nullptr;
}

std::shared_ptr<Fabric> LinkEndpoint::fabric() {
    std::lock_guard lock(m_);
    return fabric_;
}

LinkEndpoint::Params LinkEndpoint::params(uint32_t port) {
    std::lock_guard lock(m_);
    if (!fabric_)
        return {};
    const tpu_fabric_config &cfg = fabric_->config();
    if (port == 2 || port == 3)
        return {cfg.y_link_gbps, cfg.y_hop_ns};
    return {cfg.link_gbps, cfg.hop_ns};
}

void LinkEndpoint::wake() {
    std::lock_guard lock(m_);
    for (Port &port : ports_) {
        if (port.tx)
            port.tx->wake();
        if (port.rx)
            port.rx->wake();
    }
}

void LinkEndpoint::flush() {
    std::lock_guard lock(m_);
    for (uint32_t p = 0; p < TPU_ICI_MAX_PORTS; p++)
        if (ports_[p].rx)
            counters_[p].rx_packets += ports_[p].rx->flush();
}

void LinkEndpoint::clear_counters() {
    for (PortCounters &c : counters_) {
        c.tx_bytes = 0;
        c.rx_bytes = 0;
        c.tx_packets = 0;
        c.rx_packets = 0;
        c.errors = 0;
        c.error = false;
    }
}

void LinkEndpoint::info(tpu_link_info *out) {
    std::lock_guard lock(m_);
    std::memset(out, 0, sizeof(*out));
    if (!fabric_)
        return;
    const tpu_fabric_config &cfg = fabric_->config();
    out->ports = fabric_->ports();
    out->topology = cfg.topology;
    out->x = x_;
    out->y = y_;
    out->dim_x = cfg.dim_x;
    out->dim_y = cfg.dim_y;
    out->link_gbps = cfg.link_gbps;
    out->hop_ns = cfg.hop_ns;
    out->credits = cfg.credits;
    out->y_link_gbps = cfg.y_link_gbps;
    out->y_hop_ns = cfg.y_hop_ns;
}

bool LinkEndpoint::port_info(uint32_t port, tpu_link_port_info *out) {
    std::memset(out, 0, sizeof(*out));
    if (port >= TPU_ICI_MAX_PORTS)
        return false;
    std::shared_ptr<Channel> rx;
    {
        std::lock_guard lock(m_);
        if (!fabric_ || port >= fabric_->ports())
            return false;
        const Port &p = ports_[port];
        rx = p.rx;
        out->up = p.tx && p.tx->up() && rx && rx->up();
        out->peer_port = port ^ 1;
        out->peer_x = p.peer_x;
        out->peer_y = p.peer_y;
    }
    const PortCounters &c = counters_[port];
    out->error = c.error;
    out->rx_queued = rx ? rx->queued() : 0;
    out->tx_bytes = c.tx_bytes;
    out->rx_bytes = c.rx_bytes;
    out->tx_packets = c.tx_packets;
    out->rx_packets = c.rx_packets;
    out->errors = c.errors;
    return true;
}

} // namespace tpu::engine
