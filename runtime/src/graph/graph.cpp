// SPDX-License-Identifier: MIT
// graph.cpp - a captured sequence of launches joined into one executable and replayed on a
// stream, with its parameters (graph.hpp).
#include "tpurt/graph.hpp"

#include "device/device_state.hpp"
#include "graph/graph_state.hpp"
#include "graph/program_fusion.hpp"
#include "graph/program_schedule.hpp"
#include "tpurt/error.hpp"
#include "tpurt/stream.hpp"

#include <algorithm>

namespace tpurt {

namespace detail {

namespace {

DType zero_type(const DeviceInfo &info) {
    for (DType t : {DType::Fp32, DType::Bf16, DType::Int8})
        if (info.supports(t))
            return t;
    throw Error(ErrorCode::Unsupported, "the card supports no matmul type");
}

void keep(std::vector<std::shared_ptr<Buffer>> &buffers, const std::shared_ptr<Buffer> &b) {
    if (std::find(buffers.begin(), buffers.end(), b) == buffers.end())
        buffers.push_back(b);
}

} // namespace

std::shared_ptr<GraphState> make_graph(Device &device, std::string name,
                                       std::vector<OpLaunch> launches) {
    if (launches.empty())
        throw Error(ErrorCode::InvalidArgument,
                    "graph " + name +
                        ": nothing was captured between begin_capture() and "
                        "end_capture()");
    auto graph = std::make_shared<GraphState>();
    graph->name = std::move(name);
    graph->device = &state_of(device);
    graph->launches = launches.size();
    // Argument a of the joined executable is the a-th argument of the captured launches in
    // order.
    std::vector<ExecutableArg> args;
    std::vector<Program> programs;
    OpLaunch &joined = graph->launch;
    const DeviceInfo &info = device.info();
    ScheduleTarget schedule{.limits = info.limits,
                            .clock_mhz = info.clock_mhz ? info.clock_mhz : 700,
                            .dma_mbps = 44800,
                            .arg_bases = {}};
    for (const OpLaunch &l : launches) {
        const Executable &exe = *l.executable;
        std::vector<std::uint64_t> placeholders;
        for (const ExecutableArg &arg : exe.args()) {
            placeholders.push_back(Executable::placeholder(args.size()));
            args.push_back({l.name() + "." + arg.name, arg.bytes});
        }
        joined.bases.insert(joined.bases.end(), l.bases.begin(), l.bases.end());
        schedule.arg_bases = joined.bases;
        for (std::size_t p = 0; p < exe.program_count(); ++p)
            programs.push_back(schedule_program(exe.patched(p, placeholders), schedule));
        graph->eager_jobs += exe.program_count();
        for (const std::shared_ptr<Buffer> &b : l.buffers)
            keep(joined.buffers, b);
    }
    if (!info.has_vector_unit())
        throw Error(ErrorCode::Unsupported,
                    "graph " + graph->name +
                        ": capture needs the card's vector unit (CAPS.VPU), which resets the "
                        "unified buffer between the joined programs");
    const FusionTarget target{.limits = info.limits, .zero_type = zero_type(info)};
    joined.executable = std::make_shared<const Executable>(
        Executable::link_graph(graph->name, std::move(args), fuse_programs(programs, target)));
    return graph;
}

} // namespace detail

detail::GraphState &Graph::state() const {
    if (!state_)
        throw Error(ErrorCode::InvalidArgument, "an empty graph (nothing captured)");
    return *state_;
}

const std::string &Graph::name() const {
    return state().name;
}

std::size_t Graph::launch_count() const {
    return state().launches;
}

std::size_t Graph::eager_job_count() const {
    return state().eager_jobs;
}

std::size_t Graph::job_count() const {
    return state().launch.executable->program_count();
}

std::uint64_t Graph::instruction_count() const {
    return state().launch.executable->instruction_count();
}

void Graph::add_parameter(const std::string &name, const Tensor &slot) {
    detail::GraphState &g = state();
    if (!g.parameters.emplace(name, detail::GraphParameter{slot, {}, false}).second)
        throw Error(ErrorCode::InvalidArgument,
                    "graph " + g.name + ": parameter " + name + " is declared already");
}

void Graph::set_parameter(const std::string &name, const void *data, std::size_t bytes) {
    detail::GraphState &g = state();
    auto it = g.parameters.find(name);
    if (it == g.parameters.end())
        throw Error(ErrorCode::InvalidArgument,
                    "graph " + g.name + " has no parameter " + name + " (add_parameter())");
    const Tensor &slot = it->second.slot;
    const std::size_t expected = slot.element_count() * element_size(slot.dtype());
    if (bytes != expected)
        throw Error(ErrorCode::InvalidArgument, "graph " + g.name + ": parameter " + name +
                                                    " takes " + std::to_string(expected) +
                                                    " bytes, not " + std::to_string(bytes));
    const auto *p = static_cast<const std::byte *>(data);
    it->second.pending.assign(p, p + bytes);
    it->second.set = true;
}

void Graph::set_parameter(const std::string &name, std::span<const float> values) {
    detail::GraphState &g = state();
    auto it = g.parameters.find(name);
    if (it != g.parameters.end() && it->second.slot.dtype() != DType::Fp32)
        throw Error(ErrorCode::InvalidArgument,
                    "graph " + g.name + ": parameter " + name + " is not an fp32 tensor");
    set_parameter(name, values.data(), values.size_bytes());
}

void Graph::replay(Stream &stream) {
    detail::GraphState &g = state();
    if (&detail::state_of(stream.device()) != g.device)
        throw Error(ErrorCode::InvalidArgument,
                    "graph " + g.name + " was captured on another device than the stream's");
    for (const std::shared_ptr<Buffer> &b : g.launch.buffers)
        if (b->handle() == 0)
            throw Error(ErrorCode::InvalidArgument,
                        "graph " + g.name +
                            ": a captured buffer was released; capture the ops again on live "
                            "tensors");
    for (auto &[name, parameter] : g.parameters) {
        if (!parameter.set)
            continue;
        auto bytes = std::make_shared<std::vector<std::byte>>(std::move(parameter.pending));
        parameter.set = false;
        stream.enqueue_host("graph " + g.name + " parameter " + name,
                            [slot = parameter.slot, bytes]() mutable {
                                slot.copy_from_host(bytes->data(), bytes->size());
                            },
                            {parameter.slot.storage()});
    }
    stream.enqueue(g.launch);
}

} // namespace tpurt
