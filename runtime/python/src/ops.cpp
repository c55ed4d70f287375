// SPDX-License-Identifier: MIT
// ops.cpp - every op of the runtime's registry by name (tpurt.ops builds a Python function of
// each from op_list()): run on a Device (blocking, returns the card's Stats) or queued on a
// Stream, or prepared once as an Executable to run or queue many times; and the CPU golden
// matmuls with the card's exact arithmetic, for comparisons.
#include "tensor.hpp"

#include <pybind11/stl.h>

#include <tpurt/golden/reference.hpp>
#include <tpurt/golden/reference_fp32.hpp>
#include <tpurt/ops/matmul.hpp>
#include <tpurt/ops/op_registry.hpp>
#include <tpurt/stream.hpp>

#include <span>
#include <string>
#include <variant>
#include <vector>

namespace tpurt_python {

namespace {

// The op `name` on `operands` (None for an absent optional one) with attributes as text.
tpurt::OpSequence prepare(tpurt::Device &device, const std::string &name,
                          const std::vector<std::optional<tpurt::Tensor>> &operands,
                          const std::map<std::string, std::string> &attributes) {
    std::vector<const tpurt::Tensor *> ptrs;
    for (const auto &t : operands)
        ptrs.push_back(t ? &*t : nullptr);
    std::vector<tpurt::OpAttribute> attrs;
    for (const auto &[k, v] : attributes)
        attrs.push_back({k, v});
    return tpurt::prepare_op(device, name, ptrs, attrs);
}

py::object run_op(std::variant<tpurt::Stream *, tpurt::Device *> target, const std::string &name,
                  const std::vector<std::optional<tpurt::Tensor>> &operands,
                  const std::map<std::string, std::string> &attributes, const py::object &timeout) {
    if (auto *stream = std::get_if<tpurt::Stream *>(&target)) {
        tpurt::OpSequence seq = prepare((*stream)->device(), name, operands, attributes);
        (*stream)->enqueue(std::move(seq));
        return py::none();
    }
    tpurt::Device &device = *std::get<tpurt::Device *>(target);
    const auto t = timeout_of(timeout);
    tpurt::MatmulStats stats;
    {
        py::gil_scoped_release release;
        stats = prepare(device, name, operands, attributes).run(device, t);
    }
    return py::cast(stats);
}

// The golden matmul of numpy matrices a [M, K] and b [K, N] as `type`.
py::array reference(const py::array &a, const py::array &b, tpurt::DType type) {
    if (a.ndim() != 2 || b.ndim() != 2 || a.shape(1) != b.shape(0))
        throw py::value_error("reference_matmul takes matrices a [M, K] and b [K, N]");
    const auto m = static_cast<std::uint32_t>(a.shape(0)),
               k = static_cast<std::uint32_t>(a.shape(1)),
               n = static_cast<std::uint32_t>(b.shape(1));
    const std::vector<std::byte> ab = host_bytes(a, type), bb = host_bytes(b, type);
    const std::vector<py::ssize_t> shape{m, n};
    switch (type) {
    case tpurt::DType::Int8: {
        py::array_t<std::int32_t> c(shape);
        tpurt::reference_matmul(
            std::span(reinterpret_cast<const std::int8_t *>(ab.data()), ab.size()),
            std::span(reinterpret_cast<const std::int8_t *>(bb.data()), bb.size()),
            std::span(c.mutable_data(), std::size_t(m) * n), m, k, n);
        return c;
    }
    case tpurt::DType::Bf16: {
        py::array_t<float> c(shape);
        tpurt::reference_matmul(
            std::span(reinterpret_cast<const tpurt::Bf16 *>(ab.data()), ab.size() / 2),
            std::span(reinterpret_cast<const tpurt::Bf16 *>(bb.data()), bb.size() / 2),
            std::span(c.mutable_data(), std::size_t(m) * n), m, k, n);
        return c;
    }
    case tpurt::DType::Fp32: {
        py::array_t<float> c(shape);
        tpurt::reference_matmul(
            std::span(reinterpret_cast<const float *>(ab.data()), ab.size() / 4),
            std::span(reinterpret_cast<const float *>(bb.data()), bb.size() / 4),
            std::span(c.mutable_data(), std::size_t(m) * n), m, k, n);
        return c;
    }
    case tpurt::DType::Int32:
        break;
    }
    throw py::value_error("reference_matmul takes int8, bf16 or fp32 inputs");
}

} // namespace

void bind_ops(py::module_ &m) {
    py::class_<tpurt::MatmulStats>(m, "Stats", "What the card did for a blocking op.")
        .def_readonly("cycles", &tpurt::MatmulStats::cycles, "Modelled card cycles.")
        .def_readonly("macs", &tpurt::MatmulStats::macs, "Multiply-accumulates.")
        .def_readonly("jobs", &tpurt::MatmulStats::jobs, "Jobs the op ran as.")
        .def_property_readonly(
            "wall_seconds", [](const tpurt::MatmulStats &s) { return s.wall.count() * 1e-9; },
            "Host time from the first submission to the end of the last job.")
        .def(
            "modelled_seconds",
            [](const tpurt::MatmulStats &s, const tpurt::Device &d) {
                return s.modelled_time(d.info()).count() * 1e-9;
            },
            py::arg("device"), "Modelled card time at the card's clock.")
        .def(
            "utilisation",
            [](const tpurt::MatmulStats &s, const tpurt::Device &d) {
                return s.utilisation(d.info());
            },
            py::arg("device"), "Fraction of the matrix unit's peak (0..1).");

    m.def(
        "op_list",
        [] {
            py::list out;
            for (std::size_t i = 0; i < tpurt::op_count(); ++i) {
                const tpurt::OpInfo &info = tpurt::op_info(i);
                py::list operands, attributes;
                for (const tpurt::OpOperand &o : info.operands)
                    operands.append(py::make_tuple(o.name, o.optional));
                for (const char *a : info.attributes)
                    attributes.append(a);
                out.append(
                    py::make_tuple(std::string(info.name), operands, attributes, info.signature()));
            }
            return out;
        },
        "The registered ops: (name, [(operand, optional)], [attribute], signature) each.");
    py::class_<tpurt::OpSequence>(
        m, "Executable",
        "An op checked and compiled once for its tensors (tpurt.ops.prepare()): run it on its "
        "device or queue it on a stream as often as needed; the tensors' contents may change "
        "between runs, their shapes and buffers stay.")
        .def_property_readonly(
            "names",
            [](const tpurt::OpSequence &s) {
                std::vector<std::string> names;
                for (const tpurt::OpLaunch &l : s.launches)
                    names.push_back(l.name());
                return names;
            },
            "The names of its executables, in the order they run (one for most ops).")
        .def(
            "run",
            [](const tpurt::OpSequence &s, tpurt::Device &device, const py::object &timeout) {
                const auto t = timeout_of(timeout);
                py::gil_scoped_release release;
                return s.run(device, t);
            },
            py::arg("device"), py::arg("timeout") = py::none(),
            "Runs it on the device it was prepared for and waits: the card's Stats.")
        .def(
            "queue", [](const tpurt::OpSequence &s, tpurt::Stream &stream) { stream.enqueue(s); },
            py::arg("stream"), "Queues it on a stream of its device; returns at once.");
    m.def("prepare_op", &prepare, py::arg("device"), py::arg("name"), py::arg("operands"),
          py::arg("attributes"),
          "The op `name` on `operands` checked and compiled (or fetched from the device's cache) "
          "as an Executable; raises tpurt.Error as run_op does.");
    m.def("run_op", &run_op, py::arg("target"), py::arg("name"), py::arg("operands"),
          py::arg("attributes"), py::arg("timeout") = py::none(),
          "The op `name` on `operands` (None for an absent optional one) with `attributes` "
          "(text): on a Stream queued (returns None), on a Device run and waited for (returns "
          "Stats). Raises tpurt.Error saying what is wrong with an operand or attribute.");
    m.def("reference_matmul", &reference, py::arg("a"), py::arg("b"), py::arg("dtype"),
          "The CPU golden model's a @ b with the card's exact arithmetic for input type `dtype` "
          "(int8 -> int32, bf16 and fp32 -> float32); the card's result equals it bit for bit.");
}

} // namespace tpurt_python
