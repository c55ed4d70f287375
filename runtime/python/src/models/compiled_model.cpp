// SPDX-License-Identifier: MIT
// compiled_model.cpp - tpurt.CompiledModel: a .tpumodel file (an ONNX model compiled by
// tpu-compile, docs/tpumodel.md) loaded on a card by the compiler's executor
// (tpumodel::card::Executor: constants uploaded once, card nodes prepared once, CPU nodes in
// between) and run on numpy arrays, one per graph input in ONNX's order; the outputs come back
// as numpy arrays. A malformed file or a node the card refuses raises tpurt.Error.
#include "bindings.hpp"

#include <pybind11/stl.h>

#include <tpumodel/card_executor.hpp>
#include <tpumodel/file.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tpurt_python {

namespace {

py::dtype numpy_dtype(tpumodel::DType t) {
    switch (t) {
    case tpumodel::DType::Float:
        return py::dtype::of<float>();
    case tpumodel::DType::Uint8:
        return py::dtype::of<std::uint8_t>();
    case tpumodel::DType::Int8:
        return py::dtype::of<std::int8_t>();
    case tpumodel::DType::Int32:
        return py::dtype::of<std::int32_t>();
    case tpumodel::DType::Int64:
        return py::dtype::of<std::int64_t>();
    case tpumodel::DType::Bool:
        return py::dtype::of<bool>();
    case tpumodel::DType::Bfloat16:
        return py::dtype::of<std::uint16_t>();
    }
    throw py::value_error("unknown tpumodel dtype");
}

// (name, shape, numpy dtype) of the model's tensors `ids`.
py::list describe(const tpumodel::Model &m, const std::vector<std::uint32_t> &ids) {
    py::list out;
    for (std::uint32_t id : ids) {
        const tpumodel::Tensor &t = m.tensors[id];
        out.append(py::make_tuple(t.name, py::tuple(py::cast(t.shape)), numpy_dtype(t.dtype)));
    }
    return out;
}

// A model and its executor on a card (which the executor refers to, so it is kept here).
struct CompiledModel {
    CompiledModel(tpurt::Device d, const std::string &path)
        : device(std::move(d)), executor(device, tpumodel::load(path)) {}

    std::vector<py::array> run(const std::vector<py::array> &arrays) {
        const tpumodel::Model &m = executor.model();
        if (arrays.size() != m.inputs.size())
            throw py::value_error("the model takes " + std::to_string(m.inputs.size()) +
                                  " inputs, not " + std::to_string(arrays.size()));
        std::vector<tpumodel::Tensor> inputs;
        for (std::size_t i = 0; i < arrays.size(); ++i) {
            const tpumodel::Tensor &spec = m.tensors[m.inputs[i]];
            // In the input's own dtype, C-contiguous (numpy's astype rules).
            py::array a = py::array::ensure(arrays[i].attr("astype")(numpy_dtype(spec.dtype)),
                                            py::array::c_style);
            tpumodel::Tensor t;
            t.name = spec.name;
            t.dtype = spec.dtype;
            t.layout = spec.layout;
            t.shape.assign(a.shape(), a.shape() + a.ndim());
            t.data.resize(static_cast<std::size_t>(a.nbytes()));
            std::memcpy(t.data.data(), a.data(), t.data.size());
            inputs.push_back(std::move(t));
        }
        std::vector<tpumodel::Tensor> outputs;
        {
            py::gil_scoped_release release;
            outputs = executor.run(inputs);
        }
        std::vector<py::array> out;
        for (const tpumodel::Tensor &t : outputs) {
            py::array a(numpy_dtype(t.dtype),
                        std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
            std::memcpy(a.mutable_data(), t.data.data(), t.data.size());
            out.push_back(std::move(a));
        }
        return out;
    }

    tpurt::Device device;
    tpumodel::card::Executor executor;
};

} // namespace

void bind_compiled_model(py::module_ &m) {
    py::class_<CompiledModel>(m, "CompiledModel",
                              "A .tpumodel file (an ONNX model compiled by tpu-compile) loaded "
                              "on a card: run(*arrays) gives its outputs.")
        .def(py::init<tpurt::Device, const std::string &>(), py::arg("device"), py::arg("path"),
             "Loads `path` on `device`: constants uploaded, every card node prepared once. "
             "Raises tpurt.Error naming the file or the node it cannot load.")
        .def(
            "run",
            [](CompiledModel &c, py::args args) {
                return c.run(args.cast<std::vector<py::array>>());
            },
            "The graph's outputs (numpy arrays) for one numpy array per graph input, in ONNX's "
            "order, of its shape (converted to its dtype).")
        .def_property_readonly(
            "inputs",
            [](const CompiledModel &c) {
                return describe(c.executor.model(), c.executor.model().inputs);
            },
            "(name, shape, numpy dtype) of each graph input.")
        .def_property_readonly(
            "outputs",
            [](const CompiledModel &c) {
                return describe(c.executor.model(), c.executor.model().outputs);
            },
            "(name, shape, numpy dtype) of each graph output.")
        .def_property_readonly(
            "card_nodes", [](const CompiledModel &c) { return c.executor.card_nodes(); },
            "Nodes run by a card op.")
        .def_property_readonly(
            "cpu_nodes", [](const CompiledModel &c) { return c.executor.cpu_nodes(); },
            "Nodes run on the CPU.");
}

} // namespace tpurt_python
