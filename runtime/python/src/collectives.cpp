// SPDX-License-Identifier: MIT
// collectives.cpp - tpurt.CommId and tpurt.Communicator: NCCL-shaped collectives over the cards'
// links (all-reduce, reduce-scatter, all-gather, broadcast, all-to-all, send-recv), one
// communicator for every card a process drives (init_all) or one rank a process
// (init_rank). Each call queues every local rank's part on that rank's stream.
#include "bindings.hpp"

#include <pybind11/stl.h>

#include <tpurt/collectives.hpp>
#include <tpurt/stream.hpp>

#include <stdexcept>
#include <string>

namespace tpurt_python {

namespace {

tpurt::CollectiveAlgorithm algorithm_of(const std::string &name) {
    if (const auto a = tpurt::algorithm_named(name))
        return *a;
    throw py::value_error("unknown collective algorithm '" + name +
                          "': auto, ring, bidir_ring, torus2d or hierarchical");
}

tpurt::ReduceKind reduce_of(const std::string &name) {
    if (name == "sum")
        return tpurt::ReduceKind::Sum;
    if (name == "max")
        return tpurt::ReduceKind::Max;
    if (name == "min")
        return tpurt::ReduceKind::Min;
    throw py::value_error("unknown reduction '" + name + "': sum, max or min");
}

tpurt::CommOptions options_of(double timeout, const std::string &algorithm) {
    tpurt::CommOptions o;
    o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout * 1000));
    o.algorithm = algorithm_of(algorithm);
    return o;
}

using Streams = std::vector<tpurt::Stream *>;
using Tensors = std::vector<tpurt::Tensor>;

} // namespace

