// SPDX-License-Identifier: MIT
// dataset.hpp - a labelled data set in memory (samples as fp32 features, one class label each),
// the loaders of the real data sets the workloads use, and their normalisation.
//   Fashion-MNIST (Debian's dataset-fashion-mnist): 60,000 train + 10,000 test 28x28 images.
//   digits (scikit-learn's digits.csv.gz in python3-sklearn): 1,797 8x8 images of digits.
// tools/fetch-datasets.sh puts both under $TPU_CACHE/datasets (see datasets_dir()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu_data {

struct Dataset {
    std::string name;
    std::vector<std::uint32_t> sample_shape; // e.g. {28, 28}: one channel, rows, columns
    std::size_t count = 0;
    std::vector<float> features;      // count x sample_size(), row-major
    std::vector<std::uint8_t> labels; // count, each < class_names.size()
    std::vector<std::string> class_names;

    std::size_t sample_size() const;
    std::size_t classes() const { return class_names.size(); }
    const float *sample(std::size_t i) const { return features.data() + i * sample_size(); }
};

enum class Split { train, test };

// Where the stack's package tpu-common links Debian's data-set packages (dataset-fashion-mnist,
// python3-sklearn) in the layout datasets_dir() names, on a system with the stack installed.
inline constexpr const char *installed_datasets = "/usr/share/tpu-stack/datasets";

// The directory of the data sets: $TPU_DATASETS if set, else $TPU_CACHE/datasets, else
// $HOME/.cache/tpu-stack/datasets (where tools/fetch-datasets.sh puts them) if it exists, else
// installed_datasets if that exists, else $HOME/.cache/tpu-stack/datasets.
std::string datasets_dir();

// Fashion-MNIST from `dir` (holding {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]), pixels
// scaled to [0, 1]. Throws DataError naming the file for a missing or malformed file, images that
// are not 28x28, image and label counts that differ, or a label outside 0..9.
Dataset load_fashion_mnist(const std::string &dir, Split split);

// scikit-learn's digits from `dir` (holding digits.csv.gz: 64 pixel values 0..16, then the label),
// pixels scaled to [0, 1]. Throws DataError as above.
Dataset load_digits(const std::string &dir);

// Samples [begin, end) of `d` as a data set of their own (e.g. a held-out split, or a subset).
Dataset slice(const Dataset &d, std::size_t begin, std::size_t end);

// Per-feature-set standardisation: x' = (x - mean) / stddev, with statistics taken over all
// features of a training set and applied unchanged to its test set.
struct Normalization {
    float mean = 0.0f;
    float stddev = 1.0f;
};
Normalization compute_normalization(const Dataset &train);
void normalize(Dataset &data, const Normalization &n);

} // namespace tpu_data
