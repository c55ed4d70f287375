# SPDX-License-Identifier: MIT
# A compiled model from Python: an MLP trained on the card (digits) and saved, exported to ONNX
# by tpu-export, compiled by tpu-compile into a .tpumodel file, then loaded on the card with
# tpurt.CompiledModel: its logits of raw pixels equal the trainer's of the same samples (to
# fp32 rounding: the exported graph standardises the pixels itself), and a malformed file
# raises tpurt.Error naming it.
import os
import subprocess

import numpy as np
import pytest

import tpurt

TOOLS = ("TPU_EXPORT", "TPU_COMPILE")


@pytest.mark.skipif(not all(t in os.environ for t in TOOLS),
                    reason="needs TPU_EXPORT and TPU_COMPILE (ctest sets them)")
def test_compiled_model_matches_the_trainer(card, tmp_path):
    train, test = tpurt.load_dataset("digits")
    trainer = tpurt.Trainer(card, train, model="mlp", hidden=[32], precision="fp32", batch=32)
    trainer.train_epoch()
    trainer.save(str(tmp_path / "mlp.tpuckpt"))
    subprocess.run([os.environ["TPU_EXPORT"], str(tmp_path / "mlp.tpuckpt"), "-o",
                    str(tmp_path / "mlp.onnx")], check=True)
    subprocess.run([os.environ["TPU_COMPILE"], str(tmp_path / "mlp.onnx"), "--input",
                    "input:16x64", "-o", str(tmp_path / "mlp.tpumodel")], check=True)

    model = tpurt.CompiledModel(card, str(tmp_path / "mlp.tpumodel"))
    assert model.inputs == [("input", (16, 64), np.dtype(np.float32))]
    assert model.outputs[0][1] == (16, 10) and model.card_nodes >= 2
    x = test.features[:16].reshape(16, 64)
    (logits,) = model.run(x * test.stddev + test.mean)  # raw pixels
    np.testing.assert_allclose(logits, trainer.logits(x), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="1 inputs, not 2"):
        model.run(x, x)


def test_malformed_file(card, tmp_path):
    path = tmp_path / "broken.tpumodel"
    path.write_bytes(b"not a model")
    with pytest.raises(tpurt.Error, match="broken.tpumodel") as e:
        tpurt.CompiledModel(card, str(path))
    assert e.value.code == "DataError"
