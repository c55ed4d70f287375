// SPDX-License-Identifier: MIT
// catch_main.cpp - the Catch2 main() shared by the guest test binaries.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
