// SPDX-License-Identifier: MIT
// card_run.hpp - a whole training run on the card, as tpu-train (card_train.cpp: one process,
// --cards N cards) and tpu-train-mpi (tools/pod: one process a card, a RankGroup over MPI) run
// it: their shared options and the run (card_run.cpp).
#pragma once

#include "rank_group.hpp"
#include "train_common.hpp"

#include <CLI/CLI.hpp>

namespace tpu_train {

// The trainers' options (add_options()) and those of training on the card (--precision,
// --profile, --snapshot-steps, ...), but the choice of cards (--card, --cards: tpu-train's).
void add_card_options(CLI::App &app, Options &o);

// Loads the data, trains, evaluates and reports as the options say: on cards o.card ..
// o.card + o.cards - 1 without a group, else on the group's rank's card (o.cards the group's
// size). Returns the exit status; throws on a bad option or a failure.
int run(const Options &o, RankGroup *group = nullptr);

} // namespace tpu_train