void bind_collectives(py::module_ &m) {
    py::class_<tpurt::CommId>(m, "CommId",
                              "A communicator's name: made once, handed to every rank.")
        .def_static("make", &tpurt::CommId::make, "A random id.")
        .def_static(
            "from_bytes",
            [](const py::bytes &b) {
                const std::string s = b;
                tpurt::CommId id;
                if (s.size() != id.bytes.size())
                    throw py::value_error("a CommId is 16 bytes");
                std::copy(s.begin(), s.end(), id.bytes.begin());
                return id;
            },
            py::arg("data"), "The id another rank sent (bytes()).")
        .def(
            "bytes",
            [](const tpurt::CommId &id) {
                return py::bytes(reinterpret_cast<const char *>(id.bytes.data()), id.bytes.size());
            },
            "The 16 bytes to send to the other ranks.");

    py::class_<tpurt::Communicator>(
        m, "Communicator",
        "Collectives across cards joined by links. A failed collective raises at its stream's "
        "synchronize() and fails the communicator (async_error()); then make a new one.")
        .def_static(
            "init_all",
            [](std::vector<tpurt::Device> devices, double timeout, const std::string &algorithm) {
                return tpurt::Communicator::init_all(std::move(devices),
                                                     options_of(timeout, algorithm));
            },
            py::arg("devices"), py::arg("timeout") = 30.0, py::arg("algorithm") = "auto",
            "One process driving every card: rank i on devices[i] (cards of one fabric). "
            "timeout in seconds; algorithm auto, ring, bidir_ring, torus2d or hierarchical.")
        .def_static(
            "init_rank",
            [](tpurt::Device device, std::uint32_t nranks, const tpurt::CommId &id,
               std::uint32_t rank, double timeout, const std::string &algorithm) {
                return tpurt::Communicator::init_rank(std::move(device), nranks, id, rank,
                                                      options_of(timeout, algorithm));
            },
            py::arg("device"), py::arg("nranks"), py::arg("id"), py::arg("rank"),
            py::arg("timeout") = 30.0, py::arg("algorithm") = "auto",
            "Rank `rank` of `nranks` on `device`, the other ranks in other processes (the same "
            "id).")
        .def_static("fabric_rank", &tpurt::Communicator::fabric_rank, py::arg("info"),
                    "The rank a card takes in init_rank(): its position on its fabric's ring.")
        .def_property_readonly("nranks", &tpurt::Communicator::nranks, "The number of ranks.")
        .def_property_readonly("local_ranks", &tpurt::Communicator::local_ranks,
                               "The ranks driven by this process, in the order the collectives "
                               "take their streams and tensors.")
        .def_property_readonly("ring_positions", &tpurt::Communicator::ring_positions,
                               "Each rank's position on the ring (the reduction order).")
        .def(
            "algorithm",
            [](const tpurt::Communicator &c, std::uint64_t bytes) {
                return std::string(tpurt::algorithm_name(c.algorithm(bytes)));
            },
            py::arg("bytes"), "The algorithm all-reduce runs for a buffer of `bytes`.")
        .def(
            "all_reduce",
            [](tpurt::Communicator &c, const Streams &s, const Tensors &send, const Tensors &recv,
               const std::string &op) { c.all_reduce(s, send, recv, reduce_of(op)); },
            py::arg("streams"), py::arg("send"), py::arg("recv"), py::arg("op") = "sum",
            py::call_guard<py::gil_scoped_release>(),
            "recv[i] = the reduction (sum, max, min) over the ranks of send[i]; streams[i], "
            "send[i] "
            "and recv[i] belong to local_ranks[i] (so in every collective).")
        .def(
            "reduce_scatter",
            [](tpurt::Communicator &c, const Streams &s, const Tensors &send, const Tensors &recv,
               const std::string &op) { c.reduce_scatter(s, send, recv, reduce_of(op)); },
            py::arg("streams"), py::arg("send"), py::arg("recv"), py::arg("op") = "sum",
            py::call_guard<py::gil_scoped_release>(),
            "recv[i] (n elements) = the reduction of block `rank` of every rank's send (n x "
            "nranks).")
        .def(
            "all_gather",
            [](tpurt::Communicator &c, const Streams &s, const Tensors &send, const Tensors &recv) {
                c.all_gather(s, send, recv);
            },
            py::arg("streams"), py::arg("send"), py::arg("recv"),
            py::call_guard<py::gil_scoped_release>(),
            "Block k of recv[i] (n x nranks) = rank k's send (n).")
        .def(
            "broadcast",
            [](tpurt::Communicator &c, const Streams &s, const Tensors &send, const Tensors &recv,
               std::uint32_t root) { c.broadcast(s, send, recv, root); },
            py::arg("streams"), py::arg("send"), py::arg("recv"), py::arg("root"),
            py::call_guard<py::gil_scoped_release>(), "recv[i] = root's send.")
        .def(
            "all_to_all",
            [](tpurt::Communicator &c, const Streams &s, const Tensors &send, const Tensors &recv) {
                c.all_to_all(s, send, recv);
            },
            py::arg("streams"), py::arg("send"), py::arg("recv"),
            py::call_guard<py::gil_scoped_release>(),
            "Block k of recv[i] = block `rank` of rank k's send (n x nranks each).")
        .def(
            "send_recv",
            [](tpurt::Communicator &c, const Streams &s, const Tensors &send, const Tensors &recv,
               const std::vector<std::uint32_t> &send_to,
               const std::vector<std::uint32_t> &recv_from) {
                c.send_recv(s, send, recv, send_to, recv_from);
            },
            py::arg("streams"), py::arg("send"), py::arg("recv"), py::arg("send_to"),
            py::arg("recv_from"), py::call_guard<py::gil_scoped_release>(),
            "Local rank i sends send[i] to ring neighbour send_to[i] and receives recv[i] from "
            "recv_from[i] (Communicator.none: not).")
        .def(
            "async_error",
            [](const tpurt::Communicator &c) -> py::object {
                if (std::exception_ptr e = c.async_error()) {
                    try {
                        std::rethrow_exception(e);
                    } catch (const std::exception &x) {
                        return py::str(x.what());
                    }
                }
                return py::none();
            },
            "The message of the first error a collective ended with, or None.")
        .def("abort", &tpurt::Communicator::abort, py::call_guard<py::gil_scoped_release>(),
             "Fails the communicator: its running collectives end, later ones raise.")
        .def_readonly_static("none", &tpurt::Communicator::none, "No peer, in send_recv().");
}

} // namespace tpurt_python
