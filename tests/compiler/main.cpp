// SPDX-License-Identifier: MIT
// main.cpp - Catch2's main for the model compiler's host tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
