# SPDX-License-Identifier: MIT
# The training API on scikit-learn's digits (small, seconds): the data set as numpy views, the
# MLP, a small CNN and a model spec (5x5 kernels, a residual block) trained on the card lower
# their loss, logits() agrees with evaluate(), a checkpoint is written, bad options and specs
# raise ValueError saying what is wrong.
import numpy as np
import pytest

import tpurt


@pytest.fixture(scope="module")
def digits():
    return tpurt.load_dataset("digits")


def test_dataset_views(digits):
    train, test = digits
    assert train.count + test.count == 1797 and len(train) == train.count
    assert train.features.shape == (train.count, 1, 8, 8) and train.labels.shape == (train.count,)
    assert abs(float(train.features.mean())) < 1e-3 and test.mean == train.mean
    assert not train.features.flags.writeable


@pytest.mark.parametrize("model", ["mlp", "cnn", "cnn-8x8x1-c8k5-res-d32-10"])
def test_training_lowers_the_loss(card, digits, model, tmp_path):
    train, test = digits
    shape = {} if model.startswith("cnn-") else {"filters": [8, 16], "hidden": [32]}
    t = tpurt.Trainer(card, train, model=model, optimizer="adam", lr=3e-3, batch=32, epochs=3,
                      precision="fp32", **shape)
    assert t.name == model if model.startswith("cnn-") else t.name.startswith(model + "-")
    before = t.evaluate(test)
    steps = []
    for _ in range(3):
        t.train_epoch(lambda step, loss, acc, lr: steps.append(step), every=10)
    loss, accuracy = t.evaluate(test)
    assert loss < before[0] and accuracy > 0.8
    assert t.epochs_done == 3 and steps == list(range(10, t.steps_done + 1, 10))
    logits = t.logits(test.features)
    assert logits.shape == (test.count, 10)
    assert np.isclose((logits.argmax(axis=1) == test.labels).mean(), accuracy)
    t.save(str(tmp_path / "model.tpuckpt"))
    assert (tmp_path / "model.tpuckpt").stat().st_size > 1000


def test_bad_options(card, digits):
    with pytest.raises(ValueError, match='"transformer": a model spec starts with mlp- or cnn-'):
        tpurt.Trainer(card, digits[0], model="transformer")
    with pytest.raises(ValueError, match="a model spec says its layers itself"):
        tpurt.Trainer(card, digits[0], model="cnn-8x8x1-c8-d32-10", filters=[8])
    with pytest.raises(ValueError, match="takes inputs of 28x28x1, digits's are 8x8x1"):
        tpurt.Trainer(card, digits[0], model="cnn-28x28x1-c8-d32-10")
    with pytest.raises(ValueError, match="adam or sgd"):
        tpurt.Trainer(card, digits[0], optimizer="lbfgs")


def test_a_loaded_checkpoint_goes_on_as_without_the_stop(card, digits, tmp_path):
    train, test = digits

    def trainer():
        return tpurt.Trainer(card, train, model="cnn", filters=[8, 16], hidden=[32], lr=3e-3,
                             batch=32, epochs=2, lr_schedule="cosine")

    whole = trainer()
    whole.train_epoch()
    whole.save(str(tmp_path / "epoch1.tpuckpt"))
    second = whole.train_epoch()
    resumed = trainer()
    resumed.load(str(tmp_path / "epoch1.tpuckpt"))
    assert resumed.epochs_done == 1 and resumed.steps_done == whole.steps_done // 2
    assert resumed.train_epoch() == second  # bit for bit: the same batches, weights and state
    assert resumed.evaluate(test) == whole.evaluate(test)
    other = tpurt.Trainer(card, train, model="mlp")
    with pytest.raises(tpurt.Error, match="holds model cnn-8x8x1-c8-c16-d32-10, not mlp"):
        other.load(str(tmp_path / "epoch1.tpuckpt"))
