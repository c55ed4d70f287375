// SPDX-License-Identifier: MIT
// Fabric: the inter-chip interconnect that cards join (docs/hardware.md section 10) — a ring or
// a 2-D torus of dim_x x dim_y coordinates, each card a coordinate, each port wired to the
// neighbour one hop away: port 0 +x, 1 -x, 2 +y, 3 -y; a link joins port p of one card to port
// p ^ 1 of its neighbour. Each direction of a link is a Channel, made when its sending card
// attaches and up while cards sit at both ends. LinkEndpoint is a card's side: its coordinate,
// its ports' channels, counters and error flags. The fabric's lock guards the wiring and is
// taken only to attach and detach; an endpoint's lock guards its channel pointers, which a job
// copies (shared ownership) before it uses them, so a peer that detaches mid-transfer leaves
// its channels alive but down. A port may instead lead to a card in another QEMU process
// (remote_link.hpp): its neighbour's coordinate is then claimed for that process, no card here
// may take it, and the port's receive buffer is the bridge's.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "link/channel.hpp"
#include "tpu_engine.h"
#include "tpu_hw.h"

namespace tpu::engine {

class LinkEndpoint;
class RemoteLink;

class Fabric {
  public:
    // nullptr if cfg is usable, else why not.
    static const char *config_error(const tpu_fabric_config &cfg);
    // cfg with its y links' figures filled in: the x links' where it gives none.
    static tpu_fabric_config with_y_figures(tpu_fabric_config cfg);
    explicit Fabric(const tpu_fabric_config &cfg);

    const tpu_fabric_config &config() const { return cfg_; }
    uint32_t ports() const { return cfg_.topology == TPU_ICI_TOPO_RING ? 2 : 4; }

    // Places ep at (x, y): nullptr on success, else why not (taken, outside, other clock).
    const char *attach(const std::shared_ptr<Fabric> &self, LinkEndpoint *ep, uint32_t x,
                       uint32_t y);
    void detach(LinkEndpoint *ep);

    // Binds port of ep (attached) to link, a peer in another process, with rx its receive buffer;
    // *tx is the port's sending channel. nullptr, or why not (no such port, a card of this
    // process at the neighbour's coordinate, bound already).
    const char *bind_remote(LinkEndpoint *ep, uint32_t port, RemoteLink *link,
                            const std::shared_ptr<Channel> &rx, std::shared_ptr<Channel> *tx);
    void unbind_remote(LinkEndpoint *ep, uint32_t port);
    // Takes the link on port of the card at (x, y) down, or up again once both ends are there
    // (a link to another process comes up with its next connection); nullptr, or why not.
    const char *set_link(uint32_t x, uint32_t y, uint32_t port, bool up);

    // The coordinate one hop from (x, y) through port.
    void neighbour(uint32_t x, uint32_t y, uint32_t port, uint32_t *nx, uint32_t *ny) const;

  private:
    uint32_t index(uint32_t x, uint32_t y) const { return y * cfg_.dim_x + x; }

    const tpu_fabric_config cfg_;
    std::mutex m_;
    std::vector<LinkEndpoint *> cards_; // by index(x, y)
    std::vector<uint32_t> remote_;      // by index(x, y): ports of cards here bound to it
    uint32_t clock_mhz_ = 0;            // of the cards attached (all the same)
    uint32_t attached_ = 0;
};

// Per-port counters (the PORT_* registers), updated by the card's jobs.
struct PortCounters {
    std::atomic<uint64_t> tx_bytes{0}, rx_bytes{0}, tx_packets{0}, rx_packets{0}, errors{0};
    std::atomic<bool> error{false};
};

class LinkEndpoint {
  public:
    explicit LinkEndpoint(uint32_t clock_mhz) : clock_mhz_(clock_mhz) {}
    ~LinkEndpoint() { detach(); }

    // Joins fabric at (x, y); nullptr on success, else why not.
    const char *attach(const std::shared_ptr<Fabric> &fabric, uint32_t x, uint32_t y);
    // Leaves the fabric: its links go down, a peer waiting on one ends LINK_DOWN.
    void detach();

    // The channel a SEND (tx) or RECV (rx) on port uses; null when the port has no link.
    std::shared_ptr<Channel> tx(uint32_t port);
    std::shared_ptr<Channel> rx(uint32_t port);
    // The figures of port's link a job's cycle model uses: the y links' on ports 2 and 3 of a
    // torus (zero when not attached).
    struct Params {
        uint32_t link_gbps = 0, hop_ns = 0;
    };
    Params params(uint32_t port);

    // Wakes every wait of this card's jobs (its abort flag was just set).
    void wake();
    // Drops what waits in this card's receive buffers (a reset); counted as received packets.
    void flush();
    // Clears the counters and error flags (a global reset).
    void clear_counters();
    void info(tpu_link_info *out);
    bool port_info(uint32_t port, tpu_link_port_info *out);

    PortCounters &counters(uint32_t port) { return counters_[port]; }
    // The fabric the card is on, or null.
    std::shared_ptr<Fabric> fabric();
    uint32_t clock_mhz() const { return clock_mhz_; }

  private:
    friend class Fabric;

    struct Port {
        std::shared_ptr<Channel> tx, rx;
        uint32_t peer_x = 0, peer_y = 0;
        RemoteLink *remote = nullptr; // the peer is in another process
    };

    const uint32_t clock_mhz_;
    std::mutex m_;
    std::shared_ptr<Fabric> fabric_;
    uint32_t x_ = 0, y_ = 0;
    std::array<Port, TPU_ICI_MAX_PORTS> ports_{};
    std::array<PortCounters, TPU_ICI_MAX_PORTS> counters_{};
};

} // namespace tpu::engine
