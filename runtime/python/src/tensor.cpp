// SPDX-License-Identifier: MIT
// tensor.cpp - tpurt.Tensor: a view over a card buffer, with numpy in and out. Card buffers are
// mapped into the process, so Tensor.numpy() of an int8, int32 or fp32 tensor is a zero-copy
// numpy view of the card's memory (any strides; the view keeps the buffer alive) and so is the
// buffer protocol (numpy.asarray(t)); a bf16 tensor's numpy() converts to float32 (a copy:
// numpy has no bfloat16), numpy(bits=True) gives the uint16 bit patterns without a copy. Into
// the card, Tensor.from_numpy() and copy_from() copy once into the mapped buffer (the card
// reaches only its own buffers): a C-contiguous array of the tensor's type is one memcpy.
#include "tensor.hpp"

#include <pybind11/stl.h>

#include <tpurt/error.hpp>
#include <tpurt/types/bf16.hpp>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>

namespace tpurt_python {

namespace {

std::string shape_text(const std::vector<std::size_t> &shape) {
    std::ostringstream s;
    s << '[';
    for (std::size_t i = 0; i < shape.size(); ++i)
        s << (i ? ", " : "") << shape[i];
    s << ']';
    return s.str();
}

template <typename T> std::vector<std::byte> contiguous_bytes(const py::array &array) {
    auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(array);
    if (!a)
        throw py::error_already_set();
    std::vector<std::byte> out(static_cast<std::size_t>(a.nbytes()));
    if (!out.empty())
        std::memcpy(out.data(), a.data(), out.size());
    return out;
}

// A numpy view of `t`'s elements in the mapped buffer, as numpy dtype `dt`; the capsule keeps
// the buffer alive.
py::array view_of(const tpurt::Tensor &t, const py::dtype &dt) {
    const std::size_t item = tpurt::element_size(t.dtype());
    std::vector<py::ssize_t> shape, strides;
    bool repeats = false;
    for (std::size_t i = 0; i < t.rank(); ++i) {
        shape.push_back(static_cast<py::ssize_t>(t.shape()[i]));
        strides.push_back(static_cast<py::ssize_t>(t.strides()[i] * item));
        repeats = repeats || (t.strides()[i] == 0 && t.shape()[i] > 1);
    }
    auto *keep = new std::shared_ptr<tpurt::Buffer>(t.storage());
    py::capsule base(keep,
                     [](void *p) { delete static_cast<std::shared_ptr<tpurt::Buffer> *>(p); });
    auto *first = static_cast<std::byte *>(t.storage()->data()) + t.layout().offset_bytes();
    py::array a(dt, shape, strides, first, base);
    if (repeats) // a zero stride: writing would hit one element several times
        a.attr("setflags")(py::arg("write") = false);
    return a;
}

py::array to_numpy(const tpurt::Tensor &t, bool bits) {
    if (t.dtype() != tpurt::DType::Bf16 || bits)
        return view_of(t, numpy_dtype(t.dtype()));
    py::array_t<float> out(std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
    const std::vector<tpurt::Bf16> values = t.to_vector<tpurt::Bf16>();
    float *dst = out.mutable_data();
    for (std::size_t i = 0; i < values.size(); ++i)
        dst[i] = values[i].to_float();
    return out;
}

void copy_from(tpurt::Tensor &t, const py::array &array) {
    if (shape_of(array) != t.shape())
        throw tpurt::Error(tpurt::ErrorCode::InvalidArgument,
                           "Tensor.copy_from: the array's shape " + shape_text(shape_of(array)) +
                               " is not the tensor's " + shape_text(t.shape()));
    const std::vector<std::byte> bytes = host_bytes(array, t.dtype());
    t.copy_from_host(bytes.data(), bytes.size());
}

} // namespace

std::vector<std::size_t> shape_of(const py::array &array) {
    return std::vector<std::size_t>(array.shape(), array.shape() + array.ndim());
}

tpurt::DType dtype_of_array(const py::array &array) {
    const py::dtype dt = array.dtype();
    if (dt.is(py::dtype::of<float>()) || dt.equal(py::dtype::of<float>()))
        return tpurt::DType::Fp32;
    if (dt.equal(py::dtype::of<std::int8_t>()))
        return tpurt::DType::Int8;
    if (dt.equal(py::dtype::of<std::int32_t>()))
        return tpurt::DType::Int32;
    throw py::value_error("numpy dtype " + std::string(py::str(static_cast<py::handle>(dt))) +
                          " has no card type: pass dtype=tpurt.fp32, bf16, int8 or int32, or "
                          "convert the array (e.g. astype(numpy.float32))");
}

std::vector<std::byte> host_bytes(const py::array &array, tpurt::DType type) {
    switch (type) {
    case tpurt::DType::Int8:
        return contiguous_bytes<std::int8_t>(array);
    case tpurt::DType::Int32:
        return contiguous_bytes<std::int32_t>(array);
    case tpurt::DType::Fp32:
        return contiguous_bytes<float>(array);
    case tpurt::DType::Bf16:
        break;
    }
    if (array.dtype().equal(py::dtype::of<std::uint16_t>())) // bit patterns as they are
        return contiguous_bytes<std::uint16_t>(array);
    const std::vector<std::byte> f = contiguous_bytes<float>(array);
    std::vector<std::byte> out(f.size() / 2);
    for (std::size_t i = 0; i < f.size() / 4; ++i) {
        float v;
        std::memcpy(&v, f.data() + 4 * i, 4);
        const tpurt::Bf16 b = tpurt::Bf16::from_float(v);
        std::memcpy(out.data() + 2 * i, &b.bits, 2);
    }
    return out;
}

void bind_tensor(py::module_ &m) {
    py::class_<tpurt::Tensor>(
        m, "Tensor", py::buffer_protocol(),
        "A tensor on a card: dtype, shape and strides (in elements) over a card buffer that its "
        "views share. numpy(): a zero-copy view for int8, int32 and fp32 (read it after the "
        "stream that writes it is synchronized), a float32 copy for bf16.")
        .def_static(
            "empty",
            [](tpurt::Device &device, tpurt::DType dtype, std::vector<std::size_t> shape) {
                return tpurt::Tensor::empty(device, dtype, std::move(shape));
            },
            py::arg("device"), py::arg("dtype"), py::arg("shape"),
            "A new, densely packed tensor of zeros on `device`.")
        .def_static(
            "from_numpy",
            [](tpurt::Device &device, const py::array &array, std::optional<tpurt::DType> dtype) {
                const tpurt::DType type = dtype ? *dtype : dtype_of_array(array);
                tpurt::Tensor t = tpurt::Tensor::empty(device, type, shape_of(array));
                copy_from(t, array);
                return t;
            },
            py::arg("device"), py::arg("array"), py::arg("dtype") = py::none(),
            "A new tensor on `device` holding a copy of `array` (its dtype: float32 -> fp32, int8, "
            "int32; or dtype=, converting as numpy's astype; bf16 from float values rounded to "
            "nearest even, or from uint16 bit patterns).")
        .def("copy_from", &copy_from, py::arg("array"),
             "Copies `array` (the tensor's shape) into the tensor now, following its strides.")
        .def("numpy", &to_numpy, py::arg("bits") = false,
             "The elements as a numpy array: a view of the card's mapped memory for int8, int32 "
             "and fp32 (no copy; it keeps the buffer alive), a float32 copy for bf16 "
             "(bits=True: the uint16 bit patterns, a view).")
        .def_buffer([](tpurt::Tensor &t) {
            if (t.dtype() == tpurt::DType::Bf16)
                throw tpurt::Error(tpurt::ErrorCode::InvalidArgument,
                                   "a bf16 tensor has no buffer format numpy knows: use "
                                   "numpy() (float32) or numpy(bits=True) (uint16)");
            const std::size_t item = tpurt::element_size(t.dtype());
            std::vector<py::ssize_t> shape, strides;
            for (std::size_t i = 0; i < t.rank(); ++i) {
                shape.push_back(static_cast<py::ssize_t>(t.shape()[i]));
                strides.push_back(static_cast<py::ssize_t>(t.strides()[i] * item));
            }
            const std::string format =
                t.dtype() == tpurt::DType::Int8    ? py::format_descriptor<std::int8_t>::format()
                : t.dtype() == tpurt::DType::Int32 ? py::format_descriptor<std::int32_t>::format()
                                                   : py::format_descriptor<float>::format();
            return py::buffer_info(static_cast<std::byte *>(t.buffer().data()) +
                                       t.layout().offset_bytes(),
                                   static_cast<py::ssize_t>(item), format,
                                   static_cast<py::ssize_t>(t.rank()), shape, strides);
        })
        .def_property_readonly("dtype", &tpurt::Tensor::dtype, "The element type (DType).")
        .def_property_readonly(
            "shape", [](const tpurt::Tensor &t) { return py::tuple(py::cast(t.shape())); },
            "The shape, a tuple.")
        .def_property_readonly(
            "strides", [](const tpurt::Tensor &t) { return py::tuple(py::cast(t.strides())); },
            "The strides in elements, a tuple.")
        .def_property_readonly("ndim", &tpurt::Tensor::rank, "The number of dimensions.")
        .def_property_readonly("size", &tpurt::Tensor::element_count, "The number of elements.")
        .def_property_readonly("is_contiguous", &tpurt::Tensor::is_contiguous,
                               "Row-major and densely packed (the offset may be anything).")
        .def_property_readonly("device_addr", &tpurt::Tensor::device_addr,
                               "The card address of the first element.")
        .def("slice", &tpurt::Tensor::slice, py::arg("dim"), py::arg("start"), py::arg("stop"),
             "A view of elements [start, stop) along `dim`.")
        .def("select", &tpurt::Tensor::select, py::arg("dim"), py::arg("index"),
             "A view of one index along `dim`, which it drops.")
        .def("transpose", &tpurt::Tensor::transpose, py::arg("d0"), py::arg("d1"),
             "A view with dimensions d0 and d1 swapped.")
        .def(
            "permute",
            [](const tpurt::Tensor &t, std::vector<std::size_t> order) { return t.permute(order); },
            py::arg("order"), "A view with the dimensions in `order`.")
        .def("reshape", &tpurt::Tensor::reshape, py::arg("shape"),
             "A view of a contiguous tensor with another shape of as many elements.")
        .def("__repr__", [](const tpurt::Tensor &t) {
            return std::string("<tpurt.Tensor ") + tpurt::dtype_name(t.dtype()) + " " +
                   shape_text(t.shape()) + ">";
        });
}

} // namespace tpurt_python
