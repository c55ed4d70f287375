// SPDX-License-Identifier: MIT
// csv.hpp - numeric CSV tables (gzipped or not): every line the same number of comma-separated
// numbers, as scikit-learn's bundled data sets store them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tpu_data {

struct CsvTable {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::vector<float> values; // rows x cols, row-major

    float at(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
};

// Reads a table of numbers. Throws DataError naming the file and the line for a field that is
// not a number, a line with another number of fields than the first, or a file with no rows.
CsvTable read_csv_numbers(const std::string &path);

// Parses CSV text already in memory; `path` only names it in errors.
CsvTable parse_csv_numbers(const std::string &text, const std::string &path);

} // namespace tpu_data
