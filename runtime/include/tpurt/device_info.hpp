// SPDX-License-Identifier: MIT
// device_info.hpp - what the runtime knows about one card: the limits of its matrix unit and
// on-chip memories (all the matmul compiler needs) and the identity, capabilities and
// placement of the device reported by the driver and sysfs.
#pragma once

#include "tpurt/types/dtype.hpp"

#include <cstdint>
#include <string>

namespace tpurt {

// The card's compute and on-chip memory limits; a pure value the compiler plans tiles with.
struct ArrayLimits {
    std::uint32_t mxu_rows = 0;  // max K of a weight tile
    std::uint32_t mxu_cols = 0;  // max N of a weight tile
    std::uint32_t ub_bytes = 0;  // unified buffer
    std::uint32_t acc_bytes = 0; // accumulator memory
};

// The card's place on an inter-chip fabric (spec 2.0, docs/hardware.md section 10): what its
// ICI registers say (tpu.ko's sysfs ici/, or the engine's fabric in the process).
struct IciPlace {
    std::uint32_t topology = 0; // TPU_ICI_TOPO_RING or _TORUS2D; 0: on no fabric
    std::uint32_t ports = 0;    // 2 on a ring, 4 on a torus
    std::uint32_t x = 0, y = 0;
    std::uint32_t dim_x = 0, dim_y = 0; // dim_y 1 on a ring
    std::uint32_t link_gbps = 0;
    std::uint32_t hop_ns = 0;
    std::uint32_t credits = 0; // packets of TPU_ICI_PACKET_BYTES a receive buffer holds
    // The y links' figures (ports 2 and 3 of a torus; spec 2.4): the links between the servers
    // of a pod may be slower. The x links' on a ring and on a card before 2.4.
    std::uint32_t y_link_gbps = 0;
    std::uint32_t y_hop_ns = 0;

    bool on_fabric() const { return topology != 0 && ports != 0; }
    // The coordinate of the neighbour through `port` (< ports), fixed by the topology.
    std::uint32_t neighbour_x(std::uint32_t port) const {
        return port == 0 ? (x + 1) % dim_x : port == 1 ? (x + dim_x - 1) % dim_x : x;
    }
    std::uint32_t neighbour_y(std::uint32_t port) const {
        return port == 2 ? (y + 1) % dim_y : port == 3 ? (y + dim_y - 1) % dim_y : y;
    }
};

struct DeviceInfo {
    std::string path;               // e.g. /dev/accel/accel0
    unsigned minor = 0;             // N of accelN
    std::string pci_slot;           // e.g. 0000:00:03.0, empty if sysfs does not say
    int numa_node = -1;             // node of the PCI device, -1 if unknown or not NUMA
    std::uint32_t device_id = 0;    // PCI device id
    std::uint32_t spec_version = 0; // major << 16 | minor
    std::uint32_t caps = 0;         // TPU_CAP_*
    std::uint32_t clock_mhz = 0;    // modelled clock
    ArrayLimits limits;
    std::uint64_t va_start = 0; // device address space handed out to this process
    std::uint64_t va_size = 0;
    IciPlace ici; // spec 2.0 cards on a fabric (TPU_CAP_ICI)

    bool supports(DType input_type) const {
        switch (input_type) {
        case DType::Int8:
            return caps & TPU_CAP_INT8;
        case DType::Bf16:
            return caps & TPU_CAP_BF16;
        case DType::Fp32:
            return caps & TPU_CAP_FP32;
        default:
            return false;
        }
    }
    bool has_vector_unit() const { return caps & TPU_CAP_VPU; }
    unsigned spec_major() const { return spec_version >> 16; }
    unsigned spec_minor() const { return spec_version & 0xffff; }
    // Peak multiply-accumulates per modelled cycle.
    std::uint64_t peak_macs_per_cycle() const {
        return std::uint64_t{limits.mxu_rows} * limits.mxu_cols;
    }
};

// Cumulative performance counters of the card (all processes).
struct DeviceCounters {
    std::uint64_t cycles = 0;
    std::uint64_t macs = 0;
    std::uint64_t jobs_done = 0;
    std::uint64_t jobs_failed = 0;
};

} // namespace tpurt
