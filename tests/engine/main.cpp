// SPDX-License-Identifier: MIT
// Catch2 entry point of the engine host tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
