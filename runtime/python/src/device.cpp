// SPDX-License-Identifier: MIT
// device.cpp - tpurt.DType, tpurt.DeviceInfo, tpurt.DeviceCounters, tpurt.RuntimeStats and
// tpurt.Device: cards behind tpu.ko (/dev/accel/accelN) and in-process cards (the engine linked
// into the extension), alone or joined by a fabric.
#include "bindings.hpp"

#include <pybind11/stl.h>

#include <tpurt/device.hpp>

#include <string>

namespace tpurt_python {

py::dtype numpy_dtype(tpurt::DType type) {
    switch (type) {
    case tpurt::DType::Int8:
        return py::dtype::of<std::int8_t>();
    case tpurt::DType::Bf16:
        return py::dtype::of<std::uint16_t>();
    case tpurt::DType::Int32:
        return py::dtype::of<std::int32_t>();
    case tpurt::DType::Fp32:
        return py::dtype::of<float>();
    }
    throw py::value_error("unknown dtype");
}

void bind_device(py::module_ &m) {
    py::enum_<tpurt::DType>(m, "DType", "The card's element types.")
        .value("int8", tpurt::DType::Int8, "8-bit signed integer (matmul input, exact)")
        .value("bf16", tpurt::DType::Bf16, "bfloat16 (numpy: float32 values or uint16 bits)")
        .value("int32", tpurt::DType::Int32, "32-bit signed integer (int8 matmul result)")
        .value("fp32", tpurt::DType::Fp32, "IEEE binary32")
        .def_property_readonly(
            "itemsize", [](tpurt::DType t) { return tpurt::element_size(t); },
            "Bytes per element.");

    py::class_<tpurt::DeviceInfo>(m, "DeviceInfo", "What a card is (Device.info, Device.list()).")
        .def_readonly("path", &tpurt::DeviceInfo::path,
                      "/dev/accel/accelN (or the in-process "
                      "card's name)")
        .def_readonly("minor", &tpurt::DeviceInfo::minor, "N of accelN")
        .def_readonly("pci_slot", &tpurt::DeviceInfo::pci_slot, "e.g. 0000:00:03.0, or ''")
        .def_readonly("numa_node", &tpurt::DeviceInfo::numa_node, "-1 if unknown")
        .def_readonly("caps", &tpurt::DeviceInfo::caps, "TPU_CAP_* bits")
        .def_readonly("clock_mhz", &tpurt::DeviceInfo::clock_mhz, "the modelled clock")
        .def_property_readonly(
            "spec_version",
            [](const tpurt::DeviceInfo &i) {
                return std::to_string(i.spec_major()) + "." + std::to_string(i.spec_minor());
            },
            "The card's spec version, 'major.minor'.")
        .def_property_readonly(
            "mxu_rows", [](const tpurt::DeviceInfo &i) { return i.limits.mxu_rows; },
            "Rows of the systolic array (max K of a weight tile).")
        .def_property_readonly(
            "mxu_cols", [](const tpurt::DeviceInfo &i) { return i.limits.mxu_cols; },
            "Columns of the systolic array.")
        .def_property_readonly(
            "ub_bytes", [](const tpurt::DeviceInfo &i) { return i.limits.ub_bytes; },
            "Unified buffer bytes.")
        .def_property_readonly(
            "acc_bytes", [](const tpurt::DeviceInfo &i) { return i.limits.acc_bytes; },
            "Accumulator memory bytes.")
        .def_property_readonly(
            "fabric",
            [](const tpurt::DeviceInfo &i) -> py::object {
                if (!i.ici.on_fabric())
                    return py::none();
                py::dict d;
                d["x"] = i.ici.x;
                d["y"] = i.ici.y;
                d["dim_x"] = i.ici.dim_x;
                d["dim_y"] = i.ici.dim_y;
                d["ports"] = i.ici.ports;
                d["link_gbps"] = i.ici.link_gbps;
                d["hop_ns"] = i.ici.hop_ns;
                d["y_link_gbps"] = i.ici.y_link_gbps;
                d["y_hop_ns"] = i.ici.y_hop_ns;
                return d;
            },
            "The card's place on an inter-chip fabric as a dict (x, y, dim_x, dim_y, ports, "
            "link_gbps, hop_ns, y_link_gbps, y_hop_ns: the y links' figures), or None.")
        .def("supports", &tpurt::DeviceInfo::supports, py::arg("dtype"),
             "Whether the card multiplies matrices of this input type.")
        .def("__repr__", [](const tpurt::DeviceInfo &i) {
            return "<tpurt.DeviceInfo " + i.path + ", " + std::to_string(i.limits.mxu_rows) + "x" +
                   std::to_string(i.limits.mxu_cols) + " array, spec " +
                   std::to_string(i.spec_major()) + "." + std::to_string(i.spec_minor()) + ">";
        });

    py::class_<tpurt::DeviceCounters>(m, "DeviceCounters",
                                      "A card's cumulative performance counters.")
        .def_readonly("cycles", &tpurt::DeviceCounters::cycles, "Modelled cycles of all jobs.")
        .def_readonly("macs", &tpurt::DeviceCounters::macs, "Multiply-accumulates of all jobs.")
        .def_readonly("jobs_done", &tpurt::DeviceCounters::jobs_done, "Jobs that ended well.")
        .def_readonly("jobs_failed", &tpurt::DeviceCounters::jobs_failed,
                      "Jobs that ended with an error.");

    py::class_<tpurt::RuntimeStats>(m, "RuntimeStats", "The runtime's bookkeeping for a device.")
        .def_readonly("executables_cached", &tpurt::RuntimeStats::executables_cached,
                      "Compiled ops kept for reuse.")
        .def_readonly("compilations", &tpurt::RuntimeStats::compilations,
                      "Ops compiled so far (a cache miss each).")
        .def_readonly("program_buffers_created", &tpurt::RuntimeStats::program_buffers_created,
                      "Buffer objects made for jobs' programs.")
        .def_readonly("staging_buffers_created", &tpurt::RuntimeStats::staging_buffers_created,
                      "Buffer objects made for staging host arrays.")
        .def_readonly("staging_bytes_cached", &tpurt::RuntimeStats::staging_bytes_cached,
                      "Idle staging bytes kept for reuse.");

    py::class_<tpurt::Device>(
        m, "Device",
        "A TPU card: behind tpu.ko (Device.open(), /dev/accel/accelN) or the card's engine in this "
        "process (Device.open_in_process(), no VM needed). Copies refer to the same card.")
        .def_static("list", &tpurt::Device::list,
                    "Every card behind tpu.ko this process can open, in /dev/accel order.")
        .def_static("open", &tpurt::Device::open, py::arg("index") = 0,
                    "Opens the index-th card behind tpu.ko; raises tpurt.Error (NoDevice) if there "
                    "is none, saying what to do.")
        .def_static("open_path", &tpurt::Device::open_path, py::arg("path"),
                    "Opens a device node, e.g. '/dev/accel/accel1'.")
        .def_static(
            "open_in_process",
            [](std::uint32_t mxu_rows, std::uint32_t mxu_cols, std::uint32_t threads,
               bool cycle_accurate) {
                tpurt::InProcessConfig c;
                c.mxu_rows = mxu_rows;
                c.mxu_cols = mxu_cols;
                c.threads = threads;
                c.cycle_accurate = cycle_accurate;
                return tpurt::Device::open_in_process(c);
            },
            py::arg("mxu_rows") = 128, py::arg("mxu_cols") = 128, py::arg("threads") = 0,
            py::arg("cycle_accurate") = false,
            "The card's engine run inside this process (the QEMU card's defaults; threads 0: one "
            "per host CPU): the same arithmetic, statuses and statistics as a card behind the "
            "driver. Jobs run on the submitting thread.")
        .def_static(
            "open_in_process_fabric",
            [](std::uint32_t dim_x, std::uint32_t dim_y, bool torus, std::uint32_t threads) {
                tpurt::FabricConfig f;
                f.torus = torus;
                f.dim_x = dim_x;
                f.dim_y = torus ? dim_y : 1;
                tpurt::InProcessConfig c;
                c.threads = threads;
                return tpurt::Device::open_in_process_fabric(f, c);
            },
            py::arg("dim_x") = 2, py::arg("dim_y") = 1, py::arg("torus") = false,
            py::arg("threads") = 1,
            "dim_x (a ring) or dim_x x dim_y (torus=True) in-process cards joined by a fabric's "
            "links, as a list: card i at x = i % dim_x, y = i // dim_x. For Communicator.")
        .def_property_readonly("info", &tpurt::Device::info, "The card's DeviceInfo.")
        .def("counters", &tpurt::Device::counters, "The card's DeviceCounters now.")
        .def("runtime_stats", &tpurt::Device::runtime_stats,
             "The runtime's RuntimeStats for this card (executables cached, compilations, ...).")
        .def("set_link", &tpurt::Device::set_link, py::arg("port"), py::arg("up"),
             "Takes the link on `port` of an in-process card on a fabric down or up again.")
        .def("abort_running_job", &tpurt::Device::abort_running_job,
             "Stops an in-process card's running job (True); False behind tpu.ko.")
        .def("__repr__",
             [](const tpurt::Device &d) { return "<tpurt.Device " + d.info().path + ">"; });
}

} // namespace tpurt_python
