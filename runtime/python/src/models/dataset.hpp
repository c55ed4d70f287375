// SPDX-License-Identifier: MIT
// dataset.hpp - what a tpurt.Dataset holds (datasets.cpp makes them, training.cpp trains on
// them): a data set in memory and the statistics it was standardised with.
#pragma once

#include "bindings.hpp"

#include <tpu_data/dataset.hpp>

namespace tpurt_python {

// A data set and the statistics it was standardised with (its training set's).
struct Data {
    tpu_data::Dataset set;
    tpu_data::Normalization norm;
};

} // namespace tpurt_python
