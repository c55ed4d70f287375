// SPDX-License-Identifier: MIT
// graph.cpp - tpurt.Graph: the ops captured on a stream (Stream.begin_capture() ...
// end_capture()) joined into few jobs, replayed with one patch pass each; parameters are tensors
// the captured ops read that a replay writes first.
#include "tensor.hpp"

#include <tpurt/graph.hpp>
#include <tpurt/stream.hpp>

namespace tpurt_python {

void bind_graph(py::module_ &m) {
    py::class_<tpurt::Graph>(
        m, "Graph",
        "Ops captured on a stream, replayed as few jobs (Stream.end_capture()). Between replays "
        "the captured tensors' contents may change; their shapes and the ops stay.")
        .def_property_readonly("name", &tpurt::Graph::name, "The name given to end_capture().")
        .def_property_readonly("launch_count", &tpurt::Graph::launch_count, "Ops captured.")
        .def_property_readonly("eager_job_count", &tpurt::Graph::eager_job_count,
                               "Jobs the same ops submit one by one.")
        .def_property_readonly("job_count", &tpurt::Graph::job_count, "Jobs one replay submits.")
        .def_property_readonly("instruction_count", &tpurt::Graph::instruction_count,
                               "Instructions of one replay.")
        .def("add_parameter", &tpurt::Graph::add_parameter, py::arg("name"), py::arg("slot"),
             "Declares `slot`, a tensor the captured ops read, as the parameter `name`.")
        .def(
            "set_parameter",
            [](tpurt::Graph &g, const std::string &name, const py::array &values,
               tpurt::DType dtype) {
                const std::vector<std::byte> bytes = host_bytes(values, dtype);
                g.set_parameter(name, bytes.data(), bytes.size());
            },
            py::arg("name"), py::arg("values"), py::arg("dtype") = tpurt::DType::Fp32,
            "The value (the slot's size, as `dtype`) the next replay writes into parameter `name` "
            "first.")
        .def("replay", &tpurt::Graph::replay, py::arg("stream"),
             "Queues the captured ops on `stream` (of the card they were captured on).");
}

} // namespace tpurt_python
