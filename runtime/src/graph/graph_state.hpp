// SPDX-License-Identifier: MIT
// graph_state.hpp - internal: what a tpurt::Graph holds (graph.hpp) and how Stream::end_capture()
// makes it from the captured launches.
#pragma once

#include "tpurt/card/launch.hpp"
#include "tpurt/device.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tpurt::detail {

struct DeviceState;

struct GraphParameter {
    Tensor slot;
    std::vector<std::byte> pending; // written by the next replay
    bool set = false;
};

struct GraphState {
    std::string name;
    const DeviceState *device = nullptr; // the device captured on
    OpLaunch launch;                     // the joined executable on every captured argument
    std::size_t launches = 0, eager_jobs = 0;
    std::map<std::string, GraphParameter> parameters;
};

// The launches joined into one executable (program_fusion.hpp); throws Error(InvalidArgument)
// for none.
std::shared_ptr<GraphState> make_graph(Device &device, std::string name,
                                       std::vector<OpLaunch> launches);

} // namespace tpurt::detail
