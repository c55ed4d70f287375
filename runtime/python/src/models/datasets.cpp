// SPDX-License-Identifier: MIT
// datasets.cpp - tpurt.Dataset (a labelled data set in memory, standardised with its training
// set's statistics; features and labels as read-only zero-copy numpy views) and
// tpurt.load_dataset() (Fashion-MNIST or scikit-learn's digits, loaded as tpu-train loads them).
#include "dataset.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "train_common.hpp"

#include <memory>
#include <string>

namespace tpurt_python {

void bind_datasets(py::module_ &m) {
    py::class_<Data, std::shared_ptr<Data>>(
        m, "Dataset",
        "A labelled data set in memory, standardised with its training set's statistics "
        "(load_dataset()).")
        .def_property_readonly(
            "name", [](const Data &d) { return d.set.name; }, "The data set's name and split.")
        .def_property_readonly(
            "count", [](const Data &d) { return d.set.count; }, "The number of samples.")
        .def_property_readonly(
            "sample_shape", [](const Data &d) { return d.set.sample_shape; },
            "A sample's shape, e.g. [1, 28, 28] (channels, rows, columns).")
        .def_property_readonly(
            "class_names", [](const Data &d) { return d.set.class_names; },
            "The name of each class.")
        .def_property_readonly(
            "mean", [](const Data &d) { return d.norm.mean; },
            "The training set's feature mean the features were shifted by.")
        .def_property_readonly(
            "stddev", [](const Data &d) { return d.norm.stddev; },
            "... and its standard deviation they were divided by.")
        .def_property_readonly(
            "features",
            [](py::object self) {
                const Data &d = self.cast<const Data &>();
                std::vector<py::ssize_t> shape{py::ssize_t(d.set.count)};
                for (std::uint32_t s : d.set.sample_shape)
                    shape.push_back(s);
                py::array_t<float> a(shape, d.set.features.data(), self);
                a.attr("setflags")(py::arg("write") = false);
                return a;
            },
            "The standardised samples, [count, *sample_shape] float32 (a read-only view).")
        .def_property_readonly(
            "labels",
            [](py::object self) {
                const Data &d = self.cast<const Data &>();
                py::array_t<std::uint8_t> a({py::ssize_t(d.set.count)}, d.set.labels.data(), self);
                a.attr("setflags")(py::arg("write") = false);
                return a;
            },
            "The class of each sample, [count] uint8 (a read-only view).")
        .def("__len__", [](const Data &d) { return d.set.count; })
        .def("__repr__", [](const Data &d) {
            return "<tpurt.Dataset " + d.set.name + ", " + std::to_string(d.set.count) +
                   " samples>";
        });

    m.def(
        "load_dataset",
        [](const std::string &name, const std::string &data_dir, std::size_t limit) {
            if (name != "fashion-mnist" && name != "digits")
                throw py::value_error("unknown data set '" + name + "': fashion-mnist or digits");
            tpu_train::Options o;
            o.data = name;
            o.data_dir = data_dir;
            o.limit = limit;
            auto train = std::make_shared<Data>(), test = std::make_shared<Data>();
            {
                py::gil_scoped_release release;
                train->norm = tpu_train::load_data(o, train->set, test->set);
            }
            test->norm = train->norm;
            return py::make_tuple(train, test);
        },
        py::arg("name") = "fashion-mnist", py::arg("data_dir") = "", py::arg("limit") = 0,
        "(train, test) Datasets: 'fashion-mnist' (60,000 + 10,000 28x28 images) or 'digits' "
        "(scikit-learn's 8x8 digits, split 5:1), from data_dir (default: $TPU_DATASETS, else "
        "$TPU_CACHE/datasets, else ~/.cache/tpu-stack/datasets, where tools/fetch-datasets.sh "
        "puts them, else /usr/share/tpu-stack/datasets, where the package tpu-common links "
        "Debian's data-set packages), both standardised with the training set's statistics; "
        "limit > 0 keeps the first `limit` training samples. Raises tpurt.Error naming a missing "
        "or malformed file.");
}

} // namespace tpurt_python
