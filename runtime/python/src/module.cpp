// SPDX-License-Identifier: MIT
// module.cpp - the `tpurt._tpurt` extension module: its docstring and the order its parts are
// bound in (errors first, so that every later part's exceptions translate).
#include "bindings.hpp"

#include <tpurt/card/job.hpp>

namespace tpurt_python {

std::chrono::nanoseconds timeout_of(const py::object &seconds) {
    if (seconds.is_none())
        return tpurt::Job::default_timeout;
    const double s = seconds.cast<double>();
    if (!(s >= 0))
        throw py::value_error("a timeout is a number of seconds >= 0");
    return std::chrono::nanoseconds(static_cast<std::int64_t>(s * 1e9));
}

} // namespace tpurt_python

PYBIND11_MODULE(_tpurt, m) {
    m.doc() = "libtpurt, the TPU runtime, for Python: devices, tensors (numpy), ops, streams and "
              "events, captured graphs, profiling, collectives and training on the card. Import "
              "the package `tpurt`, not this module.";
    using namespace tpurt_python;
    bind_errors(m);
    bind_device(m);
    bind_tensor(m);
    bind_stream(m);
    bind_graph(m);
    bind_ops(m);
    bind_profile(m);
    bind_collectives(m);
    bind_datasets(m);
    bind_training(m);
    bind_compiled_model(m);
}
