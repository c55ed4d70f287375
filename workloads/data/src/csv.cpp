// SPDX-License-Identifier: MIT
// csv.cpp - numeric CSV parsing with line-accurate errors.
#include "tpu_data/csv.hpp"

#include "tpu_data/error.hpp"
#include "tpu_data/file_bytes.hpp"

#include <charconv>
#include <string_view>

namespace tpu_data {

namespace {

std::string where(std::size_t line) {
    return "line " + std::to_string(line) + ": ";
}

} // namespace

CsvTable parse_csv_numbers(const std::string &text, const std::string &path) {
    CsvTable table;
    std::size_t line_no = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos)
            end = text.size();
        std::string_view line(text.data() + pos, end - pos);
        pos = end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.empty())
            continue;
        std::size_t fields = 0;
        std::size_t start = 0;
        for (;;) {
            std::size_t comma = line.find(',', start);
            std::string_view field =
                line.substr(start, comma == std::string_view::npos ? line.npos : comma - start);
            float value = 0;
            auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
            if (field.empty() || ec != std::errc() || ptr != field.data() + field.size())
                throw DataError(path, where(line_no) + "field " + std::to_string(fields + 1) +
                                          " '" + std::string(field) + "' is not a number");
            table.values.push_back(value);
            ++fields;
            if (comma == std::string_view::npos)
                break;
            start = comma + 1;
        }
        if (table.rows == 0)
            table.cols = fields;
        else if (fields != table.cols)
            throw DataError(path, where(line_no) + std::to_string(fields) +
                                      " fields, but the first row has " +
                                      std::to_string(table.cols));
        ++table.rows;
    }
    if (table.rows == 0)
        throw DataError(path, "no rows: the file is empty");
    return table;
}

CsvTable read_csv_numbers(const std::string &path) {
    std::vector<std::uint8_t> bytes = read_file_bytes(path);
    return parse_csv_numbers(std::string(bytes.begin(), bytes.end()), path);
}

} // namespace tpu_data
