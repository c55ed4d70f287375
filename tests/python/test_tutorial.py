# SPDX-License-Identifier: MIT
# The Python tutorial of runtime/python/README.md, run as written (on an in-process card when
# the host has none behind tpu.ko): it trains tpu-train's CNN on Fashion-MNIST for one epoch
# and must reach more than 88% on the test set; the top README shows the same code.
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tutorial(readme):
    """The first ```python block after the heading that names the tutorial."""
    text = readme.read_text()
    start = text.index("```python\n", text.index("Tutorial: training"))
    return text[start + len("```python\n"):text.index("```\n", start + 1)]


def test_readmes_show_the_same_tutorial():
    assert tutorial(ROOT / "runtime/python/README.md") == tutorial(ROOT / "README.md")


def test_tutorial_trains_the_cnn_above_88_percent(tmp_path):
    code = tutorial(ROOT / "runtime/python/README.md")
    assert len(code.strip().splitlines()) <= 22
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=1200)
    print(run.stdout, run.stderr)
    assert run.returncode == 0, run.stderr
    accuracy = float(re.search(r"test accuracy (\d+\.\d+)%", run.stdout).group(1))
    assert accuracy > 88.0
    assert (tmp_path / "cnn.tpuckpt").stat().st_size > 100_000
