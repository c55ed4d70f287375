// SPDX-License-Identifier: MIT
// device_report.hpp - prints what a card is (path, PCI slot, NUMA node, array and memories)
// and what it has done (its performance counters).
#pragma once

#include <tpurt/device_info.hpp>

void print_device_report(unsigned index, const tpurt::DeviceInfo &info);
// The card's cumulative counters (all processes since the last card reset).
void print_counters(const tpurt::DeviceCounters &counters);
