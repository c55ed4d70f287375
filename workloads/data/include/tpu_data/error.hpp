// SPDX-License-Identifier: MIT
// error.hpp - DataError, thrown by every data set reader: its message names the file and says
// what is wrong with it (missing, truncated, corrupt, not the expected format).
#pragma once

#include <stdexcept>
#include <string>

namespace tpu_data {

class DataError : public std::runtime_error {
  public:
    DataError(const std::string &path, const std::string &what)
        : std::runtime_error(path + ": " + what) {}
};

} // namespace tpu_data
