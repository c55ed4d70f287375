// SPDX-License-Identifier: MIT
// stream.cpp - tpurt.Stream (an in-order queue of ops on a card, with capture into a Graph) and
// tpurt.Event (a point of a stream: query, wait, or make another stream wait for it). Waits
// release the GIL.
#include "tensor.hpp"

#include <tpurt/graph.hpp>
#include <tpurt/stream.hpp>

#include <memory>

namespace tpurt_python {

void bind_stream(py::module_ &m) {
    py::class_<tpurt::Event>(m, "Event",
                             "A point of a stream (Stream.record()): every op queued before it.")
        .def("query", &tpurt::Event::query, py::call_guard<py::gil_scoped_release>(),
             "True once every op queued on the stream before the record has ended.")
        .def(
            "wait",
            [](const tpurt::Event &e, const py::object &timeout) {
                const auto t = timeout_of(timeout);
                py::gil_scoped_release release;
                e.wait(t);
            },
            py::arg("timeout") = py::none(),
            "Waits until then (timeout in seconds); raises tpurt.Error (Timeout) or the stream's "
            "first job error (tpurt.JobError naming the op).");

    py::class_<tpurt::Stream>(
        m, "Stream",
        "An in-order queue of ops on a card: ops given a stream return at once; synchronize() "
        "waits and raises the first error of the queued work.")
        .def(py::init([](tpurt::Device &device, int priority) {
                 tpurt::StreamOptions o;
                 o.priority = priority;
                 return std::make_unique<tpurt::Stream>(device, o);
             }),
             py::arg("device"), py::arg("priority") = 0,
             "A stream on `device`; priority 0 (low) to 3 (high).")
        .def_property_readonly(
            "device", [](tpurt::Stream &s) { return s.device(); }, "The stream's Device.")
        .def(
            "synchronize",
            [](tpurt::Stream &s, const py::object &timeout) {
                const auto t = timeout_of(timeout);
                py::gil_scoped_release release;
                s.synchronize(t);
            },
            py::arg("timeout") = py::none(),
            "Waits for everything queued so far (timeout in seconds); raises the first error of "
            "the stream's work.")
        .def("record", &tpurt::Stream::record, "An Event at the stream's current end.")
        .def("wait", &tpurt::Stream::wait, py::arg("event"),
             "Makes the stream's later work wait for `event` (on the card; returns at once).")
        .def_property_readonly("idle", &tpurt::Stream::idle, "True if everything queued has ended.")
        .def(
            "copy_from_host",
            [](tpurt::Stream &s, const tpurt::Tensor &t, const py::array &array) {
                auto bytes = std::make_shared<std::vector<std::byte>>(host_bytes(array, t.dtype()));
                s.enqueue_host("copy_from_host",
                               [target = tpurt::Tensor(t), bytes]() mutable {
                                   target.copy_from_host(bytes->data(), bytes->size());
                               },
                               {t.storage()});
            },
            py::arg("tensor"), py::arg("array"),
            "Queues a copy of `array` into `tensor` in stream order (the array is copied at once, "
            "so it may change after the call).")
        .def("begin_capture", &tpurt::Stream::begin_capture,
             "Records the ops queued from now on instead of running them (see end_capture).")
        .def("end_capture", &tpurt::Stream::end_capture, py::arg("name") = "graph",
             "The ops queued since begin_capture() joined into a Graph to replay.")
        .def_property_readonly("capturing", &tpurt::Stream::capturing,
                               "True between begin_capture() and end_capture().");
}

} // namespace tpurt_python
