// SPDX-License-Identifier: MIT
// profile.cpp - tpurt.profiler (start, stop, active, clear, snapshot, write_trace: the
// process-wide profiler of every op the runtime launches) and tpurt.Profile (its op records,
// Chrome trace JSON out and in, the per-op table).
#include "bindings.hpp"

#include <pybind11/stl.h>

#include <tpurt/profile.hpp>

namespace tpurt_python {

void bind_profile(py::module_ &m) {
    py::class_<tpurt::OpRecord>(m, "OpRecord", "One op the profiler recorded.")
        .def_readonly("name", &tpurt::OpRecord::name, "The executable's name")
        .def_readonly("device", &tpurt::OpRecord::device, "N of the card's /dev/accel/accelN")
        .def_readonly("start_us", &tpurt::OpRecord::start_us,
                      "First submission, from the profile's start")
        .def_readonly("wall_us", &tpurt::OpRecord::wall_us,
                      "First submission to the end of the last wait")
        .def_readonly("card_us", &tpurt::OpRecord::card_us, "Modelled card time")
        .def_readonly("cycles", &tpurt::OpRecord::cycles, "Modelled card cycles")
        .def_readonly("macs", &tpurt::OpRecord::macs, "Multiply-accumulates")
        .def_readonly("bytes", &tpurt::OpRecord::bytes, "Host bytes moved by DMA")
        .def_readonly("jobs", &tpurt::OpRecord::jobs, "Jobs the op ran as")
        .def_readonly("utilisation", &tpurt::OpRecord::utilisation,
                      "MACs over the array's peak, 0..1")
        .def("__repr__", [](const tpurt::OpRecord &r) {
            return "<tpurt.OpRecord " + r.name + ", " + std::to_string(r.cycles) + " cycles>";
        });

    py::class_<tpurt::Profile>(m, "Profile", "Recorded ops and host spans.")
        .def_readonly("ops", &tpurt::Profile::ops, "The OpRecords, in order.")
        .def("to_trace_json", &tpurt::Profile::to_trace_json,
             "Chrome trace-event JSON (Perfetto, chrome://tracing, tpu-prof).")
        .def_static("from_trace_json", &tpurt::Profile::from_trace_json, py::arg("text"),
                    "Reads what to_trace_json() wrote; raises tpurt.Error saying what is wrong.")
        .def("table", &tpurt::Profile::table,
             "Per op name: calls, card time, its share, utilisation, MACs, bytes, wall time.");

    py::module_ p = m.def_submodule("profiler", "The process-wide profiler of every op launched.");
    p.def("start", &tpurt::profiler::start, "Records from now on (earlier records are kept).");
    p.def("stop", &tpurt::profiler::stop, "Stops recording.");
    p.def("active", &tpurt::profiler::active, "True while recording.");
    p.def("clear", &tpurt::profiler::clear, "Forgets everything recorded.");
    p.def("snapshot", &tpurt::profiler::snapshot, "The Profile recorded so far.");
    p.def("write_trace", &tpurt::profiler::write_trace, py::arg("path"),
          "Writes snapshot() as Chrome trace JSON to `path`.");
}

} // namespace tpurt_python
