// SPDX-License-Identifier: MIT
// main.cpp - Catch2 entry point of the runtime host tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
