// SPDX-License-Identifier: MIT
// main.cpp - Catch2 entry point of the conformance test binaries (host and guest).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
