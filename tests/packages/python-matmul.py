# SPDX-License-Identifier: MIT
# python-matmul.py - run by install-check.sh where python3-tpurt is installed: an int8 matmul on
# an in-process card (no driver needed) equals numpy's, exactly.
import numpy as np
import tpurt

card = tpurt.Device.open_in_process()
a = np.arange(-24, 24, dtype=np.int8).reshape(6, 8)
b = np.arange(-20, 20, dtype=np.int8).reshape(8, 5)
c = tpurt.matmul(card, a, b)
want = a.astype(np.int32) @ b.astype(np.int32)
assert np.array_equal(c, want), f"card {c} != numpy {want}"
print("python3-tpurt: an int8 matmul on the in-process card equals numpy's")
