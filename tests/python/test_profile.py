# SPDX-License-Identifier: MIT
# The profiler from Python: ops run while it records come back as OpRecords with the card's
# cycles and MACs, its trace JSON reads back equal, the table names the op.
import numpy as np

import tpurt


def test_profile_of_a_matmul(card, tmp_path):
    tpurt.profiler.clear()
    tpurt.profiler.start()
    assert tpurt.profiler.active()
    tpurt.matmul(card, np.ones((32, 64), dtype=np.int8), np.ones((64, 16), dtype=np.int8))
    tpurt.profiler.stop()
    profile = tpurt.profiler.snapshot()
    matmuls = [r for r in profile.ops if r.name.startswith("matmul")]
    assert len(matmuls) == 1
    assert matmuls[0].macs == 32 * 64 * 16 and matmuls[0].cycles > 0 and matmuls[0].jobs >= 1
    assert "matmul" in profile.table()
    again = tpurt.Profile.from_trace_json(profile.to_trace_json())
    assert [r.name for r in again.ops] == [r.name for r in profile.ops]
    path = tmp_path / "trace.json"
    tpurt.profiler.write_trace(str(path))
    assert "traceEvents" in path.read_text()
    tpurt.profiler.clear()
    assert not tpurt.profiler.snapshot().ops
