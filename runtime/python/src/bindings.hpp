// SPDX-License-Identifier: MIT
// bindings.hpp - the parts of the `tpurt._tpurt` extension, one function per subject (each in
// its own file), called in order by module.cpp, and the helpers several of them share.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <tpurt/types/dtype.hpp>

#include <chrono>
#include <string>

namespace tpurt_python {

namespace py = pybind11;

void bind_errors(py::module_ &m);         // errors.cpp: tpurt.Error, tpurt.JobError
void bind_device(py::module_ &m);         // device.cpp: DType, DeviceInfo, Device
void bind_tensor(py::module_ &m);         // tensor.cpp: Tensor and numpy
void bind_stream(py::module_ &m);         // stream.cpp: Stream, Event
void bind_graph(py::module_ &m);          // graph.cpp: Graph (capture and replay)
void bind_ops(py::module_ &m);            // ops.cpp: the registry's ops, golden matmuls
void bind_profile(py::module_ &m);        // profile.cpp: tpurt.profiler, Profile
void bind_collectives(py::module_ &m);    // collectives.cpp: CommId, Communicator
void bind_datasets(py::module_ &m);       // datasets.cpp: Dataset, load_dataset()
void bind_training(py::module_ &m);       // training.cpp: Trainer
void bind_compiled_model(py::module_ &m); // compiled_model.cpp: .tpumodel files on a card

// A timeout in seconds from Python (None: the runtime's default for jobs).
std::chrono::nanoseconds timeout_of(const py::object &seconds);

// numpy's dtype for a card dtype (bf16: its bit pattern, uint16).
py::dtype numpy_dtype(tpurt::DType type);

} // namespace tpurt_python
