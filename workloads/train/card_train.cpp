// SPDX-License-Identifier: MIT
// card_train.cpp - tpu-train: trains the MLP or the CNN on the card, or data-parallel on --cards N
// cards driven by this one process (card_run.hpp; workloads/README.md).
#include "card_run.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

int main(int argc, char **argv) {
    tpu_train::Options o;
    CLI::App app(
        "tpu-train: train the MLP or the CNN on the card (forward, backward and optimiser steps)");
    tpu_train::add_card_options(app, o);
    app.add_option("--card", o.card, "the card to train on (its index in /dev/accel order)")
        ->capture_default_str();
    app.add_option("--cards", o.cards,
                   "train data-parallel on this many cards (--card and those after it, on one "
                   "inter-chip fabric): the model replicated, --batch split over them, the "
                   "gradients all-reduced over the links")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        return tpu_train::run(o);
    } catch (const std::exception &e) {
        std::cerr << "tpu-train: " << e.what() << "\n";
        return 1;
    }
}
